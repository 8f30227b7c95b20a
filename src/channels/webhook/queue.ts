import { getGate } from "../../store/conversations";
import type { Agent } from "../../agent/turns";
import type { Config } from "../../config/schema";
import type { Logger } from "../../log";
import type { Broadcast } from "../../store/broadcast";
import type { Db } from "../../store/db";
import { getJob } from "../../store/jobs";
import { CallbackAllowList, CallbackSender, logJob } from "./callbacks";
import { jobEnded } from "./record";
import { JobWatch } from "./watch";
import { JobWorker } from "./worker";
import { VERSION } from "../../version";

/**
 * The durable job queue of the webhook channel: its worker, the callbacks of ended jobs and
 * the long polls waiting for them. It runs whether the webhook listener is on or not, since
 * routines queue their runs here too.
 */
export interface JobQueue {
  worker: JobWorker;
  watch: JobWatch;
  /** Signs and sends callbacks; undefined without HTTP_WEBHOOK_SECRET, which signs them. */
  callbacks: CallbackSender | undefined;
  callbackHosts: CallbackAllowList;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface QueueOptions {
  /** Overrides the pauses between callback attempts (tests only). */
  callbackDelaysMs?: number[];
  /** Overrides the pauses before a job that failed for a transient reason runs again (tests only). */
  retryDelaysMs?: number[];
  /** The other processes on the database: a long poll here hears of a job that ended there. */
  broadcast?: Broadcast;
}

const JOB_ENDED = "job.ended";

/** HTTP_CALLBACK_ALLOW_HOSTS; a malformed one allows nothing (with the channel on, serve has refused to start over it already). */
export function callbackAllowList(config: Config, log: Logger): CallbackAllowList {
  try {
    return new CallbackAllowList(config.http.callbackAllowHosts);
  } catch (e) {
    log.warn(`${(e as Error).message}; no callback is sent`);
    return new CallbackAllowList([]);
  }
}

export function createJobQueue(config: Config, db: Db, agent: Agent, log: Logger, callbackHosts: CallbackAllowList, opts: QueueOptions = {}): JobQueue {
  const secret = config.http.webhookSecret;
  const callbacks = secret ? new CallbackSender({ db, secret, allow: callbackHosts, log, delaysMs: opts.callbackDelaysMs, userAgent: `service/${VERSION}` }) : undefined;
  const watch = new JobWatch();
  opts.broadcast?.subscribe(JOB_ENDED, (id) => typeof id === "string" && watch.ended(id));
  const ended = (id: string) => {
    watch.ended(id);
    opts.broadcast?.publish(JOB_ENDED, id);
  };
  const worker = new JobWorker({
    db,
    agent,
    log: log.child({ component: "jobs" }),
    turnTimeoutMs: config.agent.turnTimeoutS * 1000,
    concurrency: config.http.jobConcurrency,
    maxAttempts: config.http.jobMaxAttempts,
    retryDelaysMs: opts.retryDelaysMs,
    leaseMs: config.http.jobLeaseS * 1000,
    ended: (id) => {
      ended(id);
      void getJob(db, id)
        .then((job) => {
          if (!job || !jobEnded(job)) return;
          logJob(log, job);
          callbacks?.jobEnded(job);
        })
        .catch((e) => log.error("job", { job_id: id, error: (e as Error).message }));
    },
    waiting: (id) => {
      ended(id);
      void (async () => {
        const job = await getJob(db, id);
        if (job?.status !== "waiting" || !job.threadId) return;
        logJob(log, job);
        const gate = await getGate(db, job.threadId);
        // a job waits on a person: an approval, or an extension to connect
        if (!gate || gate.kind === "external_tool") return;
        callbacks?.jobWaiting(job, {
          tool: gate.details.tool,
          arguments: gate.details.arguments,
          url: agent.deps.gateUrl(job.threadId),
          ...(gate.kind === "approval" && gate.details.destination ? { destination: gate.details.destination } : {}),
        });
      })().catch((e) => log.error("job", { job_id: id, error: (e as Error).message }));
    },
  });
  return {
    worker,
    watch,
    callbacks,
    callbackHosts,
    async start() {
      await worker.start();
      await callbacks?.start();
    },
    async stop() {
      watch.close();
      await worker.stop();
      await callbacks?.stop();
    },
  };
}
