// The routines API's shapes: what it takes and what it answers. The web UI, the TUI and the
// CLI import the types (type-only imports leave nothing in their bundles).
import { Type, type Static } from "@sinclair/typebox";

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

export interface RunRecord {
  id: string;
  routine_id: string;
  /** The tick's time; for a run asked for by hand, when it was asked. */
  scheduled_for: string;
  started_at: string;
  outcome: "ran" | "skipped";
  /** Why it was skipped: `missed` (the service was down), `overlap` (the previous run was still going) or `budget` (the owner's budget was spent). */
  reason: string | null;
  job_id: string | null;
  /** The job's status (queued, running, completed, failed); null for a skipped tick. */
  status: string | null;
  /** `schedule` or `manual` (run now). */
  trigger: "schedule" | "manual";
  /** The agent's answer, once the job completed. */
  response: string | null;
  error: { code: string; message: string } | null;
}

export interface RoutineRecord {
  id: string;
  name: string;
  schedule: string;
  timezone: string;
  prompt: string;
  conversation: "new" | "same";
  callback_url: string | null;
  enabled: boolean;
  catch_up: "skip" | "one" | "all";
  created_at: string;
  updated_at: string;
  /** The next tick, or null when paused or when an `at` has passed. */
  next_run_at: string | null;
  last_run: RunRecord | null;
  /** The schedule in words. */
  description: string;
  /** The next three ticks. */
  next_runs: string[];
}

export interface SchedulePreview {
  schedule: string;
  timezone: string;
  description: string;
  next_runs: string[];
}
