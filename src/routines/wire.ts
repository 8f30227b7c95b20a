// The routines API's shapes: what it takes and what it answers. The web UI, the TUI and the
// CLI import the types (type-only imports leave nothing in their bundles).
import { Type, type Static, type TSchema } from "@sinclair/typebox";

export const MAX_PROMPT = 32 * 1024;

const Conversation = Type.Union([Type.Literal("new"), Type.Literal("same")], { error: "must be new or same." });
const CatchUp = Type.Union([Type.Literal("skip"), Type.Literal("one"), Type.Literal("all")], { error: "must be skip, one or all." });

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, error: "must be a string of 1 to 200 characters." }),
  schedule: Type.String({ minLength: 1, maxLength: 200, error: "must be a cron expression, every <n>s|m|h|d or at <ISO 8601 time>." }),
  timezone: Type.String({ minLength: 1, maxLength: 64, error: "must be an IANA time zone such as Europe/Berlin." }),
  prompt: Type.String({ minLength: 1, maxLength: MAX_PROMPT, error: `must be a string of 1 to ${MAX_PROMPT} characters.` }),
  conversation: Conversation,
  callback_url: Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], { error: "must be an http(s) URL or null." }),
  enabled: Type.Boolean({ error: "must be true or false." }),
  catch_up: CatchUp,
};

/** `POST /api/routines`. */
export const RoutineCreate = Type.Object(
  {
    name: Type.Optional(fields.name),
    schedule: fields.schedule,
    timezone: Type.Optional(fields.timezone),
    prompt: fields.prompt,
    conversation: Type.Optional(fields.conversation),
    callback_url: Type.Optional(fields.callback_url),
    enabled: Type.Optional(fields.enabled),
    catch_up: Type.Optional(fields.catch_up),
  },
  { additionalProperties: false },
);
export type RoutineCreate = Static<typeof RoutineCreate>;

/** `PATCH /api/routines/{id}`: any of the fields. */
export const RoutinePatch = Type.Partial(Type.Object(fields), { additionalProperties: false });
export type RoutinePatch = Static<typeof RoutinePatch>;

/** `POST /api/routines/preview`: a schedule in words and its next times, for a form's live preview. */
export const PreviewRequest = Type.Object({ schedule: fields.schedule, timezone: Type.Optional(fields.timezone) }, { additionalProperties: false });

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A run of a routine: a tick that ran (a job) or was skipped. */
export const RunRecord = Type.Object({
  id: Type.String(),
  routine_id: Type.String(),
  /** The tick's time; for a run asked for by hand, when it was asked. */
  scheduled_for: Type.String(),
  started_at: Type.String(),
  outcome: Type.Union([Type.Literal("ran"), Type.Literal("skipped")]),
  /** Why it was skipped: `missed` (the service was down), `overlap` (the previous run was still going) or `budget` (the owner's budget was spent). */
  reason: Nullable(Type.String()),
  job_id: Nullable(Type.String()),
  /** The job's status (queued, running, completed, failed); null for a skipped tick. */
  status: Nullable(Type.String()),
  /** `schedule` or `manual` (run now). */
  trigger: Type.Union([Type.Literal("schedule"), Type.Literal("manual")]),
  /** The agent's answer, once the job completed. */
  response: Nullable(Type.String()),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});
export type RunRecord = Static<typeof RunRecord>;

export const RoutineRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  schedule: Type.String(),
  timezone: Type.String(),
  prompt: Type.String(),
  conversation: Type.Union([Type.Literal("new"), Type.Literal("same")]),
  callback_url: Nullable(Type.String()),
  enabled: Type.Boolean(),
  catch_up: Type.Union([Type.Literal("skip"), Type.Literal("one"), Type.Literal("all")]),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** The next tick, or null when paused or when an `at` has passed. */
  next_run_at: Nullable(Type.String()),
  last_run: Nullable(RunRecord),
  /** The schedule in words. */
  description: Type.String(),
  /** The next three ticks. */
  next_runs: Type.Array(Type.String()),
});
export type RoutineRecord = Static<typeof RoutineRecord>;

/** `POST /api/routines/preview` */
export const SchedulePreview = Type.Object({
  schedule: Type.String(),
  timezone: Type.String(),
  description: Type.String(),
  next_runs: Type.Array(Type.String()),
});
export type SchedulePreview = Static<typeof SchedulePreview>;

/** `GET /api/routines` */
export const RoutineList = Type.Object({ routines: Type.Array(RoutineRecord) });
/** `POST /api/routines/{id}/run` (202) */
export const RunStarted = Type.Object({ run: RunRecord });
/** `GET /api/routines/{id}/runs` */
export const RunList = Type.Object({ runs: Type.Array(RunRecord) });
