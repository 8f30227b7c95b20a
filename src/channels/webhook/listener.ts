import { RateLimiter } from "../../rate-limit";
import type { Config } from "../../config/schema";
import type { Logger } from "../../log";
import type { Db } from "../../store/db";
import { clientIps, MAX_WAIT_S, webhookApp } from "./app";
import type { JobQueue } from "./queue";
import { compileSources } from "./sources";

const WEBHOOK_RATE_PER_MINUTE = 60;

/** The webhook channel's listener (HTTP_HOST:HTTP_PORT), in front of the job queue. */
export function startWebhookListener(config: Config, db: Db, queue: JobQueue, log: Logger) {
  const app = webhookApp({
    db,
    worker: queue.worker,
    watch: queue.watch,
    secret: config.http.webhookSecret!,
    limiter: new RateLimiter(WEBHOOK_RATE_PER_MINUTE),
    log,
    callbackHosts: queue.callbackHosts,
    sources: compileSources(config.http.sources),
  });
  const server = Bun.serve({
    hostname: config.http.host,
    port: config.http.port,
    fetch(request, server) {
      clientIps.set(request, server.requestIP(request)?.address ?? "unknown");
      return app.fetch(request);
    },
    maxRequestBodySize: 16 * 1024 * 1024,
    // a long poll (GET /jobs/{id}?wait=60) is silent for its whole wait
    idleTimeout: MAX_WAIT_S + 15,
  });
  const host = config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host;
  return { server, url: `http://${host}:${server.port}` };
}
