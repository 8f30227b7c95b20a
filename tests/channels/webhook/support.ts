// What the webhook tests share: requests to the channel's own listener, the job rows they
// leave, a callback receiver on loopback, and signatures made by the senders' own libraries.
import { expect } from "bun:test";
import { Webhook } from "standardwebhooks";
import { getJob, listJobs, type JobRow } from "../../../src/store/jobs";
import { OWNER_ID } from "../../../src/store/users";
import type { TestService } from "../../support/harness";
import { until } from "../../support/until";

export const SECRET = "webhook-test-secret-0123456789";

export const webhookEnv = (extra: Record<string, string> = {}) => ({
  HTTP_ENABLED: "true",
  HTTP_WEBHOOK_SECRET: SECRET,
  HTTP_HOST: "127.0.0.1",
  HTTP_PORT: "0",
  ...extra,
});

export type Reply = { status: number; body: any; headers: Headers };

/** A request to the webhook listener; `secret: null` sends none. Bodies that are objects go as JSON, `raw` as it is. */
export async function hook(
  t: TestService,
  path: string,
  init: { method?: string; body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string>; secret?: string | null } = {},
): Promise<Reply> {
  const headers = new Headers(init.headers);
  const secret = init.secret === undefined ? SECRET : init.secret;
  if (secret !== null) headers.set("x-webhook-secret", secret);
  let body: string | Uint8Array | undefined = init.raw;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const res = await fetch(t.service.webhookUrl + path, { method: init.method ?? (body === undefined ? "GET" : "POST"), headers, body });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Re-reads the job row until it has finished (bounded); the database read costs no rate-limit budget. */
export async function finished(t: TestService, id: string, timeoutMs = 10_000): Promise<JobRow> {
  return jobUntil(t, id, (j) => j.status === "completed" || j.status === "failed", timeoutMs);
}

/** Re-reads the job row until `ok` holds (bounded). */
export function jobUntil(t: TestService, id: string, ok: (j: JobRow) => boolean, timeoutMs = 10_000): Promise<JobRow> {
  let job: JobRow | undefined;
  return until(
    () => `job ${id}, still ${job?.status ?? "missing"}`,
    async () => {
      job = await getJob(t.service.services.db, id);
      return job && ok(job) && job;
    },
    { timeoutMs, everyMs: 5 },
  );
}

/** POSTs a job that must be accepted; returns the 202 body. */
export async function accept(t: TestService, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const r = await hook(t, "/webhook", { body, headers });
  expect(r.status).toBe(202);
  return r.body as { job_id: string; status: string; conversation_id: string };
}

export const jobCount = async (t: TestService) => (await listJobs(t.service.services.db, OWNER_ID, 10_000)).length;

/** The job's message as the LLM got it (after the <user-context> block). */
export const lastUser = (body: any) => [...body.messages].reverse().find((m: any) => m.role === "user")?.content as string;
export const messageOf = (body: any) => lastUser(body).split("\n\n").at(-1)!;

/** A promise the test resolves: holds the scripted LLM inside a step. */
export function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

/** The secret as a Standard Webhooks library takes it: `whsec_` and the base64 of its bytes. */
export const whsec = (secret: string) => `whsec_${Buffer.from(secret).toString("base64")}`;

/** Standard Webhooks headers for a body, made by the standardwebhooks package itself. */
export function standardHeaders(body: string, opts: { id?: string; at?: Date; secret?: string } = {}): Record<string, string> {
  const id = opts.id ?? `msg_${crypto.randomUUID()}`;
  const at = opts.at ?? new Date();
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(whsec(opts.secret ?? SECRET)).sign(id, at, body),
  };
}

export interface Received {
  body: string;
  headers: Headers;
}

/** A callback receiver on loopback that answers each request with the next status of `script` (then 200). */
export function receiver(script: number[] = []) {
  const got: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      got.push({ body: await req.text(), headers: req.headers });
      for (const w of waiters.splice(0)) w();
      return new Response("", { status: script.shift() ?? 200 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    got,
    /** Resolves once `n` requests have arrived (bounded). */
    async waitFor(n: number, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      while (got.length < n) {
        if (Date.now() > end) throw new Error(`only ${got.length} of ${n} callbacks arrived`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    stop: () => server.stop(true),
  };
}
