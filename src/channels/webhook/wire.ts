// A job's record as the webhook channel and the gateway's job list answer it, for the server
// and the web UI's Activity page, which imports the types only.
import { Type, type Static } from "@sinclair/typebox";

/** A job as the webhook channel and the gateway's job list (GET /api/jobs) show it. */
export const JobRecord = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal("queued"), Type.Literal("running"), Type.Literal("waiting"), Type.Literal("completed"), Type.Literal("failed")]),
  waiting: Type.Optional(Type.Union([Type.Literal("approval"), Type.Literal("oauth")])),
  response: Type.Optional(Type.String()),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  user_id: Type.String(),
  conversation_id: Type.String(),
  source: Type.String(),
  attempts: Type.Integer(),
  next_attempt_at: Type.Optional(Type.String()),
  created_at: Type.String(),
  started_at: Type.Optional(Type.String()),
  completed_at: Type.Optional(Type.String()),
  callback: Type.Optional(Type.Object({ status: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]), attempts: Type.Integer() })),
});
export type JobRecord = Static<typeof JobRecord>;

/** GET /api/jobs */
export const JobList = Type.Object({ jobs: Type.Array(JobRecord) });
