import type { Logger } from "../log";
import { uniqueViolation, type Db } from "../store/db";
import { getRoutine, recordedTicks, recordRuns, runInProgress, scheduledRoutines, type NewRun, type RoutineRow } from "../store/routines";
import { newRun } from "./runs";
import { parseSchedule, type Schedule } from "./schedule";

/** At most this many missed ticks of a routine are recorded after a downtime (the latest ones). */
export const MAX_MISSED_RECORDED = 1_000;
/** `catch_up: "all"` runs at most this many missed ticks (the latest ones). */
export const MAX_CATCH_UP_RUNS = 10;
/** setTimeout's longest delay; a later tick is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface SchedulerDeps {
  db: Db;
  /** A run's job was queued: wake the job worker. */
  kick: () => void;
  /** Whether the user's spending is over a budget: their routines' ticks are skipped then (`budget`). */
  overBudget?: (userId: string) => Promise<boolean>;
  log: Logger;
}

/** A routine's schedule as stored. */
export const scheduleOf = (r: Pick<RoutineRow, "schedule" | "timezone" | "anchorAt">): Schedule => parseSchedule(r.schedule, r.timezone, r.anchorAt);

/**
 * Fires routines' ticks: each due tick becomes a run record, and a job in the webhook
 * channel's queue when it runs. The database is the truth: a routine's `next_run_at` is its
 * next unrecorded tick, moved in the same transaction that records a tick, and a tick's run
 * has a unique key, so a restart (or a second process) never fires a tick twice. Ticks that
 * fell due while the service was down are handled at start by the routine's `catch_up`.
 */
export class RoutineScheduler {
  /** Routine id → its next tick (ms since the epoch). */
  readonly #next = new Map<string, number>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  /** Ticks and changes are handled one at a time, in order. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SchedulerDeps) {}

  /** Catches up on what was missed while the service was down, then follows every routine's ticks. */
  start(): Promise<void> {
    return this.#serial(async () => {
      const now = Date.now();
      for (const r of await scheduledRoutines(this.deps.db)) {
        try {
          if (r.nextRunAt! <= now) await this.#catchUp(r, now);
          else this.#next.set(r.id, r.nextRunAt!);
        } catch (e) {
          this.deps.log.error("routine", { routine_id: r.id, error: (e as Error).message });
        }
      }
      this.#arm();
    });
  }

  /** A routine was created, changed or deleted: follows it as it now is. */
  changed(id: string): Promise<void> {
    return this.#serial(async () => {
      this.#follow(id, await getRoutine(this.deps.db, id));
      this.#arm();
    });
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** Resolves once the ticks and changes under way have been handled. */
  idle(): Promise<void> {
    return this.#serial(async () => {});
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Follows the routine's next tick as stored; a paused, finished or deleted one is let go. */
  #follow(id: string, r: RoutineRow | undefined): void {
    if (r?.enabled && r.nextRunAt !== null) this.#next.set(id, r.nextRunAt);
    else this.#next.delete(id);
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#stopped || !this.#next.size) return;
    const first = Math.min(...this.#next.values());
    this.#timer = setTimeout(() => void this.#serial(() => this.#fire()), Math.min(MAX_TIMER_MS, Math.max(0, first - Date.now())));
  }

  /** Every tick due by now, oldest first; a tick that falls due meanwhile is handled in the same round. */
  async #fire(): Promise<void> {
    for (;;) {
      if (this.#stopped) return;
      const now = Date.now();
      const due = [...this.#next].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1]);
      if (!due.length) break;
      for (const [id, at] of due) {
        try {
          await this.#tick(id, at);
        } catch (e) {
          // the store failed: the tick stays due and is tried again in a moment
          this.deps.log.error("routine tick", { routine_id: id, error: (e as Error).message });
          this.#timer = setTimeout(() => void this.#serial(() => this.#fire()), 5_000);
          return;
        }
      }
    }
    this.#arm();
  }

  /** Records one due tick: a run (skipped when the previous run is still going) and the routine's next tick. */
  async #tick(id: string, scheduledFor: number): Promise<void> {
    const { db } = this.deps;
    const r = await getRoutine(db, id);
    // changed or recorded elsewhere meanwhile: the row is the truth
    if (!r?.enabled || r.nextRunAt !== scheduledFor) return this.#follow(id, r);
    const next = this.#nextAfter(r, scheduledFor);
    const run = (await runInProgress(db, r.id))
      ? newRun(r, scheduledFor, { trigger: "schedule", outcome: "skipped", reason: "overlap" })
      : (await this.deps.overBudget?.(r.userId))
        ? newRun(r, scheduledFor, { trigger: "schedule", outcome: "skipped", reason: "budget" })
        : newRun(r, scheduledFor, { trigger: "schedule", outcome: "ran" });
    if (!(await this.#record(r, [run], next))) return this.#follow(id, await getRoutine(db, id));
    this.#log(r, run);
    if (run.job) this.deps.kick();
    this.#follow(id, { ...r, nextRunAt: next });
  }

  /**
   * Ticks that fell due while the service was down: `skip` records each as missed, `one` runs
   * the latest, `all` runs the latest ten; the others are recorded missed too. A run still
   * going from before makes those that would run skipped as overlapping.
   */
  async #catchUp(r: RoutineRow, now: number): Promise<void> {
    const { db } = this.deps;
    const schedule = scheduleOf(r);
    const missed = schedule.previous(now, MAX_MISSED_RECORDED).filter((t) => t >= r.nextRunAt!);
    const next = schedule.next(now) ?? null;
    const running = missed.length > 0 && (await runInProgress(db, r.id));
    const broke = missed.length > 0 && !running && r.catchUp !== "skip" && (await this.deps.overBudget?.(r.userId));
    const toRun = r.catchUp === "skip" ? 0 : r.catchUp === "one" ? 1 : MAX_CATCH_UP_RUNS;
    for (let attempt = 0; attempt < 3; attempt++) {
      const done = missed.length ? await recordedTicks(db, r.id, missed[0]!, missed.at(-1)!) : new Set<number>();
      const open = missed.filter((t) => !done.has(t));
      const runs = open.map((t, i) =>
        i < open.length - toRun
          ? newRun(r, t, { trigger: "schedule", outcome: "skipped", reason: "missed" })
          : running
            ? newRun(r, t, { trigger: "schedule", outcome: "skipped", reason: "overlap" })
            : broke
              ? newRun(r, t, { trigger: "schedule", outcome: "skipped", reason: "budget" })
              : newRun(r, t, { trigger: "schedule", outcome: "ran" }),
      );
      if (!(await this.#record(r, runs, next))) continue;
      const ran = runs.filter((x) => x.job).length;
      if (runs.length) this.deps.log.info("routine caught up", { routine_id: r.id, missed: runs.length, ran, catch_up: r.catchUp });
      if (ran) this.deps.kick();
      return this.#follow(r.id, { ...r, nextRunAt: next });
    }
    this.#follow(r.id, await getRoutine(db, r.id));
  }

  /** Records runs and the next tick; false when one of them was recorded already (by another process). */
  async #record(r: RoutineRow, runs: NewRun[], next: number | null): Promise<boolean> {
    try {
      await recordRuns(this.deps.db, runs, { id: r.id, nextRunAt: next });
      return true;
    } catch (e) {
      if (!uniqueViolation(e)) throw e;
      return false;
    }
  }

  /** The tick after `after`, or null when there is none (an `at` that has fired, a schedule that no longer parses). */
  #nextAfter(r: RoutineRow, after: number): number | null {
    try {
      return scheduleOf(r).next(after) ?? null;
    } catch (e) {
      this.deps.log.warn("routine", { routine_id: r.id, error: `its schedule no longer parses: ${(e as Error).message}` });
      return null;
    }
  }

  #log(r: RoutineRow, x: NewRun): void {
    this.deps.log.info("routine tick", {
      routine_id: r.id,
      scheduled_for: new Date(x.run.scheduledFor).toISOString(),
      outcome: x.run.outcome,
      ...(x.run.reason ? { reason: x.run.reason } : {}),
      ...(x.job ? { job_id: x.job.id } : {}),
    });
  }
}
