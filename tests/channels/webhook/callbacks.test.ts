// Webhook callbacks: a receiver on loopback gets the job record, signed with the webhook
// secret, retried with backoff after non-2xx answers, the attempts counted in the job record;
// destinations outside HTTP_CALLBACK_ALLOW_HOSTS are refused; pending deliveries survive a
// restart. The retry schedule is shortened for the tests (the default spans 8 minutes).
import { createClient } from "@libsql/client";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CALLBACK_DELAYS_MS, CallbackAllowList, callbackUrlProblem } from "../../../src/channels/webhook/callbacks";
import { jobRecord } from "../../../src/channels/webhook/record";
import { getJob } from "../../../src/store/jobs";
import { startScriptedLLM, type ScriptedLLM } from "../../support/scripted-llm";
import { startTestService, type TestService } from "../../support/harness";
import { until } from "../../support/until";

const SECRET = "callback-test-secret-0123456789";

interface Received {
  body: string;
  headers: Headers;
}

/** A callback receiver on loopback that answers each request with the next status of `script` (then 200). */
function receiver(script: number[] = []) {
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
    script,
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

const env = (allow: string) => ({
  HTTP_ENABLED: "true",
  HTTP_WEBHOOK_SECRET: SECRET,
  HTTP_HOST: "127.0.0.1",
  HTTP_PORT: "0",
  HTTP_CALLBACK_ALLOW_HOSTS: allow,
});

async function hook(t: TestService, body: unknown) {
  const res = await fetch(`${t.service.webhookUrl}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const job = async (t: TestService, id: string) =>
  (await (await fetch(`${t.service.webhookUrl}/jobs/${id}`, { headers: { "x-webhook-secret": SECRET } })).json()) as any;

/** The job record as GET /jobs/{id} builds it, read from the database (polling costs no rate-limit budget). */
const stored = async (t: TestService, id: string) => jobRecord((await getJob(t.service.services.db, id))!) as any;

/** Polls the job record until `ok` holds (bounded), then returns it as GET /jobs/{id} answers. */
async function recordUntil(t: TestService, id: string, ok: (j: any) => boolean, timeoutMs = 10_000) {
  let j: any;
  await until(
    () => `the job record to match: ${JSON.stringify(j)}`,
    async () => ok((j = await stored(t, id))),
    { timeoutMs },
  );
  return job(t, id);
}

const sign = (body: string) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

let llm: ScriptedLLM;
const cleanup: (() => unknown)[] = [];
beforeAll(async () => {
  llm = await startScriptedLLM();
});
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});
afterAll(async () => {
  await llm.close();
});

describe("callbacks", () => {
  test("a receiver that fails twice gets the signed record a third time; the attempts are in the job record", async () => {
    const r = receiver([500, 503]);
    cleanup.push(r.stop);
    const t = await startTestService({ llm, env: env("127.0.0.1"), callbackDelaysMs: [50, 50, 50, 50, 50] });
    cleanup.push(() => t.stop());
    llm.enqueue({ text: "The lights are off." });
    const accepted = await hook(t, { user_id: "homelab", message: "turn the lights off", callback_url: r.url });
    expect(accepted.status).toBe(202);
    expect((await job(t, accepted.body.job_id)).callback).toEqual({ status: "pending", attempts: 0 });

    await r.waitFor(3);
    const done = await recordUntil(t, accepted.body.job_id, (j) => j.callback.status === "delivered");
    expect(done.callback).toEqual({ status: "delivered", attempts: 3 });
    expect(r.got.length).toBe(3);
    r.got.forEach((g, i) => {
      // every attempt is signed: HMAC-SHA256 of the exact body with the webhook secret
      expect(g.headers.get("x-webhook-signature")).toBe(sign(g.body));
      expect(g.headers.get("content-type")).toBe("application/json");
      const record = JSON.parse(g.body);
      expect(record).toMatchObject({
        id: accepted.body.job_id,
        status: "completed",
        response: "The lights are off.",
        user_id: "homelab",
        conversation_id: accepted.body.conversation_id,
        callback: { status: "pending", attempts: i + 1 },
      });
    });
    // the secret itself is never sent, nor logged
    expect(r.got.some((g) => g.body.includes(SECRET) || [...g.headers.values()].some((v) => v.includes(SECRET)))).toBe(false);
    expect(t.logLines.some((l) => l.includes(SECRET))).toBe(false);
    // a log line for the job, then one per attempt
    const lines = t.logLines.map((l) => JSON.parse(l));
    expect(lines.find((l) => l.msg === "job")).toMatchObject({ level: "info", job_id: accepted.body.job_id, status: "completed", source: "webhook" });
    expect(lines.filter((l) => l.msg === "callback attempt failed").map((l) => l.error)).toEqual(["HTTP 500", "HTTP 503"]);
    expect(lines.find((l) => l.msg === "callback delivered")).toMatchObject({ job_id: accepted.body.job_id, attempt: 3 });
  });

  test("a failed job is called back too; a receiver that never accepts ends as failed after the last attempt", async () => {
    const r = receiver([500, 500, 500]);
    cleanup.push(r.stop);
    const t = await startTestService({ llm, env: env("127.0.0.1"), callbackDelaysMs: [20, 20] });
    cleanup.push(() => t.stop());
    llm.enqueue({ error: { status: 400, message: "bad model" } });
    const accepted = await hook(t, { user_id: "homelab", message: "fail please", callback_url: r.url });
    const done = await recordUntil(t, accepted.body.job_id, (j) => j.callback.status === "failed");
    expect(done.status).toBe("failed");
    expect(done.callback).toEqual({ status: "failed", attempts: 3 });
    expect(r.got.length).toBe(3);
    expect(JSON.parse(r.got[0]!.body)).toMatchObject({ status: "failed", error: { code: "llm_error" } });
    const lines = t.logLines.map((l) => JSON.parse(l));
    expect(lines.find((l) => l.msg === "job")).toMatchObject({ level: "warn", status: "failed", error_code: "llm_error" });
    expect(lines.find((l) => l.msg === "callback failed")).toMatchObject({ level: "error", attempt: 3 });
  });

  test("a callback_url outside HTTP_CALLBACK_ALLOW_HOSTS is a 400 naming the variable; nothing is queued", async () => {
    const t = await startTestService({ llm, env: env("hooks.example.com,10.0.0.0/8") });
    cleanup.push(() => t.stop());
    const before = (await t.api("/api/jobs").then((r) => r.json()) as any).jobs.length;
    for (const url of ["http://127.0.0.1:9/hook", "http://evil.example.net/x", "http://hooks.example.com.evil.net/", "ftp://hooks.example.com/", "not a url"]) {
      const r = await hook(t, { user_id: "u", message: "m", callback_url: url });
      expect(r.status).toBe(400);
      expect(Object.keys(r.body)).toEqual(["error"]);
      if (url.startsWith("http://1") || url.includes("evil")) expect(r.body.error).toContain("HTTP_CALLBACK_ALLOW_HOSTS");
    }
    expect(((await t.api("/api/jobs").then((r) => r.json())) as any).jobs.length).toBe(before);
    // allowed: a listed name and an address in the CIDR (the job is queued; its delivery is not awaited)
    llm.enqueue({ text: "a" }, { text: "b" });
    const named = await hook(t, { user_id: "u", message: "m", callback_url: "https://hooks.example.com/in" });
    const inRange = await hook(t, { user_id: "u", message: "m", callback_url: "http://10.1.2.3:8080/in" });
    expect([named.status, inRange.status]).toEqual([202, 202]);
    // both run here (their deliveries are not awaited), so that their answers are not left for the next test
    for (const j of [named, inRange]) await recordUntil(t, j.body.job_id, (x) => x.status === "completed");
  });

  test("with HTTP_CALLBACK_ALLOW_HOSTS empty (the default) every callback_url is refused, naming it", async () => {
    const t = await startTestService({ llm, env: env("") });
    cleanup.push(() => t.stop());
    const r = await hook(t, { user_id: "u", message: "m", callback_url: "http://127.0.0.1:9/hook" });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain("HTTP_CALLBACK_ALLOW_HOSTS");
    // a job without callback_url has no callback in its record
    llm.enqueue({ text: "fine" });
    const plain = await hook(t, { user_id: "u", message: "m" });
    expect(plain.status).toBe(202);
    // it runs to its end here, so that its scripted answer is not left for the next test
    expect((await recordUntil(t, plain.body.job_id, (j) => j.status === "completed")).callback).toBeUndefined();
  });

  test("a pending delivery survives a restart and is made after it, when it is due", async () => {
    const home = join(mkdtempSync(join(tmpdir(), "callback-restart-")), "home");
    cleanup.push(() => rmSync(join(home, ".."), { recursive: true, force: true }));
    const r = receiver([500]);
    cleanup.push(r.stop);
    // the retry is due in a minute: the service stops long before that
    const first = await startTestService({ llm, env: env("127.0.0.1"), keepHome: home, callbackDelaysMs: [60_000] });
    llm.enqueue({ text: "done before the restart" });
    const accepted = await hook(first, { user_id: "u", message: "m", callback_url: r.url });
    await recordUntil(first, accepted.body.job_id, (j) => j.callback.attempts === 1);
    const due = (await getJob(first.service.services.db, accepted.body.job_id))!.callbackNextAt!;
    expect(due).toBeGreaterThan(Date.now() + 50_000);
    await first.stop();
    expect(r.got.length).toBe(1);

    // the minute passes while the service is down
    const db = createClient({ url: `file:${join(home, "service.db")}` });
    await db.execute({ sql: "UPDATE jobs SET callback_next_at = ? WHERE id = ?", args: [Date.now() - 1, accepted.body.job_id] });
    db.close();
    const second = await startTestService({ llm, env: env("127.0.0.1"), keepHome: home, callbackDelaysMs: [60_000] });
    cleanup.push(() => second.stop());
    const done = await recordUntil(second, accepted.body.job_id, (j) => j.callback.status === "delivered");
    expect(done.callback).toEqual({ status: "delivered", attempts: 2 });
    expect(JSON.parse(r.got[1]!.body)).toMatchObject({ id: accepted.body.job_id, response: "done before the restart" });
  });
});

describe("the allow list and the schedule", () => {
  test("names, *.subdomains, IPs and CIDRs (v4 and v6); names are not resolved", () => {
    const allow = new CallbackAllowList(["hooks.lan", "*.example.com", "192.168.1.10", "10.0.0.0/8", "fd00::/8", "[::1]"]);
    const ok = (u: string) => callbackUrlProblem(u, allow) === undefined;
    expect(ok("http://hooks.lan/x")).toBe(true);
    expect(ok("http://HOOKS.lan./x")).toBe(true);
    expect(ok("https://a.b.example.com/")).toBe(true);
    expect(ok("https://example.com/")).toBe(false);
    expect(ok("http://192.168.1.10:8080/")).toBe(true);
    expect(ok("http://192.168.1.11/")).toBe(false);
    expect(ok("http://10.200.0.1/")).toBe(true);
    expect(ok("http://[fd12::1]/")).toBe(true);
    expect(ok("http://[::1]:9000/")).toBe(true);
    expect(ok("http://localhost/")).toBe(false);
    expect(() => new CallbackAllowList(["10.0.0.0/33"])).toThrow("HTTP_CALLBACK_ALLOW_HOSTS");
  });

  test("an entry may name a port, and then allows only that one; without a port, any", () => {
    const allow = new CallbackAllowList(["hooks.lan:8080", "*.example.com:443", "192.168.1.10:9000", "10.0.0.0/8:8443", "[fd00::1]:8080", "nas.lan"]);
    const ok = (u: string) => callbackUrlProblem(u, allow) === undefined;
    expect(ok("http://hooks.lan:8080/x")).toBe(true);
    expect(ok("http://hooks.lan/x")).toBe(false);
    expect(ok("http://hooks.lan:1/x")).toBe(false);
    expect(ok("https://a.example.com/")).toBe(true); // 443, the scheme's own
    expect(ok("http://a.example.com/")).toBe(false); // 80
    expect(ok("http://192.168.1.10:9000/")).toBe(true);
    expect(ok("http://192.168.1.10:9001/")).toBe(false);
    expect(ok("https://10.2.3.4:8443/")).toBe(true);
    expect(ok("https://10.2.3.4/")).toBe(false);
    expect(ok("http://[fd00::1]:8080/")).toBe(true);
    expect(ok("http://[fd00::1]:8081/")).toBe(false);
    expect(ok("http://nas.lan:1880/")).toBe(true);
    expect(ok("http://nas.lan/")).toBe(true);
    expect(callbackUrlProblem("http://hooks.lan:1/x", allow)).toBe("callback_url: hooks.lan:1 is not in HTTP_CALLBACK_ALLOW_HOSTS");
    for (const bad of ["hooks.lan:0", "hooks.lan:70000", "hooks.lan:http", ":8080", "a:b:c"]) {
      expect(() => new CallbackAllowList([bad])).toThrow("HTTP_CALLBACK_ALLOW_HOSTS");
    }
  });

  test("the default schedule makes at least 5 attempts over at least a minute", () => {
    expect(CALLBACK_DELAYS_MS.length + 1).toBeGreaterThanOrEqual(5);
    expect(CALLBACK_DELAYS_MS.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(60_000);
  });
});
