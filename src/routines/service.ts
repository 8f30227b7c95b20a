import { callbackUrlProblem, type CallbackAllowList } from "../channels/webhook/callbacks";
import { newUuid } from "../conversation/ids";
import { InvalidRequest, NotFound } from "../errors";
import type { Db } from "../store/db";
import { countRoutines, deleteRoutine, getRoutine, insertRoutine, listRoutines, listRuns, recordRuns, updateRoutine, type RoutineRow } from "../store/routines";
import { newRun, runRecord } from "./runs";
import { scheduleOf } from "./scheduler";
import { machineTimeZone, parseSchedule, ScheduleError, upcoming, type Schedule } from "./schedule";
import type { RoutineCreate, RoutinePatch, RoutineRecord, RunRecord, SchedulePreview } from "./wire";

/** A user has at most this many routines. */
export const MAX_ROUTINES = 200;
/** Runs a listing shows at most. */
export const MAX_RUNS_LISTED = 100;

export interface RoutinesDeps {
  db: Db;
  /** A routine was created, changed or deleted: the scheduler follows it. */
  changed: (id: string) => Promise<void>;
  /** A run's job was queued: wake the job worker. */
  kick: () => void;
  callbackHosts: CallbackAllowList;
  /** Whether callbacks can be signed (HTTP_WEBHOOK_SECRET is set). */
  canSign: boolean;
}

/** A user's routines: what the API, the CLI and the agent's mission tools go through. Another user's routine is not found. */
export class Routines {
  constructor(private readonly deps: RoutinesDeps) {}

  async list(userId: string): Promise<RoutineRecord[]> {
    return Promise.all((await listRoutines(this.deps.db, userId)).map((r) => this.#record(r)));
  }

  async get(userId: string, id: string): Promise<RoutineRecord> {
    return this.#record(await this.#own(userId, id));
  }

  async create(userId: string, input: RoutineCreate): Promise<RoutineRecord> {
    if ((await countRoutines(this.deps.db, userId)) >= MAX_ROUTINES) {
      throw new InvalidRequest(`You have ${MAX_ROUTINES} routines, the most a user may have: delete one first.`, "too_many_routines");
    }
    const now = Date.now();
    const timezone = input.timezone ?? machineTimeZone();
    const schedule = checkedSchedule(input.schedule, timezone, now);
    this.#checkCallback(input.callback_url);
    const enabled = input.enabled ?? true;
    const iso = new Date(now).toISOString();
    const row: RoutineRow = {
      id: newUuid(),
      userId,
      name: input.name?.trim() || defaultName(input.prompt),
      schedule: input.schedule.trim(),
      timezone,
      prompt: input.prompt,
      conversation: input.conversation ?? "new",
      callbackUrl: input.callback_url ?? null,
      enabled,
      catchUp: input.catch_up ?? "one",
      anchorAt: now,
      nextRunAt: enabled ? firstTick(schedule, now, input.schedule) : null,
      createdAt: iso,
      updatedAt: iso,
    };
    await insertRoutine(this.deps.db, row);
    await this.deps.changed(row.id);
    return this.#record(row);
  }

  /** Changes a routine; a new schedule or time zone (or a resume) counts from now. */
  async update(userId: string, id: string, patch: RoutinePatch): Promise<RoutineRecord> {
    const r = await this.#own(userId, id);
    const now = Date.now();
    if (patch.callback_url !== undefined) this.#checkCallback(patch.callback_url);
    const next: RoutineRow = {
      ...r,
      ...(patch.name !== undefined ? { name: patch.name.trim() || r.name } : {}),
      ...(patch.schedule !== undefined ? { schedule: patch.schedule.trim() } : {}),
      ...(patch.timezone !== undefined ? { timezone: patch.timezone } : {}),
      ...(patch.prompt !== undefined ? { prompt: patch.prompt } : {}),
      ...(patch.conversation !== undefined ? { conversation: patch.conversation } : {}),
      ...(patch.callback_url !== undefined ? { callbackUrl: patch.callback_url } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      ...(patch.catch_up !== undefined ? { catchUp: patch.catch_up } : {}),
      updatedAt: new Date(now).toISOString(),
    };
    const rescheduled = next.schedule !== r.schedule || next.timezone !== r.timezone;
    if (rescheduled) next.anchorAt = now;
    const schedule = checkedSchedule(next.schedule, next.timezone, next.anchorAt);
    if (!next.enabled) next.nextRunAt = null;
    else if (rescheduled) next.nextRunAt = firstTick(schedule, now, next.schedule);
    // resumed: from now on; the ticks while it was paused are not recorded
    else if (!r.enabled) next.nextRunAt = schedule.next(now) ?? null;
    const { id: _, userId: __, createdAt: ___, ...set } = next;
    const stored = await updateRoutine(this.deps.db, id, set);
    if (!stored) throw new NotFound(`No routine found with id ${id}.`);
    await this.deps.changed(id);
    return this.#record(stored);
  }

  async remove(userId: string, id: string): Promise<void> {
    await this.#own(userId, id);
    await deleteRoutine(this.deps.db, id);
    await this.deps.changed(id);
  }

  /** Runs the routine now, whatever its schedule (paused ones too): a run record and its job. */
  async runNow(userId: string, id: string): Promise<RunRecord> {
    const r = await this.#own(userId, id);
    const run = newRun(r, Date.now(), { trigger: "manual", outcome: "ran" });
    await recordRuns(this.deps.db, [run], { id: r.id });
    this.deps.kick();
    return runRecord({ ...run.run, job: { status: "queued", response: null, error: null, completedAt: null } });
  }

  async runs(userId: string, id: string, limit = 20): Promise<RunRecord[]> {
    await this.#own(userId, id);
    return (await listRuns(this.deps.db, id, Math.min(limit, MAX_RUNS_LISTED))).map(runRecord);
  }

  /** A schedule in words and its next three times, or a 400 with the reason. */
  preview(scheduleText: string, timezone = machineTimeZone()): SchedulePreview {
    const now = Date.now();
    const schedule = checkedSchedule(scheduleText, timezone, now);
    return { schedule: scheduleText.trim(), timezone, description: schedule.describe(), next_runs: upcoming(schedule, now, 3).map(iso) };
  }

  async #own(userId: string, id: string): Promise<RoutineRow> {
    const r = await getRoutine(this.deps.db, id);
    if (!r || r.userId !== userId) throw new NotFound(`No routine found with id ${id}.`);
    return r;
  }

  #checkCallback(url: string | null | undefined): void {
    if (!url) return;
    if (!this.deps.canSign) throw new InvalidRequest("`callback_url` needs HTTP_WEBHOOK_SECRET, which signs callbacks.", "invalid_callback_url");
    const problem = callbackUrlProblem(url, this.deps.callbackHosts);
    if (problem) throw new InvalidRequest(problem, "invalid_callback_url");
  }

  async #record(r: RoutineRow): Promise<RoutineRecord> {
    const [last] = await listRuns(this.deps.db, r.id, 1);
    let schedule: Schedule | undefined;
    try {
      schedule = scheduleOf(r);
    } catch {
      // a time zone this runtime no longer knows: the routine is shown, without its times
    }
    return {
      id: r.id,
      name: r.name,
      schedule: r.schedule,
      timezone: r.timezone,
      prompt: r.prompt,
      conversation: r.conversation,
      callback_url: r.callbackUrl,
      enabled: r.enabled,
      catch_up: r.catchUp,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      next_run_at: r.nextRunAt === null ? null : iso(r.nextRunAt),
      last_run: last ? runRecord(last) : null,
      description: schedule?.describe() ?? r.schedule,
      next_runs: r.enabled && r.nextRunAt !== null && schedule ? [r.nextRunAt, ...upcoming(schedule, r.nextRunAt, 2)].map(iso) : [],
    };
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

function checkedSchedule(text: string, timezone: string, anchor: number): Schedule {
  try {
    return parseSchedule(text, timezone, anchor);
  } catch (e) {
    if (e instanceof ScheduleError) throw new InvalidRequest(`\`schedule\`: ${e.message}.`, "invalid_schedule");
    throw e;
  }
}

/** A new schedule's first tick; one that never comes (an `at` in the past) is a 400. */
function firstTick(schedule: Schedule, now: number, text: string): number {
  const first = schedule.next(now);
  if (first === undefined) throw new InvalidRequest(`\`schedule\`: ${text.trim()} has passed.`, "invalid_schedule");
  return first;
}

/** A routine's name when none is given: the start of its prompt. */
function defaultName(prompt: string): string {
  const line = prompt.trim().split("\n")[0]!.replace(/\s+/g, " ");
  return line.length > 60 ? `${line.slice(0, 59)}…` : line || "Routine";
}
