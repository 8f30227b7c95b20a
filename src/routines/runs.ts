import { newUuid } from "../conversation/ids";
import type { NewRun, RoutineRow, RunWithJob } from "../store/routines";
import type { RunRecord } from "./wire";

/** The job source of routine runs: they go through the webhook channel's queue. */
export const ROUTINE_SOURCE = "routine";

/**
 * A run of a routine, as it is recorded: ran, with the job that carries the routine's prompt
 * to the agent, or skipped, with the reason.
 */
export function newRun(
  r: RoutineRow,
  scheduledFor: number,
  how: { trigger: "schedule" | "manual"; outcome: "ran" } | { trigger: "schedule"; outcome: "skipped"; reason: "missed" | "overlap" | "budget" },
): NewRun {
  const jobId = how.outcome === "ran" ? newUuid() : null;
  return {
    run: {
      id: newUuid(),
      routineId: r.id,
      userId: r.userId,
      scheduledFor,
      trigger: how.trigger,
      startedAt: new Date().toISOString(),
      outcome: how.outcome,
      reason: how.outcome === "skipped" ? how.reason : null,
      jobId,
    },
    ...(jobId
      ? {
          job: {
            id: jobId,
            userId: r.userId,
            source: ROUTINE_SOURCE,
            sender: r.id,
            // `same`: one conversation (and so one lane, in order) for every run of the routine
            conversationId: r.conversation === "same" ? r.id : newUuid(),
            message: r.prompt,
            metadata: { routine: r.name, scheduled_for: new Date(scheduledFor).toISOString() },
            ...(r.callbackUrl ? { callbackUrl: r.callbackUrl, callbackStatus: "pending" as const } : {}),
          },
        }
      : {}),
  };
}

/** A run as the routines API shows it. */
export function runRecord(r: RunWithJob): RunRecord {
  return {
    id: r.id,
    routine_id: r.routineId,
    scheduled_for: new Date(r.scheduledFor).toISOString(),
    started_at: r.startedAt,
    outcome: r.outcome,
    reason: r.reason,
    job_id: r.jobId,
    status: r.job?.status ?? null,
    trigger: r.trigger,
    response: r.job?.status === "completed" ? r.job.response : null,
    error: r.job?.error ?? null,
  };
}
