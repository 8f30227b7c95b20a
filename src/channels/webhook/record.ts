import type { JobRow } from "../../store/jobs";
import type { JobRecord } from "./wire";

/** A job as the webhook channel and the gateway's job list show it. */
export function jobRecord(j: JobRow): JobRecord {
  return {
    id: j.id,
    status: j.status,
    /** What a waiting job waits for: a person's approval (web UI, TUI, `service approvals`), an extension to connect. */
    ...(j.status === "waiting" && j.waiting ? { waiting: j.waiting } : {}),
    ...(j.response !== null && j.status === "completed" ? { response: j.response } : {}),
    ...(j.error ? { error: j.error } : {}),
    user_id: j.sender,
    conversation_id: j.conversationId,
    source: j.source,
    /** The runs it has started: more than one after a transient failure (the LLM away) or a restart. */
    attempts: j.attempts,
    ...(j.status === "queued" && j.nextAttemptAt !== null ? { next_attempt_at: new Date(j.nextAttemptAt).toISOString() } : {}),
    created_at: j.createdAt,
    ...(j.startedAt ? { started_at: j.startedAt } : {}),
    ...(j.completedAt ? { completed_at: j.completedAt } : {}),
    ...(j.callbackStatus ? { callback: { status: j.callbackStatus, attempts: j.callbackAttempts } } : {}),
  };
}

/** A job that has ended: its record no longer changes (but for its callback). */
export const jobEnded = (j: Pick<JobRow, "status">) => j.status === "completed" || j.status === "failed";

/** Where a long poll answers: the job ended, or waits on a person (which may take hours). */
export const jobSettled = (j: Pick<JobRow, "status">) => jobEnded(j) || j.status === "waiting";
