import { userContextBlock } from "../../agent/context";
import type { Agent, TurnResult } from "../../agent/turns";
import type { Db } from "../../store/db";
import { conversationThread, finishJobStatement, markRunning, nextQueuedJob, requeueInterrupted, type JobRow } from "../../store/jobs";

/**
 * Runs queued jobs through the agent, one at a time, in the order they were accepted. A job's
 * end is written in the same transaction as its turn, so a job completes exactly once: one
 * that was running when the process died has left nothing behind and runs again.
 */
export class JobWorker {
  #busy: Promise<void> | undefined;
  #stopping = false;

  constructor(private readonly deps: { db: Db; agent: Agent; log: (m: string) => void }) {}

  async start(): Promise<void> {
    const again = await requeueInterrupted(this.deps.db);
    if (again) this.deps.log(`webhook: ${again} interrupted job(s) queued again`);
    this.kick();
  }

  /** Wakes the worker when a job was queued. */
  kick(): void {
    if (this.#busy || this.#stopping) return;
    this.#busy = this.#drain()
      .catch((e) => this.deps.log(`webhook worker: ${(e as Error).message}`))
      .finally(() => (this.#busy = undefined));
  }

  /** Stops taking jobs; a job cut short by the shutdown goes back to the queue. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#busy;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  async #drain(): Promise<void> {
    for (;;) {
      if (this.#stopping) return;
      const job = await nextQueuedJob(this.deps.db);
      if (!job) return;
      await this.#run(job);
    }
  }

  async #run(job: JobRow): Promise<void> {
    const { db, agent } = this.deps;
    await markRunning(db, job);
    const threadId = await conversationThread(db, job);
    const context: Record<string, unknown> = { sender: job.sender, conversation_id: job.conversationId };
    if (job.metadata) context.metadata = JSON.parse(job.metadata);
    const content = `${userContextBlock(context)}\n\n${job.message}`;
    try {
      const turn = await agent.begin({
        userId: job.userId,
        threadId,
        messages: [{ role: "user", content }],
        toolOutputs: [],
        model: "default",
        commitAlso: (r) => [finishJobStatement(db, job.id, this.#outcome(r))],
      });
      const run = turn.run();
      while (!(await run.next()).done);
    } catch (e) {
      // The turn could not start (e.g. the conversation waits on an approval): the job fails.
      const error = JSON.stringify({ code: "rejected", message: (e as Error).message });
      await finishJobStatement(db, job.id, { status: "failed", threadId: threadId ?? null, responseId: null, response: null, error });
    }
  }

  #outcome(r: TurnResult) {
    const response = r.items
      .flatMap((i) => (i.type === "message" && i.role === "assistant" ? [i.content] : []))
      .join("\n\n");
    if (r.status === "completed") return { status: "completed" as const, threadId: r.threadId, responseId: r.id, response, error: null };
    const requeue = r.error?.code === "cancelled" && this.#stopping;
    return { status: requeue ? ("queued" as const) : ("failed" as const), threadId: r.threadId, responseId: r.id, response: response || null, error: JSON.stringify(r.error) };
  }
}
