// The scheduler on the real clock: each due tick of a routine leaves one run record, ran (a job
// in the queue) or skipped (`overlap` while the previous run goes on); a paused routine
// records nothing; ticks missed while the service was down follow `catch_up`; and the
// database's unique key lets no tick fire twice, even with a second scheduler on the same
// database (a replica). Downtime is made by stopping the service and moving the routine's
// stored next tick into the past, never by mocking the clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../src/log";
import { newRun } from "../../src/routines/runs";
import { RoutineScheduler } from "../../src/routines/scheduler";
import { uniqueViolation } from "../../src/store/db";
import { getJobs } from "../../src/store/jobs";
import { getRoutine, listRuns, recordRuns } from "../../src/store/routines";
import { routines } from "../support/tables";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { startTestService, type TestService } from "../support/harness";
import { until } from "../support/until";

let llm: ScriptedLLM;
beforeAll(async () => {
  llm = await startScriptedLLM();
});
afterAll(() => llm.close());

async function create(t: TestService, body: Record<string, unknown>) {
  const res = await t.api("/api/routines", { method: "POST", json: body });
  expect(res.status).toBe(201);
  return (await res.json()) as any;
}

/** The routine's run records, oldest first, once `ok` holds (bounded). */
function runsUntil(t: TestService, id: string, ok: (runs: Awaited<ReturnType<typeof listRuns>>) => boolean, timeoutMs = 15_000) {
  let runs: Awaited<ReturnType<typeof listRuns>> = [];
  return until(
    () => `the runs to be as expected: ${JSON.stringify(runs.map((r) => [r.outcome, r.reason, r.job?.status]))}`,
    async () => {
      runs = (await listRuns(t.service.services.db, id, 1000)).reverse();
      return ok(runs) && runs;
    },
    { timeoutMs },
  );
}

test("a tick over its owner's budget is skipped with reason budget, and queues nothing", async () => {
  const t = await startTestService({ llm, env: { BUDGET_MONTHLY_USD: "0.5" } });
  try {
    llm.reset();
    llm.respondWith(() => ({ text: "Expensive.", usage: { prompt_tokens: 10, completion_tokens: 5, cost: 0.6 } }));
    expect((await t.respond({ model: "m", input: "spend it" })).body.status).toBe("completed");
    const r = await create(t, { schedule: "every 1s", prompt: "Check the sensors." });
    const runs = await runsUntil(t, r.id, (rs) => rs.length >= 2);
    expect(runs.every((x) => x.outcome === "skipped" && x.reason === "budget" && x.jobId === null)).toBe(true);
    // the model was asked for nothing more than the turn that spent the budget
    expect(llm.chatRequests()).toHaveLength(1);
  } finally {
    llm.respondWith(null);
    await t.stop();
  }
});

describe("ticks on the real clock", () => {
  let t: TestService;
  beforeAll(async () => {
    // the hanging run of the overlap test is cut short at once when the service stops
    t = await startTestService({ llm, env: { SHUTDOWN_GRACE_MS: "0" } });
  });
  afterAll(() => t.stop());

  test("every 1s: each tick is one run at its scheduled time, its job run by the agent", async () => {
    llm.respondWith(() => ({ text: "tick handled" }));
    const r = await create(t, { schedule: "every 1s", prompt: "Check the sensors." });
    const anchor = Date.parse(r.created_at);
    const runs = await runsUntil(t, r.id, (rs) => rs.filter((x) => x.job?.status === "completed").length >= 2);
    for (const run of runs) {
      expect(run.outcome).toBe("ran");
      expect(run.trigger).toBe("schedule");
      expect((run.scheduledFor - anchor) % 1000).toBe(0);
      // recorded when it fell due, not early, and not much later
      expect(Date.parse(run.startedAt)).toBeGreaterThanOrEqual(run.scheduledFor);
      expect(Date.parse(run.startedAt) - run.scheduledFor).toBeLessThan(1_000);
    }
    expect(new Set(runs.map((x) => x.scheduledFor)).size).toBe(runs.length);
    await t.api(`/api/routines/${r.id}`, { method: "DELETE" });
    llm.respondWith(null);
  });

  test("a tick while the previous run is still going is skipped as overlap; a paused routine records nothing", async () => {
    llm.respondWith((body) => (JSON.stringify(body).includes("Long report") ? { hang: true } : { text: "ok" }));
    const paused = await create(t, { schedule: "every 1s", prompt: "Paused one.", enabled: false });
    const r = await create(t, { schedule: "every 1s", prompt: "Long report." });
    const runs = await runsUntil(t, r.id, (rs) => rs.filter((x) => x.reason === "overlap").length >= 2);
    expect(runs[0]).toMatchObject({ outcome: "ran", reason: null });
    expect(runs[0]!.job?.status).toBe("running");
    expect(runs.slice(1).every((x) => x.outcome === "skipped" && x.reason === "overlap" && x.jobId === null)).toBe(true);
    // more than two seconds passed, and the paused routine has no record
    expect(await listRuns(t.service.services.db, paused.id, 10)).toEqual([]);
    await t.api(`/api/routines/${r.id}`, { method: "PATCH", json: { enabled: false } });
    llm.respondWith(null);
  });

  test("a second scheduler on the same database (a replica) fires no tick twice", async () => {
    llm.respondWith(() => ({ text: "once" }));
    const replica = new RoutineScheduler({ db: t.service.services.db, kick: () => {}, log: createLogger({ format: "json", write: () => {} }) });
    await replica.start();
    try {
      const r = await create(t, { schedule: "every 1s", prompt: "Replicated." });
      await replica.changed(r.id);
      const runs = await runsUntil(t, r.id, (rs) => rs.length >= 4);
      expect(new Set(runs.map((x) => x.scheduledFor)).size).toBe(runs.length);
      const jobs = await getJobs(t.service.services.db, runs.flatMap((x) => (x.jobId ? [x.jobId] : [])));
      expect(jobs.filter((j) => j.sender === r.id)).toHaveLength(runs.filter((x) => x.outcome === "ran").length);
      await t.api(`/api/routines/${r.id}`, { method: "DELETE" });
    } finally {
      replica.stop();
    }
    llm.respondWith(null);
  });

  test("the database refuses a second record of the same tick", async () => {
    const r = await create(t, { schedule: "@yearly", prompt: "Once a year." });
    const row = (await getRoutine(t.service.services.db, r.id))!;
    const at = Date.parse("2030-01-01T00:00:00Z");
    await recordRuns(t.service.services.db, [newRun(row, at, { trigger: "schedule", outcome: "skipped", reason: "missed" })], { id: r.id });
    const again = await recordRuns(t.service.services.db, [newRun(row, at, { trigger: "schedule", outcome: "ran" })], { id: r.id }).catch((e) => e);
    expect(uniqueViolation(again)).toBe(true);
    // and nothing of the refused batch was kept: no job
    const runs = await listRuns(t.service.services.db, r.id, 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.outcome).toBe("skipped");
  });
});

describe("ticks missed while the service was down follow catch_up", () => {
  /**
   * Starts a service, creates an `every 1s` routine per policy, stops the service, and moves
   * each routine's next tick `missed` seconds into the past (as if the service had been down
   * that long); then starts it again on the same home.
   */
  async function afterDowntime(policies: string[], missed: number, prompt: (p: string) => string) {
    const home = join(mkdtempSync(join(tmpdir(), "service-catchup-")), "home");
    llm.respondWith(() => ({ text: "caught up" }));
    const first = await startTestService({ llm, keepHome: home });
    const ids: Record<string, string> = {};
    for (const p of policies) ids[p] = (await create(first, { schedule: "every 1s", prompt: prompt(p), catch_up: p, enabled: false })).id;
    await first.stop();
    const { createClient } = await import("@libsql/client");
    const { drizzle } = await import("drizzle-orm/libsql");
    const client = createClient({ url: `file:${join(home, "service.db")}` });
    const now = Date.now();
    // the last tick that fell due was 0.5 s ago; `missed` ticks in all were missed
    const next = now - 500 - (missed - 1) * 1000;
    await drizzle(client).update(routines).set({ enabled: true, anchorAt: next - 1000, nextRunAt: next });
    client.close();
    const second = await startTestService({ llm, keepHome: home });
    return {
      t: second,
      ids,
      next,
      async stop() {
        await second.stop();
        rmSync(join(home, ".."), { recursive: true, force: true });
      },
    };
  }

  test("skip records each missed tick; one runs the latest; all runs each (here 6)", async () => {
    const d = await afterDowntime(["skip", "one", "all"], 6, (p) => `catch up ${p}`);
    try {
      const missedTicks = Array.from({ length: 6 }, (_, i) => d.next + i * 1000);
      for (const [policy, ran] of [["skip", 0], ["one", 1], ["all", 6]] as const) {
        const runs = (await runsUntil(d.t, d.ids[policy]!, (rs) => rs.length >= 6 && rs.filter((x) => x.outcome === "ran").every((x) => x.job?.status === "completed"))).slice(0, 6);
        expect({ policy, ticks: runs.map((x) => x.scheduledFor) }).toEqual({ policy, ticks: missedTicks });
        const outcomes = runs.map((x) => (x.outcome === "ran" ? "ran" : x.reason));
        expect({ policy, outcomes }).toEqual({ policy, outcomes: [...Array(6 - ran).fill("missed"), ...Array(ran).fill("ran")] });
      }
      expect(d.t.logs).toContain("routine caught up");
    } finally {
      await d.stop();
    }
  }, 30_000);

  test("all runs at most 10: the latest ten of fifteen, the five before recorded missed", async () => {
    const d = await afterDowntime(["all"], 15, () => "fifteen missed");
    try {
      const runs = (await runsUntil(d.t, d.ids.all!, (rs) => rs.length >= 15)).slice(0, 15);
      expect(runs.map((x) => (x.outcome === "ran" ? "ran" : x.reason))).toEqual([...Array(5).fill("missed"), ...Array(10).fill("ran")]);
      // and from then on it ticks on the live clock, after the last missed one
      const live = await runsUntil(d.t, d.ids.all!, (rs) => rs.length >= 16);
      expect(live[15]!.scheduledFor).toBeGreaterThan(runs[14]!.scheduledFor);
      expect(live[15]!.scheduledFor - d.next).toBe(15_000);
    } finally {
      await d.stop();
    }
  }, 30_000);
});
