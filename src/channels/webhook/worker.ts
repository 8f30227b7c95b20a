import { userContextBlock } from "../../agent/context";
import { GateBlocks } from "../../agent/resume";
import type { Agent } from "../../agent/turns";
import { answerText, type TurnResult } from "../../agent/turn-types";
import { InvalidRequest, ThreadNotFound } from "../../errors";
import type { StoredError } from "../../store/schema";
import type { Db } from "../../store/db";
import { conversationThread, discardTurnStatements, finishJobStatement, markRunning, nextQueuedJob, requeueInterrupted, type JobRow } from "../../store/jobs";

/** How long the worker waits before it looks at the queue again after the store failed. */
const RETRY_MS = 5_000;

/**
 * Runs queued jobs through the agent, one at a time, in the order they were accepted. A job's
 * end is written in the same transaction as its turn, so a job completes exactly once: one
 * that was running when the process died has left nothing behind and runs again.
 */
export class JobWorker {
  #busy: Promise<void> | undefined;
  /** A job was queued while the worker was busy: look again before going idle. */
  #again = false;
  #stopping = false;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly deps: { db: Db; agent: Agent; log: (m: string) => void; turnTimeoutMs: number; ended?: (jobId: string) => void },
  ) {}

  async start(): Promise<void> {
    const again = await requeueInterrupted(this.deps.db);
    if (again) this.deps.log(`webhook: ${again} interrupted job(s) queued again`);
    this.kick();
  }

  /** Wakes the worker when a job was queued. */
  kick(): void {
    if (this.#stopping) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#again = false;
    this.#busy = this.#drain()
      .catch((e) => {
        // the store failed (the job stays queued, or goes back to the queue): look again in a while
        this.deps.log(`webhook worker: ${(e as Error).message}; trying again in ${RETRY_MS / 1000} s`);
        clearTimeout(this.#retry);
        this.#retry = setTimeout(() => this.kick(), RETRY_MS);
        this.#retry.unref?.();
      })
      .finally(() => {
        this.#busy = undefined;
        // queued after the last look but before the worker went idle: not left waiting
        if (this.#again) this.kick();
      });
  }

  /** Stops taking jobs; a job cut short by the shutdown goes back to the queue. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#retry);
    await this.#busy;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  async #drain(): Promise<void> {
    for (;;) {
      if (this.#stopping) return;
      this.#again = false;
      const job = await nextQueuedJob(this.deps.db);
      if (!job) return;
      await this.#run(job);
    }
  }

  async #run(job: JobRow): Promise<void> {
    const { db } = this.deps;
    await markRunning(db, job);
    const threadId = await conversationThread(db, job);
    const context: Record<string, unknown> = { sender: job.sender, conversation_id: job.conversationId };
    if (job.metadata) context.metadata = job.metadata;
    const content = `${userContextBlock(context)}\n\n${job.message}`;
    try {
      await this.#turn(job, threadId, content);
    } catch (e) {
      const refused = e instanceof InvalidRequest ? refusal(e) : undefined;
      if (!refused) {
        // not the job's fault (the store is down): back to the queue, to run again later
        await finishJobStatement(db, job.id, { status: "queued", threadId: threadId ?? null, responseId: null, response: null, error: null }).catch(() => {});
        throw e;
      }
      // the turn could not start (the conversation waits on an approval, the message cannot fit): the job fails
      await finishJobStatement(db, job.id, { status: "failed", threadId: threadId ?? null, responseId: null, response: null, error: refused });
    }
    // its log line and callback (a job sent back to the queue by a shutdown has not ended)
    this.deps.ended?.(job.id);
  }

  /** The job's turn; a conversation whose thread was deleted meanwhile starts a new one. */
  async #turn(job: JobRow, threadId: string | undefined, content: string): Promise<void> {
    const run = (thread: string | undefined) =>
      this.deps.agent.run({
        channel: "webhook",
        userId: job.userId,
        threadId: thread,
        messages: [{ role: "user", content }],
        toolOutputs: [],
        model: "default",
        timeoutMs: this.deps.turnTimeoutMs,
        origin: { jobId: job.id, queuedAt: Date.parse(job.createdAt) },
        commitAlso: (r) => this.#finish(job, thread, r),
      });
    try {
      await run(threadId);
    } catch (e) {
      if (!(e instanceof ThreadNotFound) || threadId === undefined) throw e;
      await run(undefined);
    }
  }

  /** The job's end, written in the turn's transaction. */
  #finish(job: JobRow, priorThread: string | undefined, r: TurnResult) {
    const { db } = this.deps;
    if (r.error?.code === "shutdown") {
      // Cut short by a shutdown: back to the queue, and this attempt's writes undone in the
      // same transaction, so the job runs again from scratch as if it had never started.
      return [
        ...discardTurnStatements(db, r.id, priorThread ? undefined : r.threadId),
        finishJobStatement(db, job.id, { status: "queued", threadId: priorThread ?? null, responseId: null, response: null, error: null }),
      ];
    }
    const response = answerText(r);
    const outcome =
      r.status === "completed"
        ? { status: "completed" as const, threadId: r.threadId, responseId: r.id, response, error: null }
        : { status: "failed" as const, threadId: r.threadId, responseId: r.id, response: response || null, error: r.error };
    return [finishJobStatement(db, job.id, outcome)];
  }
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
