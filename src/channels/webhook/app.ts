import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { createHmac, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import { newUuid } from "../../conversation/ids";
import type { RateLimiter } from "../../auth/rate-limit";
import { sameSecret } from "../../auth/tokens";
import { storeUnavailable, type Db } from "../../store/db";
import { getJob, insertJob } from "../../store/jobs";
import { OWNER_ID } from "../../store/users";
import { callbackUrlProblem, type CallbackAllowList } from "./callbacks";
import { jobRecord } from "./record";
import { MAX_JSON_DEPTH, nestedTooDeep } from "../../http/body";
import type { Logger } from "../../log";
import type { JobWorker } from "./worker";

export const MAX_WEBHOOK_BODY = 64 * 1024;

/** The peer address of each request, recorded by the listener (the rate limit is per client IP). */
export const clientIps = new WeakMap<Request, string>();

export const WebhookRequest = Type.Object({
  user_id: Type.String({ minLength: 1, maxLength: 256 }),
  message: Type.String({ minLength: 1 }),
  conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /** Where the job record is POSTed when the job ends (see callbacks.ts). */
  callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
});
export type WebhookRequest = Static<typeof WebhookRequest>;

class WebhookError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface WebhookDeps {
  db: Db;
  worker: JobWorker;
  secret: string;
  limiter: RateLimiter;
  log: Logger;
  /** Destinations a callback_url may name (HTTP_CALLBACK_ALLOW_HOSTS). */
  callbackHosts: CallbackAllowList;
}

/** The webhook channel's own app: POST /webhook queues a job, GET /jobs/{id} reports it. */
export function webhookApp(d: WebhookDeps) {
  /** The rate limit, then the secret: `body` is what a signature may be computed over (none for a read). */
  const guard = (request: Request, ip: string, body?: Uint8Array) => {
    const wait = d.limiter.take(ip);
    if (wait) throw new WebhookError(429, `rate limit exceeded; retry in ${wait} s`, { "retry-after": String(wait) });
    if (!authorized(request, body, d.secret)) throw new WebhookError(401, "missing or invalid webhook secret");
  };
  const clientIp = (request: Request) => clientIps.get(request) ?? "unknown";

  // the path is taken from request.url whatever the Host header is (see src/app.ts)
  return new Elysia({ handler: { standardHostname: false } })
    .onError(({ code, error }) => {
      if (error instanceof WebhookError) return Response.json({ error: error.message }, { status: error.status, headers: error.headers });
      if (code === "NOT_FOUND") return Response.json({ error: "not found" }, { status: 404 });
      // the database is locked, full or read-only: the spec's 500, with the cause (never the statement, which quotes the message)
      const down = storeUnavailable(error);
      d.log.error(`webhook: ${down ? `the database is unavailable: ${down}` : ((error as Error)?.stack ?? String(error))}`);
      return Response.json({ error: down ? `the database is unavailable: ${down}` : "server error" }, { status: 500 });
    })
    .post(
      "/webhook",
      async ({ request }) => {
        const ip = clientIp(request);
        if (Number(request.headers.get("content-length") ?? 0) > MAX_WEBHOOK_BODY) {
          d.limiter.take(ip);
          throw new WebhookError(400, "body is larger than 64 KB");
        }
        const raw = new Uint8Array(await request.arrayBuffer());
        guard(request, ip, raw);
        if (raw.byteLength > MAX_WEBHOOK_BODY) throw new WebhookError(400, "body is larger than 64 KB");
        if (!/^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? "")) {
          throw new WebhookError(400, "Content-Type must be application/json");
        }
        const body = parseBody(raw);
        const refused = body.callback_url === undefined ? undefined : callbackUrlProblem(body.callback_url, d.callbackHosts);
        if (refused) throw new WebhookError(400, refused);
        const conversationId = body.conversation_id ?? newUuid();
        const job = await insertJob(d.db, {
          id: newUuid(),
          userId: OWNER_ID,
          source: "webhook",
          sender: body.user_id,
          conversationId,
          message: body.message,
          metadata: body.metadata ?? null,
          ...(body.callback_url ? { callbackUrl: body.callback_url, callbackStatus: "pending" as const } : {}),
        });
        d.worker.kick();
        return Response.json({ job_id: job.id, status: job.status, conversation_id: conversationId }, { status: 202 });
      },
      { parse: "none" },
    )
    .get("/jobs/:id", async ({ request, params }) => {
      guard(request, clientIp(request));
      const job = await getJob(d.db, params.id);
      if (job?.source !== "webhook") throw new WebhookError(404, "job not found");
      return jobRecord(job);
    });
}

/**
 * `X-Webhook-Secret` (constant time) or `X-Hub-Signature-256: sha256=<hmac of the raw body>`.
 * A request without a body (a read) needs the secret: the HMAC of an empty body never changes,
 * so it would be a second, static secret.
 */
function authorized(request: Request, body: Uint8Array | undefined, secret: string): boolean {
  const given = request.headers.get("x-webhook-secret");
  if (given !== null) return sameSecret(given, secret);
  const signature = request.headers.get("x-hub-signature-256");
  if (!body || !signature?.startsWith("sha256=")) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  const got = Buffer.from(signature.slice(7), "hex");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

function parseBody(raw: Uint8Array): WebhookRequest {
  const notJson = new WebhookError(400, "body is not valid JSON");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw notJson;
  }
  if (nestedTooDeep(text)) throw new WebhookError(400, `body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notJson;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new WebhookError(400, "body must be a JSON object");
  if (!Value.Check(WebhookRequest, value)) {
    const e = Value.Errors(WebhookRequest, value).First()!;
    const field = e.path.split("/")[1] || "body";
    const present = (value as Record<string, unknown>)[field] !== undefined;
    throw new WebhookError(400, present ? `${field}: ${e.message.toLowerCase()}` : `${field} is required`);
  }
  return value;
}
