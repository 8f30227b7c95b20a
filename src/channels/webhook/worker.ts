import { userContextBlock } from "../../agent/context";
import { GateBlocks } from "../../agent/resume";
import type { Agent } from "../../agent/turns";
import { answerText, type TurnResult } from "../../agent/turn-types";
import { InvalidRequest, ThreadNotFound } from "../../errors";
import { transientFailure } from "../../llm/transient";
import type { StoredError } from "../../store/schema";
import type { Db } from "../../store/db";
import {
  claimNextJob,
  conversationThread,
  discardTurnStatements,
  finishJobStatement,
  nextRetryAt,
  requeueInterrupted,
  type JobOutcome,
  type JobRow,
} from "../../store/jobs";

/** How long the worker waits before it looks at the queue again after the store failed. */
const STORE_RETRY_MS = 5_000;
/** The pauses before a job that failed for a transient reason runs again; the last one repeats. */
export const JOB_RETRY_DELAYS_MS = [30_000, 120_000, 600_000];
/** setTimeout's longest delay; a later retry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface WorkerDeps {
  db: Db;
  agent: Agent;
  log: (m: string) => void;
  turnTimeoutMs: number;
  /** Jobs of different lanes that run at once (HTTP_JOB_CONCURRENCY). */
  concurrency: number;
  /** Runs a job may have when each fails for a transient reason (HTTP_JOB_MAX_ATTEMPTS). */
  maxAttempts: number;
  retryDelaysMs?: number[];
  /** A job ended (completed or failed): its callback, its log line, its long polls. */
  ended?: (jobId: string) => void;
}

/**
 * Runs queued jobs through the agent. A job's lane is its conversation: lanes run side by
 * side, up to `concurrency` jobs at once, and a lane's jobs one at a time in the order they
 * were accepted. A job's end is written in the same transaction as its turn, so a job
 * completes exactly once: one that was running when the process died has left nothing
 * behind and runs again. One that failed for a transient reason (the LLM away) is queued
 * again with a delay, its turn undone, until it has run `maxAttempts` times.
 */
export class JobWorker {
  readonly #running = new Set<Promise<void>>();
  /** The lanes of the jobs running here: a job queued in one of them cannot start before that job ends. */
  readonly #busyLanes = new Set<string>();
  #filling: Promise<void> | undefined;
  /** A job was queued or ended while the worker was filling its slots: look again after. */
  #again = false;
  #stopping = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #delays: number[];

  constructor(private readonly deps: WorkerDeps) {
    this.#delays = deps.retryDelaysMs ?? JOB_RETRY_DELAYS_MS;
  }

  async start(): Promise<void> {
    const again = await requeueInterrupted(this.deps.db);
    if (again) this.deps.log(`jobs: ${again} interrupted job(s) queued again`);
    this.kick();
  }

  /**
   * Wakes the worker when a job was queued (or a slot freed). A job queued in a lane that runs
   * here waits for that lane, whose end wakes the worker anyway: no look at the queue for it.
   */
  kick(lane?: string): void {
    if (this.#stopping || (lane !== undefined && this.#busyLanes.has(lane))) return;
    if (this.#filling) {
      this.#again = true;
      return;
    }
    this.#again = false;
    this.#filling = this.#fill()
      .catch((e) => this.#storeFailed(e))
      .finally(() => {
        this.#filling = undefined;
        // queued after the last look but before the worker went idle: not left waiting
        if (this.#again) this.kick();
      });
  }

  /** Stops taking jobs and waits for the running ones; a job cut short by the shutdown goes back to the queue. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    await this.#filling;
    await Promise.allSettled([...this.#running]);
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Starts jobs until every slot is taken or none may run now; then waits for the next retry that falls due. */
  async #fill(): Promise<void> {
    while (!this.#stopping && this.#running.size < this.deps.concurrency) {
      const job = await claimNextJob(this.deps.db);
      if (!job) return this.#wakeForRetry();
      this.#busyLanes.add(job.lane);
      const run: Promise<void> = this.#run(job)
        .catch((e) => this.#storeFailed(e))
        .finally(() => {
          this.#busyLanes.delete(job.lane);
          this.#running.delete(run);
          this.kick();
        });
      this.#running.add(run);
    }
  }

  async #wakeForRetry(): Promise<void> {
    const at = await nextRetryAt(this.deps.db);
    clearTimeout(this.#timer);
    if (at === undefined || this.#stopping) return;
    this.#timer = setTimeout(() => this.kick(), Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())));
    this.#timer.unref?.();
  }

  /** The store failed (the job stays queued, or went back to the queue): look again in a while. */
  #storeFailed(e: unknown): void {
    this.deps.log(`jobs: ${(e as Error).message}; trying again in ${STORE_RETRY_MS / 1000} s`);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.kick(), STORE_RETRY_MS);
    this.#timer.unref?.();
  }

  async #run(job: JobRow): Promise<void> {
    const { db } = this.deps;
    const threadId = await conversationThread(db, job);
    let outcome: JobOutcome["status"] = "queued";
    try {
      outcome = await this.#turn(job, threadId, jobContent(job));
    } catch (e) {
      const refused = e instanceof InvalidRequest ? refusal(e) : undefined;
      if (!refused) {
        // not the job's fault (the store is down): back to the queue, to run again later
        await finishJobStatement(db, job.id, { status: "queued", threadId: threadId ?? null, error: null, nextAttemptAt: null }).catch(() => {});
        throw e;
      }
      // the turn could not start (the conversation waits on an approval, the message cannot fit): the job fails
      await finishJobStatement(db, job.id, { status: "failed", threadId: threadId ?? null, responseId: null, response: null, error: refused });
      outcome = "failed";
    }
    // its log line, callback and long polls (a job queued again has not ended)
    if (outcome !== "queued") this.deps.ended?.(job.id);
  }

  /** The job's turn; a conversation whose thread was deleted meanwhile starts a new one. Resolves to where the job went. */
  async #turn(job: JobRow, threadId: string | undefined, content: string): Promise<JobOutcome["status"]> {
    let status: JobOutcome["status"] = "queued";
    const run = (thread: string | undefined) =>
      this.deps.agent.run({
        channel: "webhook",
        userId: job.userId,
        threadId: thread,
        // a named source not marked trusted speaks for someone else: its message taints the turn
        messages: [{ role: "user", content, ...(job.trusted ? {} : { untrusted: true }) }],
        toolOutputs: [],
        model: "default",
        timeoutMs: this.deps.turnTimeoutMs,
        memory: job.memory,
        origin: { jobId: job.id, queuedAt: Date.parse(job.createdAt) },
        commitAlso: (r) => {
          const outcome = this.#outcome(job, r);
          status = outcome.status;
          return [
            // a job that runs again starts from scratch: this attempt's writes are undone in the same transaction
            ...(outcome.status === "queued" ? discardTurnStatements(this.deps.db, r.id, thread ? undefined : r.threadId) : []),
            finishJobStatement(this.deps.db, job.id, outcome.status === "queued" ? { ...outcome, threadId: thread ?? null } : outcome),
          ];
        },
      });
    try {
      await run(threadId);
    } catch (e) {
      if (!(e instanceof ThreadNotFound) || threadId === undefined) throw e;
      await run(undefined);
    }
    return status;
  }

  /** Where the job goes after its turn: done, failed, or back to the queue (a shutdown at once, a transient failure after a delay). */
  #outcome(job: JobRow, r: TurnResult): JobOutcome {
    if (r.error?.code === "shutdown") return { status: "queued", threadId: null, error: null, nextAttemptAt: null };
    // job.attempts counts this run already (claimNextJob)
    if (transientFailure(r.error) && job.attempts < this.deps.maxAttempts) {
      const delay = this.#delays[Math.min(job.attempts, this.#delays.length) - 1] ?? 0;
      return { status: "queued", threadId: null, error: r.error, nextAttemptAt: Date.now() + delay };
    }
    const response = answerText(r);
    return r.status === "completed"
      ? { status: "completed", threadId: r.threadId, responseId: r.id, response, error: null }
      : { status: "failed", threadId: r.threadId, responseId: r.id, response: response || null, error: r.error };
  }
}

/** What the model reads of a job: a `<user-context>` block with who sent it and where it belongs, then the message. */
function jobContent(job: JobRow): string {
  const context: Record<string, unknown> = job.source === "webhook" ? {} : { source: job.source };
  context.sender = job.sender;
  context.conversation_id = job.conversationId;
  if (job.metadata) context.metadata = job.metadata;
  return `${userContextBlock(context)}\n\n${job.message}`;
}

/**
 * Why a job's turn was refused, in the turn errors' words: the gate in the way, or an input
 * that can never fit the context window. Undefined for anything else.
 */
function refusal(e: InvalidRequest): StoredError | undefined {
  const gate = e instanceof GateBlocks ? e.gate : undefined;
  const code = gate === "approval" ? "approval_required" : gate === "oauth" ? "auth_required" : e.code === "context_length_exceeded" ? e.code : undefined;
  return code ? { code, message: e.message } : undefined;
}
