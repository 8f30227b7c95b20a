import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, notInArray, or, sql } from "drizzle-orm";
import { uniqueViolation, type Db } from "./db";
import type { jobs, StoredError } from "./schema";

export type JobRow = typeof jobs.$inferSelect;
export type NewJob = Pick<JobRow, "id" | "userId" | "source" | "sender" | "conversationId" | "message" | "metadata"> &
  Partial<Pick<JobRow, "callbackUrl" | "callbackStatus" | "idempotencyKey" | "requestHash" | "trusted" | "memory">>;

/** How long an idempotency key holds: the same key after that is a new job. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The lane of a job: its user, source, sender and conversation. Lanes run side by side, a lane's jobs in order. */
export const laneOf = (j: Pick<JobRow, "userId" | "source" | "sender" | "conversationId">) =>
  [j.userId, j.source, j.sender, j.conversationId].join("\u001f");

/** A job as stored by insertJob (no read-back: this is the webhook's hot path). */
export type Inserted = NewJob & Pick<JobRow, "status" | "createdAt" | "attempts">;

/** The row a new job becomes; for a batch of the caller's own (a routine's run and its job). */
export function jobValues(job: NewJob): Inserted & { lane: string } {
  return { ...job, lane: laneOf(job), status: "queued", attempts: 0, createdAt: new Date().toISOString() };
}

/**
 * Stores a new job, queued. With an idempotency key, the job of the same source and key
 * stored in the last 24 h is answered instead (`replayed`), in one transaction with the
 * key's expiry, so concurrent requests with one key make one job.
 */
export async function insertJob(db: Db, job: NewJob): Promise<{ job: Inserted | JobRow; replayed: boolean }> {
  const { jobs } = db.t;
  const row = jobValues(job);
  if (!job.idempotencyKey) {
    await db.insert(jobs).values(row);
    return { job: row, replayed: false };
  }
  const key = and(eq(jobs.source, job.source), eq(jobs.idempotencyKey, job.idempotencyKey));
  const cutoff = new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString();
  for (let attempt = 0; ; attempt++) {
    try {
      // a key older than the window is let go first, so the new job may take it
      await db.engine.batch(db, (q) => [q.update(jobs).set({ idempotencyKey: null }).where(and(key, lt(jobs.createdAt, cutoff))), q.insert(jobs).values(row)]);
      return { job: row, replayed: false };
    } catch (e) {
      if (!uniqueViolation(e)) throw e;
      const first = (await db.select().from(jobs).where(key).limit(1))[0];
      // gone in between (expired and taken by nobody): try once more
      if (first || attempt > 0) {
        if (!first) throw e;
        return { job: first, replayed: true };
      }
    }
  }
}

export async function getJob(db: Db, id: string): Promise<JobRow | undefined> {
  const { jobs } = db.t;
  return (await db.select().from(jobs).where(eq(jobs.id, id)).limit(1))[0];
}

export async function getJobs(db: Db, ids: string[]): Promise<JobRow[]> {
  const { jobs } = db.t;
  return ids.length ? db.select().from(jobs).where(inArray(jobs.id, ids)) : [];
}

export async function listJobs(db: Db, userId: string, limit = 100): Promise<JobRow[]> {
  const { jobs } = db.t;
  return db.select().from(jobs).where(eq(jobs.userId, userId)).orderBy(desc(jobs.seq)).limit(limit);
}

/**
 * Takes the oldest job that may run now and marks it running, held by this process for
 * `leaseMs`, in one statement: queued, due (not waiting out a retry delay), and first of its
 * lane, with nothing of its lane running. Replicas claiming at once skip each other's
 * candidate (`FOR UPDATE SKIP LOCKED`); one that is still queued keeps its lane's later jobs back.
 */
export async function claimNextJob(db: Db, leaseMs: number, now = Date.now()): Promise<JobRow | undefined> {
  const { jobs } = db.t;
  const rows = await db
    .update(jobs)
    // the time the claim ran, not when it was asked for: a lane's next job was asked for while
    // its previous one was still finishing, and starts after it (the claim waits on the database)
    .set({ status: "running", startedAt: db.engine.isoNow(), attempts: sql`${jobs.attempts} + 1`, nextAttemptAt: null, leaseUntil: now + leaseMs })
    .where(
      and(
        eq(jobs.status, "queued"),
        eq(
          jobs.seq,
          sql`(SELECT j.seq FROM jobs j
            WHERE j.status = 'queued' AND (j.next_attempt_at IS NULL OR j.next_attempt_at <= ${now})
              AND NOT EXISTS (SELECT 1 FROM jobs e WHERE e.lane = j.lane AND e.seq <> j.seq
                AND (e.status IN ('running', 'waiting') OR (e.status = 'queued' AND e.seq < j.seq)))
            ORDER BY j.seq LIMIT 1 ${db.engine.skipLocked("j")})`,
        ),
      ),
    )
    .returning();
  return rows[0];
}

/** When the earliest job waiting out a retry delay is due (ms since the epoch), if any (only those have a next attempt time). */
export async function nextRetryAt(db: Db): Promise<number | undefined> {
  const { jobs } = db.t;
  const row = (await db.select({ at: sql<number | null>`min(${jobs.nextAttemptAt})` }).from(jobs))[0];
  return row?.at ?? undefined;
}

/**
 * Jobs running in a process that is gone go back to the queue, ahead of newer ones: every
 * running job but `held` (this process's own) when one process has the database; when
 * replicas share it, those whose lease has run out too (their replica stopped renewing it).
 */
export async function requeueAbandoned(db: Db, held: string[], now = Date.now()): Promise<number> {
  const { jobs } = db.t;
  const rows = await db
    .update(jobs)
    .set({ status: "queued", leaseUntil: null })
    .where(
      and(
        eq(jobs.status, "running"),
        held.length ? notInArray(jobs.id, held) : undefined,
        db.engine.shared ? or(isNull(jobs.leaseUntil), lt(jobs.leaseUntil, now)) : undefined,
      ),
    )
    .returning({ id: jobs.id });
  return rows.length;
}

/** This process still runs these jobs: their leases last `leaseMs` from now. */
export async function renewLeases(db: Db, ids: string[], leaseMs: number, now = Date.now()): Promise<void> {
  const { jobs } = db.t;
  if (ids.length) await db.update(jobs).set({ leaseUntil: now + leaseMs }).where(and(inArray(jobs.id, ids), eq(jobs.status, "running")));
}

/**
 * The thread of an earlier job of the same conversation, if one got that far. A conversation
 * is its lane: the same user, source and sender, so one sender never reaches another's thread.
 */
export async function conversationThread(db: Db, j: Pick<JobRow, "userId" | "source" | "sender" | "conversationId">): Promise<string | undefined> {
  const { jobs } = db.t;
  const row = (
    await db
      .select({ threadId: jobs.threadId })
      .from(jobs)
      .where(and(eq(jobs.lane, laneOf(j)), isNotNull(jobs.threadId)))
      .orderBy(desc(jobs.seq))
      .limit(1)
  )[0];
  return row?.threadId ?? undefined;
}

export type JobOutcome =
  | { status: "completed" | "failed"; threadId: string | null; responseId: string | null; response: string | null; error: StoredError | null }
  /** Its turn stopped at a gate a person resolves: the job goes on (and ends) once they have. */
  | { status: "waiting"; threadId: string; responseId: string; waiting: "approval" | "oauth" }
  /** Back to the queue: at once (a shutdown), or after a delay with the error that caused it (a transient failure). */
  | { status: "queued"; threadId: string | null; error: StoredError | null; nextAttemptAt: number | null };

/**
 * Where a job goes after a run of its turn: ended, waiting on a person, or back to the queue.
 * Only from where the caller left it: its run (`attempts`, as its claim counted it) or its
 * wait; a job taken over meanwhile (its lease ran out) or resolved elsewhere is left as it is.
 * False when it was.
 */
export async function finishJob(db: Db, id: string, outcome: JobOutcome, from: { attempts: number } | { status: "waiting" }): Promise<boolean> {
  const { jobs } = db.t;
  const set =
    outcome.status === "queued"
      ? { status: outcome.status, threadId: outcome.threadId, responseId: null, response: null, error: outcome.error, nextAttemptAt: outcome.nextAttemptAt, completedAt: null, waiting: null }
      : outcome.status === "waiting"
        ? { ...outcome, response: null, error: null, completedAt: null }
        : { ...outcome, completedAt: new Date().toISOString(), waiting: null };
  const mine = "attempts" in from ? and(eq(jobs.status, "running"), eq(jobs.attempts, from.attempts)) : eq(jobs.status, "waiting");
  const rows = await db.update(jobs).set({ ...set, leaseUntil: null }).where(and(eq(jobs.id, id), mine)).returning({ id: jobs.id });
  return rows.length > 0;
}

/** The job waiting on a person at this thread's gate, if any. */
export async function jobWaitingOn(db: Db, threadId: string): Promise<string | undefined> {
  const { jobs } = db.t;
  return (await db.select({ id: jobs.id }).from(jobs).where(and(eq(jobs.status, "waiting"), eq(jobs.threadId, threadId))).limit(1))[0]?.id;
}

/** The turn of an earlier run of the job, if one got as far as storing it: a run again goes on with it. */
export async function jobTurn(db: Db, jobId: string): Promise<{ id: string; status: "completed" | "failed" } | undefined> {
  const { responses } = db.t;
  return (
    await db
      .select({ id: responses.id, status: responses.status })
      .from(responses)
      .where(eq(responses.jobId, jobId))
      .orderBy(desc(responses.createdAt), desc(db.engine.insertionOrder(responses)))
      .limit(1)
  )[0];
}

/** The jobs waiting on a person, by the thread their turn stopped on. */
export async function waitingJobs(db: Db): Promise<{ id: string; threadId: string }[]> {
  const { jobs } = db.t;
  const rows = await db.select({ id: jobs.id, threadId: jobs.threadId }).from(jobs).where(eq(jobs.status, "waiting"));
  return rows.flatMap((r) => (r.threadId ? [{ id: r.id, threadId: r.threadId }] : []));
}

/**
 * Queues a failed job again (`POST /jobs/{id}/retry`): its attempts start over, and its
 * callback, if it has one, is delivered again when it ends. Undefined when it is not failed.
 */
export async function retryFailedJob(db: Db, id: string): Promise<JobRow | undefined> {
  const { jobs } = db.t;
  const rows = await db
    .update(jobs)
    .set({
      status: "queued",
      attempts: 0,
      nextAttemptAt: null,
      response: null,
      responseId: null,
      error: null,
      completedAt: null,
      callbackStatus: sql`CASE WHEN ${jobs.callbackUrl} IS NULL THEN NULL ELSE 'pending' END`,
      callbackAttempts: 0,
      callbackNextAt: null,
    })
    .where(and(eq(jobs.id, id), eq(jobs.status, "failed")))
    .returning();
  return rows[0];
}

/** Where a job's callback stands after an attempt. */
export async function setCallbackState(
  db: Db,
  id: string,
  state: { status: "pending" | "delivered" | "failed"; attempts: number; nextAt: number | null },
): Promise<void> {
  const { jobs } = db.t;
  await db
    .update(jobs)
    .set({ callbackStatus: state.status, callbackAttempts: state.attempts, callbackNextAt: state.nextAt })
    .where(eq(jobs.id, id));
}

/** Ended jobs whose callback is still to be delivered (after a restart, for instance). */
export async function pendingCallbacks(db: Db): Promise<Pick<JobRow, "id" | "callbackNextAt">[]> {
  const { jobs } = db.t;
  return db
    .select({ id: jobs.id, callbackNextAt: jobs.callbackNextAt })
    .from(jobs)
    .where(and(eq(jobs.callbackStatus, "pending"), inArray(jobs.status, ["completed", "failed"])))
    .orderBy(asc(jobs.seq));
}

/** How many jobs are in each status (the metrics' `service_jobs`). */
export async function countJobsByStatus(db: Db): Promise<{ status: JobRow["status"]; count: number }[]> {
  const { jobs } = db.t;
  return db.select({ status: jobs.status, count: sql<number>`count(*)` }).from(jobs).groupBy(jobs.status);
}
