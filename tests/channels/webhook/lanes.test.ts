// Jobs run in lanes: different conversations side by side (up to HTTP_JOB_CONCURRENCY), one
// conversation in order. GET /jobs/{id}?wait=N answers when the job ends instead of after N.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../support/harness";
import { accept, deferred, finished, hook, messageOf, jobUntil, webhookEnv } from "./support";

describe("lanes", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: webhookEnv({ HTTP_JOB_CONCURRENCY: "2" }) });
  });
  afterAll(() => t.stop());

  test("a quick job in another conversation does not wait for a slow one", async () => {
    const slow = deferred();
    t.llm.reset();
    t.llm.respondWith(async (body) => {
      if (messageOf(body) === "weekly report") await slow.promise;
      return { text: `done: ${messageOf(body)}` };
    });
    const report = await accept(t, { user_id: "cron", message: "weekly report", conversation_id: "reports" });
    await t.llm.waitForRequests(1);
    const garage = await accept(t, { user_id: "ha", message: "is the garage open?", conversation_id: "garage" });
    const quick = await finished(t, garage.job_id);
    expect(quick.response).toBe("done: is the garage open?");
    expect((await hook(t, `/jobs/${report.job_id}`)).body.status).toBe("running");
    slow.release();
    expect((await finished(t, report.job_id)).status).toBe("completed");
  });

  test("one conversation's jobs run one at a time, in the order they came", async () => {
    const first = deferred();
    t.llm.reset();
    t.llm.respondWith(async (body) => {
      if (messageOf(body) === "step 1") await first.promise;
      return { text: `did ${messageOf(body)}` };
    });
    const ids = [];
    ids.push((await accept(t, { user_id: "ops", message: "step 1", conversation_id: "runbook" })).job_id);
    await t.llm.waitForRequests(1);
    for (const n of [2, 3]) ids.push((await accept(t, { user_id: "ops", message: `step ${n}`, conversation_id: "runbook" })).job_id);
    // a free slot, but the lane is busy: steps 2 and 3 wait, while another conversation's job runs through
    const other = await accept(t, { user_id: "ops", message: "elsewhere", conversation_id: "other" });
    expect((await finished(t, other.job_id)).status).toBe("completed");
    expect(t.llm.chatRequests().map((r) => messageOf(r.body))).toEqual(["step 1", "elsewhere"]);
    expect((await hook(t, `/jobs/${ids[1]}`)).body.status).toBe("queued");
    first.release();
    const rows = [];
    for (const id of ids) rows.push(await finished(t, id));
    expect(t.llm.chatRequests().map((r) => messageOf(r.body))).toEqual(["step 1", "elsewhere", "step 2", "step 3"]);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.startedAt! >= rows[i - 1]!.completedAt!).toBe(true);
    expect(new Set(rows.map((r) => r.threadId)).size).toBe(1);
  });

  test("at most HTTP_JOB_CONCURRENCY jobs run at once", async () => {
    const hold = deferred();
    t.llm.reset();
    t.llm.respondWith(async (body) => {
      await hold.promise;
      return { text: `ok ${messageOf(body)}` };
    });
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await accept(t, { user_id: `s${n}`, message: `parallel ${n}` })).job_id);
    await t.llm.waitForRequests(2);
    await Bun.sleep(100);
    expect(t.llm.chatRequests()).toHaveLength(2);
    expect((await hook(t, `/jobs/${ids[2]}`)).body.status).toBe("queued");
    hold.release();
    for (const id of ids) expect((await finished(t, id)).status).toBe("completed");
  });
});

describe("GET /jobs/{id}?wait=N", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: webhookEnv() });
  });
  afterAll(() => t.stop());

  test("answers as soon as the job ends, with the ended record", async () => {
    const hold = deferred();
    t.llm.reset();
    t.llm.respondWith(async () => {
      await hold.promise;
      return { text: "the garage is closed" };
    });
    const job = await accept(t, { user_id: "nodered", message: "garage?" });
    await t.llm.waitForRequests(1);
    const started = Date.now();
    const poll = hook(t, `/jobs/${job.job_id}?wait=30`);
    setTimeout(() => hold.release(), 300);
    const r = await poll;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: job.job_id, status: "completed", response: "the garage is closed" });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(5_000);
  });

  test("an ended job answers at once; a running one answers after N seconds with what it has", async () => {
    const hold = deferred();
    t.llm.reset();
    t.llm.respondWith(async () => {
      await hold.promise;
      return { text: "slow" };
    });
    const job = await accept(t, { user_id: "nodered", message: "slow one" });
    await jobUntil(t, job.job_id, (j) => j.status === "running");
    const started = Date.now();
    const r = await hook(t, `/jobs/${job.job_id}?wait=1`);
    expect(r.body.status).toBe("running");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    hold.release();
    await finished(t, job.job_id);
    const quick = Date.now();
    expect((await hook(t, `/jobs/${job.job_id}?wait=60`)).body.status).toBe("completed");
    expect(Date.now() - quick).toBeLessThan(500);
  });

  test("wait is whole seconds from 0 to 60; the secret header is needed", async () => {
    const job = await accept(t, { user_id: "x", message: "y" });
    for (const wait of ["61", "-1", "1.5", "soon"]) {
      const r = await hook(t, `/jobs/${job.job_id}?wait=${wait}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("wait");
    }
    expect((await hook(t, `/jobs/${job.job_id}?wait=1`, { secret: null })).status).toBe(401);
    expect((await hook(t, `/jobs/${crypto.randomUUID()}?wait=5`)).status).toBe(404);
  });

  test("a service that stops answers its long polls at once", async () => {
    const own = await startTestService({ env: webhookEnv({ SHUTDOWN_GRACE_MS: "0" }) });
    own.llm.respondWith(() => ({ hang: true }));
    const job = await accept(own, { user_id: "x", message: "never ends" });
    await own.llm.waitForRequests(1);
    const started = Date.now();
    const poll = hook(own, `/jobs/${job.job_id}?wait=60`);
    await Bun.sleep(100);
    await own.stop();
    const r = await poll;
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
