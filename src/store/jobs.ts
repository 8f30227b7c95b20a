import { and, asc, desc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { Db } from "./db";
import { items, jobs, responses, threads, type StoredError } from "./schema";

export type JobRow = typeof jobs.$inferSelect;
export type NewJob = Pick<JobRow, "id" | "userId" | "source" | "sender" | "conversationId" | "message" | "metadata"> &
  Partial<Pick<JobRow, "callbackUrl" | "callbackStatus">>;

/** Stores a new job, queued; returns what was written (no read-back: this is the webhook's hot path). */
export async function insertJob(db: Db, job: NewJob): Promise<NewJob & Pick<JobRow, "status" | "createdAt">> {
  const row = { ...job, status: "queued" as const, createdAt: new Date().toISOString() };
  await db.insert(jobs).values(row);
  return row;
}

export async function getJob(db: Db, id: string): Promise<JobRow | undefined> {
  return (await db.select().from(jobs).where(eq(jobs.id, id)).limit(1))[0];
}

export async function listJobs(db: Db, userId: string, limit = 100): Promise<JobRow[]> {
  return db.select().from(jobs).where(eq(jobs.userId, userId)).orderBy(desc(jobs.seq)).limit(limit);
}

/** The oldest queued job: jobs run in the order they were accepted. */
export async function nextQueuedJob(db: Db): Promise<JobRow | undefined> {
  return (await db.select().from(jobs).where(eq(jobs.status, "queued")).orderBy(asc(jobs.seq)).limit(1))[0];
}

export async function markRunning(db: Db, job: JobRow): Promise<void> {
  await db
    .update(jobs)
    .set({ status: "running", startedAt: new Date().toISOString(), attempts: job.attempts + 1 })
    .where(eq(jobs.id, job.id));
}

/** Jobs that were running when the process died go back to the queue, ahead of newer ones. */
export async function requeueInterrupted(db: Db): Promise<number> {
  const rows = await db.update(jobs).set({ status: "queued" }).where(eq(jobs.status, "running")).returning({ id: jobs.id });
  return rows.length;
}

/** The thread of an earlier job of the same conversation, if one got that far. */
export async function conversationThread(db: Db, j: Pick<JobRow, "userId" | "sender" | "conversationId">): Promise<string | undefined> {
  const row = (
    await db
      .select({ threadId: jobs.threadId })
      .from(jobs)
      .where(and(eq(jobs.userId, j.userId), eq(jobs.sender, j.sender), eq(jobs.conversationId, j.conversationId), isNotNull(jobs.threadId)))
      .orderBy(desc(jobs.seq))
      .limit(1)
  )[0];
  return row?.threadId ?? undefined;
}

/** The statement that finishes a job; run in the same batch as the turn it ran. */
export function finishJobStatement(
  db: Db,
  id: string,
  outcome: { status: "completed" | "failed" | "queued"; threadId: string | null; responseId: string | null; response: string | null; error: StoredError | null },
) {
  return db
    .update(jobs)
    .set({
      status: outcome.status,
      threadId: outcome.threadId,
      responseId: outcome.responseId,
      response: outcome.response,
      error: outcome.error,
      completedAt: outcome.status === "queued" ? null : new Date().toISOString(),
    })
    .where(eq(jobs.id, id));
}

/**
 * Statements that undo a turn in the batch that commits it: its items and response, and the
 * thread too when the turn created it. For a job cut short by a shutdown, which runs again.
 */
export function discardTurnStatements(db: Db, responseId: string, newThreadId: string | undefined) {
  return [
    db.delete(items).where(eq(items.responseId, responseId)),
    db.delete(responses).where(eq(responses.id, responseId)),
    ...(newThreadId ? [db.delete(threads).where(eq(threads.id, newThreadId))] : []),
  ];
}

/** Where a job's callback stands after an attempt. */
export async function setCallbackState(
  db: Db,
  id: string,
  state: { status: "pending" | "delivered" | "failed"; attempts: number; nextAt: number | null },
): Promise<void> {
  await db
    .update(jobs)
    .set({ callbackStatus: state.status, callbackAttempts: state.attempts, callbackNextAt: state.nextAt })
    .where(eq(jobs.id, id));
}

/** Ended jobs whose callback is still to be delivered (after a restart, for instance). */
export async function pendingCallbacks(db: Db): Promise<Pick<JobRow, "id" | "callbackNextAt">[]> {
  return db
    .select({ id: jobs.id, callbackNextAt: jobs.callbackNextAt })
    .from(jobs)
    .where(and(eq(jobs.callbackStatus, "pending"), inArray(jobs.status, ["completed", "failed"])))
    .orderBy(asc(jobs.seq));
}

/** How many jobs are in each status (the metrics' `service_jobs`). */
export async function countJobsByStatus(db: Db): Promise<{ status: JobRow["status"]; count: number }[]> {
  return db.select({ status: jobs.status, count: sql<number>`count(*)` }).from(jobs).groupBy(jobs.status);
}
