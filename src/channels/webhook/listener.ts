import type { Agent } from "../../agent/turns";
import { RateLimiter } from "../../auth/rate-limit";
import type { Config } from "../../config/schema";
import type { Db } from "../../store/db";
import { clientIps, webhookApp } from "./app";
import { JobWorker } from "./worker";

const WEBHOOK_RATE_PER_MINUTE = 60;

/** The webhook channel on its own listener (HTTP_HOST:HTTP_PORT), with its job worker. */
export async function startWebhookChannel(config: Config, db: Db, agent: Agent, log: (m: string) => void) {
  const worker = new JobWorker({ db, agent, log, turnTimeoutMs: config.agent.turnTimeoutS * 1000 });
  const app = webhookApp({
    db,
    worker,
    secret: config.http.webhookSecret!,
    limiter: new RateLimiter(WEBHOOK_RATE_PER_MINUTE),
    log,
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
  const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
  return { server, worker, url: `http://${host}:${server.port}` };
}
