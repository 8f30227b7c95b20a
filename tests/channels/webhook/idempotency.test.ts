// A webhook request acts once: the same Idempotency-Key (or Standard Webhooks webhook-id) with
// the same body answers the first job, another body is refused, concurrent duplicates make
// one job, and a key is held for 24 h. Standard Webhooks signatures are checked with their
// timestamp (a captured request cannot be replayed later) and sent on callbacks, both
// verified against the standardwebhooks package.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { jobs } from "../../support/tables";
import { startTestService, type TestService } from "../../support/harness";
import { accept, finished, hook, jobCount, receiver, SECRET, standardHeaders, webhookEnv, whsec } from "./support";

let t: TestService;
const cb = receiver();

beforeAll(async () => {
  t = await startTestService({ env: webhookEnv({ HTTP_CALLBACK_ALLOW_HOSTS: "127.0.0.1" }), callbackDelaysMs: [20, 20] });
});
afterAll(async () => {
  await t.stop();
  cb.stop();
});

describe("Idempotency-Key", () => {
  test("the same key and body: 202, then 200 with the first job and Idempotent-Replayed: true; one job", async () => {
    const before = await jobCount(t);
    const body = { user_id: "ha", message: "turn the heater on", conversation_id: "heater" };
    const first = await hook(t, "/webhook", { body, headers: { "idempotency-key": "heater-on-1" } });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await hook(t, "/webhook", { body, headers: { "idempotency-key": "heater-on-1" } });
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toMatchObject({ job_id: first.body.job_id, conversation_id: "heater" });
    expect(await jobCount(t)).toBe(before + 1);
    // once it has completed, a replay answers with its answer
    await finished(t, first.body.job_id);
    const third = await hook(t, "/webhook", { body, headers: { "idempotency-key": "heater-on-1" } });
    expect(third.status).toBe(200);
    expect(third.body).toEqual({ job_id: first.body.job_id, status: "completed", conversation_id: "heater", response: expect.any(String) });
    expect(t.llm.chatRequests().filter((r) => JSON.stringify(r.body).includes("turn the heater on"))).toHaveLength(1);
  });

  test("the same key with another body: 422, nothing queued", async () => {
    await accept(t, { user_id: "ha", message: "open the garage" }, { "idempotency-key": "garage-1" });
    const before = await jobCount(t);
    const other = await hook(t, "/webhook", { body: { user_id: "ha", message: "close the garage" }, headers: { "idempotency-key": "garage-1" } });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ error: expect.stringContaining("Idempotency-Key") });
    expect(await jobCount(t)).toBe(before);
  });

  test("twenty identical requests at once: one job, one 202, nineteen replays", async () => {
    const before = await jobCount(t);
    const body = { user_id: "nodered", message: "concurrent once" };
    const replies = await Promise.all(Array.from({ length: 20 }, () => hook(t, "/webhook", { body, headers: { "idempotency-key": "burst-1" } })));
    expect(replies.filter((r) => r.status === 202)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    expect(new Set(replies.map((r) => r.body.job_id)).size).toBe(1);
    expect(await jobCount(t)).toBe(before + 1);
  });

  test("a key is held for 24 h: after that the same key makes a new job", async () => {
    const body = { user_id: "cron", message: "daily report" };
    const first = await accept(t, body, { "idempotency-key": "daily-1" });
    // the first job was accepted a day and a minute ago
    const old = new Date(Date.now() - 24 * 3600_000 - 60_000).toISOString();
    await t.service.services.db.update(jobs).set({ createdAt: old }).where(eq(jobs.id, first.job_id));
    const again = await hook(t, "/webhook", { body, headers: { "idempotency-key": "daily-1" } });
    expect(again.status).toBe(202);
    expect(again.body.job_id).not.toBe(first.job_id);
  });

  test("a malformed key is a 400; nothing queued", async () => {
    const before = await jobCount(t);
    for (const key of ["x".repeat(256), "héllo", "tab\tkey"]) {
      const r = await hook(t, "/webhook", { body: { user_id: "a", message: "b" }, headers: { "idempotency-key": key } });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("Idempotency-Key");
    }
    expect(await jobCount(t)).toBe(before);
    // 255 printable characters are fine
    expect((await hook(t, "/webhook", { body: { user_id: "a", message: "b" }, headers: { "idempotency-key": "k".repeat(255) } })).status).toBe(202);
  });
});

describe("Standard Webhooks", () => {
  test("a request signed by the standardwebhooks package is accepted; the same request again is the same job", async () => {
    const raw = JSON.stringify({ user_id: "n8n", message: "signed and sealed" });
    const headers = { "content-type": "application/json", ...standardHeaders(raw) };
    const first = await hook(t, "/webhook", { raw, headers, secret: null });
    expect(first.status).toBe(202);
    const before = await jobCount(t);
    // a captured request sent again within the 5 minutes: its webhook-id makes it the same job
    const replay = await hook(t, "/webhook", { raw, headers, secret: null });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.job_id).toBe(first.body.job_id);
    expect(await jobCount(t)).toBe(before);
  });

  test("a timestamp more than 5 minutes away is 401, however well signed; so is a wrong signature", async () => {
    const before = await jobCount(t);
    const raw = JSON.stringify({ user_id: "n8n", message: "stale" });
    for (const at of [new Date(Date.now() - 5 * 60_000 - 5_000), new Date(Date.now() + 5 * 60_000 + 5_000)]) {
      const r = await hook(t, "/webhook", { raw, headers: { "content-type": "application/json", ...standardHeaders(raw, { at }) }, secret: null });
      expect(r.status).toBe(401);
      expect(r.body.error).toContain("5 minutes");
    }
    const wrong = await hook(t, "/webhook", { raw, headers: { "content-type": "application/json", ...standardHeaders(raw, { secret: "another-secret-0123456789" }) }, secret: null });
    expect(wrong.status).toBe(401);
    const tampered = standardHeaders(raw);
    const other = await hook(t, "/webhook", { raw: raw.replace("stale", "fresh"), headers: { "content-type": "application/json", ...tampered }, secret: null });
    expect(other.status).toBe(401);
    // 4 minutes off is within the tolerance
    const ok = await hook(t, "/webhook", { raw, headers: { "content-type": "application/json", ...standardHeaders(raw, { at: new Date(Date.now() - 4 * 60_000) }) }, secret: null });
    expect(ok.status).toBe(202);
    expect(await jobCount(t)).toBe(before + 1);
  });

  test("a callback carries webhook-id, webhook-timestamp and webhook-signature that the package verifies, beside X-Webhook-Signature", async () => {
    const job = await accept(t, { user_id: "ha", message: "call me back", callback_url: cb.url });
    await finished(t, job.job_id);
    await cb.waitFor(1);
    const got = cb.got.at(-1)!;
    const record = JSON.parse(got.body);
    expect(record).toMatchObject({ id: job.job_id, status: "completed", attempts: 1 });
    const verified = new Webhook(whsec(SECRET)).verify(got.body, Object.fromEntries(got.headers));
    expect(verified).toEqual(record);
    expect(got.headers.get("webhook-id")).toMatch(new RegExp(`^msg_${job.job_id}_\\d+$`));
    expect(got.headers.get("x-webhook-signature")).toMatch(/^sha256=[0-9a-f]{64}$/);
    // a receiver with another secret refuses it
    expect(() => new Webhook(whsec("not-the-secret-0123456789")).verify(got.body, Object.fromEntries(got.headers))).toThrow();
  });
});
