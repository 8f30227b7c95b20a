import { userContextBlock } from "../../agent/context";
import { GateBlocks } from "../../agent/resume";
import type { Agent } from "../../agent/turns";
import { answerText, type TurnResult } from "../../agent/turn-types";
import { InvalidRequest, ThreadNotFound } from "../../errors";
import type { Logger } from "../../log";
import { transientFailure } from "../../llm/transient";
import { ROUTINE_SOURCE } from "../../routines/runs";
import type { StoredError } from "../../store/schema";
import type { Db } from "../../store/db";
import { claimNextJob, conversationThread, finishJob, jobTurn, jobWaitingOn, nextRetryAt, renewLeases, requeueAbandoned, waitingJobs, type JobOutcome, type JobRow } from "../../store/jobs";
import { said } from "../../agent/turn-types";

/** How long the worker waits before it looks at the queue again after the store failed. */
const STORE_RETRY_MS = 5_000;
/** The pauses before a job that failed for a transient reason runs again; the last one repeats. */
export const JOB_RETRY_DELAYS_MS = [30_000, 120_000, 600_000];
/** setTimeout's longest delay; a later retry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface WorkerDeps {
  db: Db;
  agent: Agent;
  log: Logger;
  turnTimeoutMs: number;
  /** Jobs of different lanes that run at once (HTTP_JOB_CONCURRENCY). */
  concurrency: number;
  /** Runs a job may have when each fails for a transient reason (HTTP_JOB_MAX_ATTEMPTS). */
  maxAttempts: number;
  retryDelaysMs?: number[];
  /**
   * How long a running job stays this process's without renewal (HTTP_JOB_LEASE_S). The worker
   * renews its jobs' leases, and looks for jobs another process left running (it died) as often.
   */
  leaseMs: number;
  /** A job ended (completed or failed): its callback, its log line, its long polls. */
  ended?: (jobId: string) => void;
  /** A job's turn stopped at a gate a person resolves: its `waiting` callback. */
  waiting?: (jobId: string) => void;
}

/**
 * Runs queued jobs through the agent. A job's lane is its conversation: lanes run side by
 * side, up to `concurrency` jobs at once, and a lane's jobs one at a time in the order they
 * were accepted. A job's end is written in the same transaction as its turn, so a job
 * completes exactly once: one that was running when its process died (at start, here; or
 * in another replica, once its lease has run out) is queued again and goes on with its
 * stored turn. One that failed for a transient reason (the LLM away) is queued again with a
 * delay, until it has run `maxAttempts` times.
 */
export class JobWorker {
  readonly #running = new Set<Promise<void>>();
  /** The jobs running here, by id: their leases are renewed. */
  readonly #held = new Set<string>();
  /** Turns that decide an approval on a thread no job here waits on: a job of another replica's may. */
  readonly #decisions = new Set<string>();
  #leases: ReturnType<typeof setInterval> | undefined;
  /** The lanes of the jobs running here: a job queued in one of them cannot start before that job ends. */
  readonly #busyLanes = new Set<string>();
  #filling: Promise<void> | undefined;
  /** A job was queued or ended while the worker was filling its slots: look again after. */
  #again = false;
  #stopping = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #delays: number[];
  /** The jobs waiting on a person, by the thread their turn stopped on. */
  readonly #waiting = new Map<string, string>();

  constructor(private readonly deps: WorkerDeps) {
    this.#delays = deps.retryDelaysMs ?? JOB_RETRY_DELAYS_MS;
    // a waiting job goes on with the turn a person's decision runs on its thread
    deps.agent.bus.subscribe((turn, e) => {
      if (e.type === "turn.started" && e.request.input.kind === "approval" && !this.#waiting.has(turn.threadId)) this.#decisions.add(turn.id);
      if (e.type !== "turn.completed") return;
      const decided = this.#decisions.delete(turn.id);
      if (!e.result) return;
      const result = e.result;
      const jobId = this.#waiting.get(turn.threadId);
      if (jobId) void this.#resolved(jobId, turn.threadId, result).catch((err) => this.#storeFailed(err));
      else if (decided) {
        void jobWaitingOn(deps.db, turn.threadId)
          .then((id) => (id ? this.#resolved(id, turn.threadId, result) : undefined))
          .catch((err) => this.#storeFailed(err));
      }
    });
  }

  async start(): Promise<void> {
    await this.#requeueAbandoned();
    for (const w of await waitingJobs(this.deps.db)) this.#waiting.set(w.threadId, w.id);
    this.#leases = setInterval(() => void this.#keepLeases(), Math.max(500, this.deps.leaseMs / 3));
    this.#leases.unref?.();
    this.kick();
  }

  /** Renews the leases of the jobs running here; takes back to the queue the jobs of processes that are gone, and runs them. */
  async #keepLeases(): Promise<void> {
    try {
      await renewLeases(this.deps.db, [...this.#held], this.deps.leaseMs);
      if (!this.#filling && (await this.#requeueAbandoned())) this.kick();
    } catch (e) {
      this.deps.log.warn("jobs: the leases could not be renewed", { error: (e as Error).message });
    }
  }

  async #requeueAbandoned(): Promise<number> {
    const again = await requeueAbandoned(this.deps.db, [...this.#held]);
    if (again) this.deps.log.warn(`jobs: ${again} interrupted job(s) queued again`, { jobs: again });
    return again;
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
    clearInterval(this.#leases);
    await this.#filling;
    await Promise.allSettled([...this.#running]);
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Starts jobs until every slot is taken or none may run now; then waits for the next retry that falls due. */
  async #fill(): Promise<void> {
    while (!this.#stopping && this.#running.size < this.deps.concurrency) {
      const job = await claimNextJob(this.deps.db, this.deps.leaseMs);
      if (!job) return this.#wakeForRetry();
      this.#busyLanes.add(job.lane);
      this.#held.add(job.id);
      const run: Promise<void> = this.#run(job)
        .catch((e) => this.#storeFailed(e))
        .finally(() => {
          this.#busyLanes.delete(job.lane);
          this.#held.delete(job.id);
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
    this.deps.log.error(`jobs: the store failed; trying again in ${STORE_RETRY_MS / 1000} s`, { error: (e as Error).message });
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.kick(), STORE_RETRY_MS);
    this.#timer.unref?.();
  }

  async #run(job: JobRow): Promise<void> {
    const { db } = this.deps;
    let outcome: JobOutcome;
    try {
      outcome = this.#outcome(job, await this.#turn(job));
    } catch (e) {
      const refused = e instanceof InvalidRequest ? refusal(e) : undefined;
      if (!refused) {
        // not the job's fault (the store is down): back to the queue, to run again later
        await finishJob(db, job.id, { status: "queued", threadId: job.threadId, error: null, nextAttemptAt: null }, job).catch(() => {});
        throw e;
      }
      // the turn could not start (the message cannot fit the context window): the job fails
      outcome = { status: "failed", threadId: job.threadId, responseId: null, response: null, error: refused };
    }
    // taken over by another replica meanwhile (this one stalled past its lease): theirs now
    if (await finishJob(db, job.id, outcome, job)) this.#after(job.id, outcome);
  }

  /** What follows where a job went: a waiting one is watched for its approval; an ended one has its callback and long polls. */
  #after(jobId: string, outcome: JobOutcome): void {
    if (outcome.status === "waiting") {
      this.#waiting.set(outcome.threadId, jobId);
      this.deps.waiting?.(jobId);
    } else if (outcome.status !== "queued") this.deps.ended?.(jobId);
  }

  /**
   * The job's turn. A run again (after a stop, a crash or a transient failure) goes on with the
   * turn an earlier run stored, so that no finished tool call runs twice; a conversation whose
   * thread was deleted meanwhile starts a new one.
   */
  async #turn(job: JobRow): Promise<TurnResult> {
    const { agent, db } = this.deps;
    const common = {
      channel: "webhook" as const,
      userId: job.userId,
      toolOutputs: [],
      model: "default",
      timeoutMs: this.deps.turnTimeoutMs,
      memory: job.memory,
      // a routine's run counts as the routine's (its job's sender is the routine)
      origin: { jobId: job.id, queuedAt: Date.parse(job.createdAt), ...(job.source === ROUTINE_SOURCE ? { routineId: job.sender } : {}) },
      // stored as it runs (durable), and its gates wait for a person instead of failing the job
      background: true,
      surfacesGates: true,
    };
    const earlier = await jobTurn(db, job.id);
    if (earlier) {
      try {
        return await agent.run({ ...common, input: { kind: "recover", responseId: earlier.id } });
      } catch (e) {
        if (!(e instanceof ThreadNotFound)) throw e;
      }
    }
    // a named source not marked trusted speaks for someone else: its message taints the turn
    const input = said({ role: "user", content: jobContent(job), ...(job.trusted ? {} : { untrusted: true }) });
    const threadId = earlier ? undefined : await conversationThread(db, job);
    try {
      return await agent.run({ ...common, threadId, input });
    } catch (e) {
      if (!(e instanceof ThreadNotFound) || threadId === undefined) throw e;
      return agent.run({ ...common, input });
    }
  }

  /** Where the job goes after its turn: done, failed, waiting on a person, or back to the queue (a shutdown at once, a transient failure after a delay). */
  #outcome(job: JobRow, r: TurnResult): JobOutcome {
    // the turn is stored as far as it got: the next run goes on from there
    if (r.error?.code === "shutdown") return { status: "queued", threadId: r.threadId, error: null, nextAttemptAt: null };
    // job.attempts counts this run already (claimNextJob)
    if (transientFailure(r.error) && job.attempts < this.deps.maxAttempts) {
      const delay = this.#delays[Math.min(job.attempts, this.#delays.length) - 1] ?? 0;
      return { status: "queued", threadId: r.threadId, error: r.error, nextAttemptAt: Date.now() + delay };
    }
    return jobEnd(r);
  }

  /**
   * A turn ended on the thread of a waiting job (the person approved or denied in the web UI,
   * the TUI or `service approvals`, which runs the turn on): the job ends with it, or waits
   * again at the next gate.
   */
  async #resolved(jobId: string, threadId: string, r: TurnResult): Promise<void> {
    this.#waiting.delete(threadId);
    const outcome = jobEnd(r);
    if (!(await finishJob(this.deps.db, jobId, outcome, { status: "waiting" }))) return;
    this.#after(jobId, outcome);
    // its lane is free again
    this.kick();
  }
}

/** A job's end as its last turn left it: completed, failed, or waiting at a gate. */
function jobEnd(r: TurnResult): JobOutcome {
  if (r.status === "completed" && r.waiting) return { status: "waiting", threadId: r.threadId, responseId: r.id, waiting: r.waiting };
  const response = answerText(r);
  return r.status === "completed"
    ? { status: "completed", threadId: r.threadId, responseId: r.id, response, error: null }
    : { status: "failed", threadId: r.threadId, responseId: r.id, response: response || null, error: r.error };
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
