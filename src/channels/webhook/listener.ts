import type { Agent } from "../../agent/turns";
import { RateLimiter } from "../../auth/rate-limit";
import type { Config } from "../../config/schema";
import type { Logger } from "../../log";
import type { Db } from "../../store/db";
import { clientIps, webhookApp } from "./app";
import { CallbackAllowList, CallbackSender } from "./callbacks";
import { JobWorker } from "./worker";
import { VERSION } from "../../version";

const WEBHOOK_RATE_PER_MINUTE = 60;

/** The webhook channel on its own listener (HTTP_HOST:HTTP_PORT), with its job worker. */
export async function startWebhookChannel(config: Config, db: Db, agent: Agent, log: Logger, opts: { callbackDelaysMs?: number[] } = {}) {
  const callbackHosts = new CallbackAllowList(config.http.callbackAllowHosts);
  const callbacks = new CallbackSender({
    db,
    secret: config.http.webhookSecret!,
    allow: callbackHosts,
    log,
    delaysMs: opts.callbackDelaysMs,
    userAgent: `service/${VERSION}`,
  });
  const worker = new JobWorker({
    db,
    agent,
    log,
    turnTimeoutMs: config.agent.turnTimeoutS * 1000,
    ended: (id) => void callbacks.jobEnded(id).catch((e) => log.error("job", { job_id: id, error: e })),
  });
  const app = webhookApp({
    db,
    worker,
    secret: config.http.webhookSecret!,
    limiter: new RateLimiter(WEBHOOK_RATE_PER_MINUTE),
    log,
    callbackHosts,
  });
  const server = Bun.serve({
    hostname: config.http.host,
    port: config.http.port,
    fetch(request, server) {
      clientIps.set(request, server.requestIP(request)?.address ?? "unknown");
      return app.fetch(request);
    },
    maxRequestBodySize: 16 * 1024 * 1024,
  });
  await worker.start();
  await callbacks.start();
  const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
  return { server, worker, callbacks, url: `http://${host}:${server.port}` };
}
