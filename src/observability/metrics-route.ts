import { Elysia } from "elysia";
import { sameSecret } from "../auth/tokens";
import { AuthFailure } from "../errors";
import type { Metrics } from "./metrics";

/**
 * GET /metrics in the Prometheus text format, for a scraper holding one of `tokens` (METRICS_TOKEN,
 * the instance token) as its bearer; a wrong or missing one is the plain-text 401 of every route.
 */
export function metricsRoutes(metrics: Metrics, tokens: string[]) {
  return new Elysia({ name: "metrics" }).get("/metrics", async ({ request }) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    if (!bearer || !tokens.some((t) => sameSecret(bearer, t))) throw AuthFailure.unauthorized();
    return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType } });
  });
}
