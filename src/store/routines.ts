import { and, asc, count, desc, eq, gte, inArray, isNotNull, lte } from "drizzle-orm";
import type { Db, StoreWrite } from "./db";
import { jobValues, type NewJob } from "./jobs";
import type { jobs, routineRuns, routines } from "./schema";

export type RoutineRow = typeof routines.$inferSelect;
export type RunRow = typeof routineRuns.$inferSelect;
/** A run with what its job came to (status, answer, error), for the routines API. */
export type RunWithJob = RunRow & { job: Pick<typeof jobs.$inferSelect, "status" | "response" | "error" | "completedAt"> | null };

export async function insertRoutine(db: Db, row: RoutineRow): Promise<void> {
  const { routines } = db.t;
  await db.insert(routines).values(row);
}

export async function getRoutine(db: Db, id: string): Promise<RoutineRow | undefined> {
  const { routines } = db.t;
  return (await db.select().from(routines).where(eq(routines.id, id)).limit(1))[0];
}

export async function listRoutines(db: Db, userId: string): Promise<RoutineRow[]> {
  const { routines } = db.t;
  return db.select().from(routines).where(eq(routines.userId, userId)).orderBy(asc(routines.createdAt), asc(routines.id));
}

export async function countRoutines(db: Db, userId: string): Promise<number> {
  const { routines } = db.t;
  return (await db.select({ n: count() }).from(routines).where(eq(routines.userId, userId)))[0]?.n ?? 0;
}

/** Every routine that has a tick to come: what the scheduler watches. */
export async function scheduledRoutines(db: Db): Promise<RoutineRow[]> {
  const { routines } = db.t;
  return db.select().from(routines).where(and(eq(routines.enabled, true), isNotNull(routines.nextRunAt)));
}

export async function updateRoutine(db: Db, id: string, patch: Partial<Omit<RoutineRow, "id" | "userId" | "createdAt">>): Promise<RoutineRow | undefined> {
  const { routines } = db.t;
  return (await db.update(routines).set(patch).where(eq(routines.id, id)).returning())[0];
}

/** Deletes a routine and its run records (their jobs stay in the job list). */
export async function deleteRoutine(db: Db, id: string): Promise<void> {
  const { routines } = db.t;
  await db.delete(routines).where(eq(routines.id, id));
}

/** A run to record: its job, when it ran (the job is stored with it). */
export interface NewRun {
  run: RunRow;
  job?: NewJob;
}

/**
 * Records runs and moves the routine's next tick, in one transaction: the runs' unique key
 * (routine, trigger, scheduled time) makes a tick that is already recorded fail the whole
 * batch (a unique violation), so no tick fires twice.
 */
export async function recordRuns(db: Db, runs: NewRun[], routine: { id: string; nextRunAt?: number | null }): Promise<void> {
  const { jobs, routineRuns, routines } = db.t;
  await db.engine.batch(db, (q) => {
    const writes: StoreWrite[] = [];
    for (const r of runs) {
      if (r.job) writes.push(q.insert(jobs).values(jobValues(r.job)));
      writes.push(q.insert(routineRuns).values(r.run));
    }
    if (routine.nextRunAt !== undefined) writes.push(q.update(routines).set({ nextRunAt: routine.nextRunAt }).where(eq(routines.id, routine.id)));
    return writes;
  });
}

/** The scheduled times already recorded for a routine between two times (inclusive). */
export async function recordedTicks(db: Db, routineId: string, from: number, to: number): Promise<Set<number>> {
  const { routineRuns } = db.t;
  const rows = await db
    .select({ at: routineRuns.scheduledFor })
    .from(routineRuns)
    .where(and(eq(routineRuns.routineId, routineId), eq(routineRuns.trigger, "schedule"), gte(routineRuns.scheduledFor, from), lte(routineRuns.scheduledFor, to)));
  return new Set(rows.map((r) => r.at));
}

/** Whether a run of the routine is still queued, running or waiting on a person: a tick now would overlap it. */
export async function runInProgress(db: Db, routineId: string): Promise<boolean> {
  const { jobs, routineRuns } = db.t;
  const row = await db
    .select({ id: routineRuns.id })
    .from(routineRuns)
    .innerJoin(jobs, eq(jobs.id, routineRuns.jobId))
    .where(and(eq(routineRuns.routineId, routineId), inArray(jobs.status, ["queued", "running", "waiting"])))
    .limit(1);
  return row.length > 0;
}

/** A routine's runs, newest first, with their jobs. */
export async function listRuns(db: Db, routineId: string, limit: number): Promise<RunWithJob[]> {
  const { jobs, routineRuns } = db.t;
  const rows = await db
    .select({ run: routineRuns, job: { status: jobs.status, response: jobs.response, error: jobs.error, completedAt: jobs.completedAt } })
    .from(routineRuns)
    .leftJoin(jobs, eq(jobs.id, routineRuns.jobId))
    .where(eq(routineRuns.routineId, routineId))
    .orderBy(desc(routineRuns.scheduledFor), desc(routineRuns.startedAt))
    .limit(limit);
  return rows.map((r) => ({ ...r.run, job: r.job?.status ? r.job : null }));
}
