import { Type, type Static } from "@sinclair/typebox";
import { fieldName, schemaProblems } from "../../schema-problems";
import { Elysia } from "elysia";
import { newUuid } from "../../conversation/ids";
import type { RateLimiter } from "../../rate-limit";
import { storeUnavailable, type Db } from "../../store/db";
import { getJob, insertJob, laneOf, retryFailedJob, type JobRow, type NewJob } from "../../store/jobs";
import { OWNER_ID } from "../../store/users";
import { callbackUrlProblem, type CallbackAllowList } from "./callbacks";
import { jobRecord, jobSettled } from "./record";
import { MAX_JSON_DEPTH, nestedTooDeep } from "../../http/body";
import type { Logger } from "../../log";
import type { JobWorker } from "./worker";
import type { JobWatch } from "./watch";
import { signedStandard, Unverified, verify, verifyStandard } from "./signatures";
import { BadDelivery, readDelivery, type Source } from "./sources";

export const MAX_WEBHOOK_BODY = 64 * 1024;
/** The longest `GET /jobs/{id}?wait=N`, in seconds. */
export const MAX_WAIT_S = 60;

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
  watch: JobWatch;
  secret: string;
  limiter: RateLimiter;
  log: Logger;
  /** Destinations a callback_url may name (HTTP_CALLBACK_ALLOW_HOSTS). */
  callbackHosts: CallbackAllowList;
  /** The named sources of `POST /webhook/{name}` (http.sources). */
  sources: Map<string, Source>;
}

/** Jobs the channel shows and queues again: those it accepted, from `/webhook` and its named sources (not routines'). */
const ownJob = (j: JobRow | undefined): j is JobRow => j?.source === "webhook" || !!j?.source.startsWith("webhook:");

/**
 * The webhook channel's own app: `POST /webhook` and `POST /webhook/{source}` queue a job,
 * `GET /jobs/{id}` reports it (and waits for its end with `?wait=N`), `POST /jobs/{id}/retry`
 * queues a failed one again.
 */
export function webhookApp(d: WebhookDeps) {
  const clientIp = (request: Request) => clientIps.get(request) ?? "unknown";
  const rateLimit = (ip: string) => {
    const wait = d.limiter.take(ip);
    if (wait) throw new WebhookError(429, `rate limit exceeded; retry in ${wait} s`, { "retry-after": String(wait) });
  };
  /** The body, at most 64 KB, after the rate limit (every request counts). */
  const readBody = async (request: Request): Promise<Uint8Array> => {
    const ip = clientIp(request);
    if (Number(request.headers.get("content-length") ?? 0) > MAX_WEBHOOK_BODY) {
      rateLimit(ip);
      throw new WebhookError(400, "body is larger than 64 KB");
    }
    const raw = new Uint8Array(await request.arrayBuffer());
    rateLimit(ip);
    if (raw.byteLength > MAX_WEBHOOK_BODY) throw new WebhookError(400, "body is larger than 64 KB");
    return raw;
  };
  const checked = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      if (e instanceof Unverified) throw new WebhookError(401, e.message);
      throw e;
    }
  };
  /** A read or a retry: the rate limit, then `X-Webhook-Secret` (a signature of no body is no credential). */
  const guardRead = (request: Request) => {
    rateLimit(clientIp(request));
    checked(() => verify("secret", request.headers, undefined, d.secret));
  };

  /** Stores the job (once per idempotency key) and answers 202, or 200 with the first job for a key seen before. */
  const accept = async (request: Request, raw: Uint8Array, job: Omit<NewJob, "id" | "idempotencyKey" | "requestHash">, deliveryId?: string | null) => {
    const key = idempotencyKey(request.headers, deliveryId);
    const requestHash = key === undefined ? undefined : Bun.CryptoHasher.hash("sha256", raw, "hex");
    const { job: stored, replayed } = await insertJob(d.db, { ...job, id: newUuid(), ...(key === undefined ? {} : { idempotencyKey: key, requestHash }) });
    if (!replayed) {
      d.worker.kick(laneOf(stored));
      return Response.json({ job_id: stored.id, status: stored.status, conversation_id: stored.conversationId }, { status: 202 });
    }
    if ((stored as JobRow).requestHash !== requestHash) {
      throw new WebhookError(422, "this Idempotency-Key was used within the last 24 h with another body; use a new key for a new request");
    }
    const first = stored as JobRow;
    return Response.json(
      { job_id: first.id, status: first.status, conversation_id: first.conversationId, ...(first.status === "completed" && first.response !== null ? { response: first.response } : {}) },
      { status: 200, headers: { "idempotent-replayed": "true" } },
    );
  };

  // the path is taken from request.url whatever the Host header is (see src/app.ts)
  return new Elysia({ handler: { standardHostname: false } })
    .onError(({ code, error }) => {
      if (error instanceof WebhookError) return Response.json({ error: error.message }, { status: error.status, headers: error.headers });
      if (error instanceof BadDelivery) return Response.json({ error: error.message }, { status: 400 });
      if (code === "NOT_FOUND") return Response.json({ error: "not found" }, { status: 404 });
      // the database is locked, full or read-only: the spec's 500, with the cause (never the statement, which quotes the message)
      const down = storeUnavailable(error);
      d.log.error(`webhook: ${down ? `the database is unavailable: ${down}` : ((error as Error)?.stack ?? String(error))}`);
      return Response.json({ error: down ? `the database is unavailable: ${down}` : "server error" }, { status: 500 });
    })
    .post(
      "/webhook",
      async ({ request }) => {
        const raw = await readBody(request);
        checked(() => {
          const { headers } = request;
          // the secret header, else a Standard Webhooks signature (with its timestamp), else GitHub's HMAC
          if (headers.has("x-webhook-secret")) verify("secret", headers, raw, d.secret);
          else if (signedStandard(headers)) verifyStandard(headers, raw, d.secret);
          else verify("github", headers, raw, d.secret);
        });
        if (!/^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? "")) {
          throw new WebhookError(400, "Content-Type must be application/json");
        }
        const body = parseBody(raw);
        const refused = body.callback_url === undefined ? undefined : callbackUrlProblem(body.callback_url, d.callbackHosts);
        if (refused) throw new WebhookError(400, refused);
        return accept(request, raw, {
          userId: OWNER_ID,
          source: "webhook",
          sender: body.user_id,
          conversationId: body.conversation_id ?? newUuid(),
          message: body.message,
          metadata: body.metadata ?? null,
          ...(body.callback_url ? { callbackUrl: body.callback_url, callbackStatus: "pending" as const } : {}),
        });
      },
      { parse: "none" },
    )
    .post(
      "/webhook/:source",
      async ({ request, params }) => {
        const source = d.sources.get(params.source);
        const raw = await readBody(request);
        if (!source) throw new WebhookError(404, `no webhook source is named ${params.source} (http.sources)`);
        checked(() => verify(source.verify, request.headers, raw, source.secret));
        const rendered = source.render(await readDelivery(raw, request.headers));
        const delivery = source.verify === "github" ? "x-github-delivery" : source.verify === "gitea" ? "x-gitea-delivery" : undefined;
        return accept(
          request,
          raw,
          {
            userId: OWNER_ID,
            source: `webhook:${source.name}`,
            sender: rendered.userId,
            conversationId: rendered.conversationId ?? newUuid(),
            message: rendered.message,
            metadata: null,
            trusted: source.trusted,
            memory: source.memory,
          },
          delivery && request.headers.get(delivery),
        );
      },
      { parse: "none" },
    )
    .get("/jobs/:id", async ({ request, params }) => {
      guardRead(request);
      const wait = waitSeconds(new URL(request.url).searchParams);
      const watching = d.watch.wait(params.id, wait * 1000);
      try {
        let job = await getJob(d.db, params.id);
        if (!ownJob(job)) throw new WebhookError(404, "job not found");
        if (wait && !jobSettled(job)) {
          await watching.done;
          job = (await getJob(d.db, params.id)) ?? job;
        }
        return jobRecord(job);
      } finally {
        watching.cancel();
      }
    })
    .post("/jobs/:id/retry", async ({ request, params }) => {
      guardRead(request);
      const job = await getJob(d.db, params.id);
      if (!ownJob(job)) throw new WebhookError(404, "job not found");
      const queued = await retryFailedJob(d.db, job.id);
      if (!queued) throw new WebhookError(409, `the job is ${job.status}: only a failed job can be queued again`);
      d.worker.kick();
      return Response.json({ job_id: queued.id, status: queued.status, conversation_id: queued.conversationId }, { status: 202 });
    });
}

/** `?wait=N`: whole seconds from 0 to 60; absent is 0. */
function waitSeconds(params: URLSearchParams): number {
  const raw = params.get("wait");
  if (raw === null || raw === "") return 0;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) > MAX_WAIT_S) throw new WebhookError(400, `wait must be a whole number of seconds from 0 to ${MAX_WAIT_S}`);
  return Number(raw);
}

/** 1 to 255 printable ASCII characters. */
const KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * The request's idempotency key: `Idempotency-Key`, else the Standard Webhooks `webhook-id`,
 * else the sender's own delivery id (GitHub's and Gitea's, the same on a redelivery).
 */
function idempotencyKey(headers: Headers, deliveryId?: string | null): string | undefined {
  for (const [name, value] of [["Idempotency-Key", headers.get("idempotency-key")], ["webhook-id", headers.get("webhook-id")]] as const) {
    if (value === null) continue;
    if (!KEY.test(value)) throw new WebhookError(400, `${name} must be 1 to 255 printable ASCII characters`);
    return value;
  }
  return deliveryId && KEY.test(deliveryId) ? deliveryId : undefined;
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
  const [problem] = schemaProblems(WebhookRequest, value);
  if (problem) throw new WebhookError(400, `${fieldName(problem.pointer) || "body"} ${problem.says.replace(/\.$/, "")}`);
  return value as WebhookRequest;
}
