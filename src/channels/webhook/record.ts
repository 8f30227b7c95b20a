import type { JobRow } from "../../store/jobs";

/** A job as the webhook channel and the gateway's job list show it. */
export function jobRecord(j: JobRow) {
  return {
    id: j.id,
    status: j.status,
    ...(j.response !== null && j.status === "completed" ? { response: j.response } : {}),
    ...(j.error ? { error: j.error } : {}),
    user_id: j.sender,
    conversation_id: j.conversationId,
    source: j.source,
    created_at: j.createdAt,
    ...(j.startedAt ? { started_at: j.startedAt } : {}),
    ...(j.completedAt ? { completed_at: j.completedAt } : {}),
    ...(j.callbackStatus ? { callback: { status: j.callbackStatus, attempts: j.callbackAttempts } } : {}),
  };
}
