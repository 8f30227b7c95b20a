// A job whose turn fails because the LLM is away (unreachable, 429, 5xx after the turn's own
// retries) runs again later, its failed attempt undone, until HTTP_JOB_MAX_ATTEMPTS; the
// record counts `attempts`. A request the provider refuses fails at once. POST
// /jobs/{id}/retry queues a failed job again. The delays are shortened through the service's
// option (the defaults are 30 s, 2 min, 10 min).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { JOB_RETRY_DELAYS_MS } from "../../../src/channels/webhook/worker";
import { transientFailure } from "../../../src/llm/transient";
import { items } from "../../support/tables";
import { startTestService, type TestService } from "../../support/harness";
import { accept, finished, hook, messageOf, receiver, jobUntil, webhookEnv } from "./support";

const DELAYS = [150, 150, 150];

describe("transient failures", () => {
  let t: TestService;
  const cb = receiver();
  beforeAll(async () => {
    t = await startTestService({ env: webhookEnv({ HTTP_JOB_MAX_ATTEMPTS: "3", HTTP_CALLBACK_ALLOW_HOSTS: "127.0.0.1" }), jobRetryDelaysMs: DELAYS, callbackDelaysMs: [20] });
  });
  afterAll(async () => {
    await t.stop();
    cb.stop();
  });

  test("an LLM answering 503 then coming back: the job waits, runs again and completes; its thread holds the exchange once", async () => {
    t.llm.reset();
    t.llm.enqueue({ error: { status: 503, message: "loading model" } }, { text: "warm now" });
    const job = await accept(t, { user_id: "ha", message: "is it warm?", conversation_id: "heat", callback_url: cb.url });
    const waiting = await jobUntil(t, job.job_id, (j) => j.status === "queued" && j.attempts === 1);
    expect(waiting.error).toEqual({ code: "llm_error", message: expect.stringContaining("503") });
    const record = (await hook(t, `/jobs/${job.job_id}`)).body;
    // (read before toMatchObject, which puts its matchers in the object it is given)
    const next = Date.parse(record.next_attempt_at);
    expect(next).toBeGreaterThan(Date.now() - 1_000);
    expect(record).toMatchObject({ status: "queued", attempts: 1, error: { code: "llm_error" } });
    // no callback for a job that has not ended
    expect(cb.got).toHaveLength(0);
    const done = await finished(t, job.job_id);
    expect(done).toMatchObject({ status: "completed", attempts: 2, response: "warm now", error: null });
    // the second request saw the message once: the failed attempt left nothing in the thread
    const second = t.llm.chatRequests()[1]!.body;
    expect(second.messages.filter((m: any) => m.role === "user")).toHaveLength(1);
    const stored = await t.service.services.db.select().from(items).where(eq(items.threadId, done.threadId!));
    expect(stored.filter((i) => i.data.type === "message" && (i.data as any).role === "user")).toHaveLength(1);
    await cb.waitFor(1);
    expect(JSON.parse(cb.got[0]!.body)).toMatchObject({ id: job.job_id, status: "completed", attempts: 2 });
  });

  test("still away after HTTP_JOB_MAX_ATTEMPTS runs: the job fails with the last error, one callback", async () => {
    t.llm.reset();
    t.llm.enqueue(...[429, 502, 500].map((status) => ({ error: { status, message: "busy" } })));
    const before = cb.got.length;
    const job = await accept(t, { user_id: "ha", message: "try hard", callback_url: cb.url });
    const failed = await finished(t, job.job_id);
    expect(failed).toMatchObject({ status: "failed", attempts: 3, error: { code: "llm_error", message: expect.stringContaining("500") } });
    expect(t.llm.chatRequests()).toHaveLength(3);
    // the delays were waited: the runs are apart
    const at = t.llm.chatRequests().map((r) => r.at);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(DELAYS[0]! - 20);
    await cb.waitFor(before + 1);
    expect(cb.got.slice(before).map((g) => JSON.parse(g.body).status)).toEqual(["failed"]);
  });

  test("a request the provider refuses (400) is not transient: the job fails at once", async () => {
    t.llm.reset();
    t.llm.enqueue({ error: { status: 400, message: "bad request" } });
    const job = await accept(t, { user_id: "ha", message: "refused" });
    expect(await finished(t, job.job_id)).toMatchObject({ status: "failed", attempts: 1 });
  });

  test("POST /jobs/{id}/retry queues a failed job again; it runs and completes", async () => {
    t.llm.reset();
    t.llm.enqueue({ error: { status: 400, message: "bad request" } }, { text: "second time lucky" });
    const job = await accept(t, { user_id: "ha", message: "retry me" });
    await finished(t, job.job_id);
    expect((await hook(t, `/jobs/${job.job_id}/retry`, { method: "POST", secret: null })).status).toBe(401);
    const r = await hook(t, `/jobs/${job.job_id}/retry`, { method: "POST" });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ job_id: job.job_id, status: "queued" });
    const done = await finished(t, job.job_id);
    expect(done).toMatchObject({ status: "completed", response: "second time lucky", attempts: 1 });
    expect(t.llm.chatRequests().map((x) => messageOf(x.body))).toEqual(["retry me", "retry me"]);
    // a completed job is not queued again; an unknown one is not found
    const again = await hook(t, `/jobs/${job.job_id}/retry`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(again.body.error).toContain("completed");
    expect((await hook(t, `/jobs/${crypto.randomUUID()}/retry`, { method: "POST" })).status).toBe(404);
  });
});

test("an LLM that cannot be reached is transient too: the job runs HTTP_JOB_MAX_ATTEMPTS times, then fails", async () => {
  // a port nothing listens on: connection refused
  const closed = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = closed.port;
  closed.stop(true);
  const t = await startTestService({ env: webhookEnv({ HTTP_JOB_MAX_ATTEMPTS: "2", LLM_BASE_URL: `http://127.0.0.1:${port}/v1` }), jobRetryDelaysMs: [50] });
  try {
    const job = await accept(t, { user_id: "ha", message: "anyone there?" });
    const failed = await finished(t, job.job_id);
    expect(failed).toMatchObject({ status: "failed", attempts: 2, error: { code: "llm_error", message: expect.stringContaining("could not be reached") } });
  } finally {
    await t.stop();
  }
});

test("what counts as transient, in the LLM layer's own words", () => {
  expect(JOB_RETRY_DELAYS_MS).toEqual([30_000, 120_000, 600_000]);
  const llm = (message: string) => ({ code: "llm_error", message });
  expect(transientFailure(llm("The language model at x (model m) could not be reached (connection refused)."))).toBe(true);
  expect(transientFailure(llm("The language model at x (model m) answered HTTP 429 (rate limited)."))).toBe(true);
  expect(transientFailure(llm("The language model at x (model m) answered HTTP 503 (service unavailable) (4 tries)."))).toBe(true);
  expect(transientFailure(llm("The language model at x (model m) did not answer in time."))).toBe(true);
  expect(transientFailure(llm("The language model at x (model m) stopped in the middle of its answer: failed: socket closed."))).toBe(true);
  expect(transientFailure(llm("The language model at x (model m) answered HTTP 400 (bad request): context too long."))).toBe(false);
  expect(transientFailure(llm("The language model at x (model m) answered HTTP 401 (the API key was refused)."))).toBe(false);
  expect(transientFailure({ code: "turn_timeout", message: "could not be reached" })).toBe(false);
  expect(transientFailure(null)).toBe(false);
});
