// The routines API on the gateway: per user (another's routine is a 404), malformed input a
// 400 with the reason, run now through the webhook channel's job queue, runs with their
// answers, pause and resume, and a preview of a schedule for forms.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getJob } from "../../src/store/jobs";
import { startTestService, type TestService } from "../support/harness";
import { until } from "../support/until";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

async function call(method: string, path: string, json?: unknown, token?: string) {
  const res = await t.api(path, { method, json, token });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Re-reads a routine's runs until `ok` holds (bounded). */
function runsUntil(id: string, ok: (runs: any[]) => boolean, token?: string, timeoutMs = 10_000): Promise<any[]> {
  let runs: any[] = [];
  return until(
    () => `runs: ${JSON.stringify(runs)}`,
    async () => {
      runs = (await call("GET", `/api/routines/${id}/runs`, undefined, token)).body.runs;
      return ok(runs) && runs;
    },
    { timeoutMs },
  );
}

describe("routines API", () => {
  test("create: 201 the routine with its schedule in words and its next three times; list, get", async () => {
    const r = await call("POST", "/api/routines", { name: "Morning alerts", schedule: "0 7 * * 1-5", timezone: "Europe/Berlin", prompt: "Summarise the night's alerts." });
    expect(r.status).toBe(201);
    // (toMatchObject puts its matchers in the object it is given: it gets a copy)
    const created = structuredClone(r.body);
    expect(structuredClone(r.body)).toMatchObject({
      id: expect.any(String),
      name: "Morning alerts",
      schedule: "0 7 * * 1-5",
      timezone: "Europe/Berlin",
      prompt: "Summarise the night's alerts.",
      conversation: "new",
      callback_url: null,
      enabled: true,
      catch_up: "one",
      last_run: null,
      description: "At 07:00, Monday through Friday (Europe/Berlin)",
    });
    expect(r.body.next_runs).toHaveLength(3);
    expect(r.body.next_run_at).toBe(r.body.next_runs[0]);
    for (const when of r.body.next_runs) {
      const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", weekday: "short" }).format(new Date(when));
      expect(local).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 07:00$/);
    }
    const list = await call("GET", "/api/routines");
    expect(list.body.routines.map((x: any) => x.id)).toContain(created.id);
    expect((await call("GET", `/api/routines/${created.id}`)).body).toEqual(created);
  });

  test("a malformed schedule, time zone or field is a 400 with the reason; nothing is created", async () => {
    const before = (await call("GET", "/api/routines")).body.routines.length;
    const cases: [unknown, string][] = [
      [{ schedule: "61 * * * *", prompt: "x" }, "minute"],
      [{ schedule: "* * * * * *", prompt: "x" }, "5"],
      [{ schedule: "every 0s", prompt: "x" }, "at least 1"],
      [{ schedule: "at 2020-01-01T00:00:00Z", prompt: "x" }, "has passed"],
      [{ schedule: "0 7 * * *", timezone: "Moon/Base", prompt: "x" }, "time zone"],
      [{ schedule: "0 7 * * *" }, "`prompt` is required"],
      [{ schedule: "0 7 * * *", prompt: "x", catch_up: "some" }, "skip, one or all"],
      [{ schedule: "0 7 * * *", prompt: "x", sometimes: true }, "not a field"],
      [{ schedule: "0 7 * * *", prompt: "x", callback_url: "http://127.0.0.1/x" }, "HTTP_WEBHOOK_SECRET"],
    ];
    for (const [body, why] of cases) {
      const r = await call("POST", "/api/routines", body);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(r.body.error.type).toBe("invalid_request_error");
      expect(r.body.error.message).toContain(why);
    }
    expect((await call("GET", "/api/routines")).body.routines.length).toBe(before);
  });

  test("another user's routine is a 404 on every route, and not in their list", async () => {
    const mine = (await call("POST", "/api/routines", { schedule: "@daily", prompt: "private" })).body;
    const other = await t.createUser();
    expect((await call("GET", "/api/routines", undefined, other.token)).body.routines).toEqual([]);
    for (const [method, path, json] of [
      ["GET", `/api/routines/${mine.id}`],
      ["PATCH", `/api/routines/${mine.id}`, { enabled: false }],
      ["DELETE", `/api/routines/${mine.id}`],
      ["POST", `/api/routines/${mine.id}/run`],
      ["GET", `/api/routines/${mine.id}/runs`],
    ] as const) {
      const r = await call(method, path, json, other.token);
      expect({ path, method, status: r.status }).toEqual({ path, method, status: 404 });
      expect(r.body.error.type).toBe("not_found_error");
    }
    expect((await call("GET", `/api/routines/${mine.id}`)).body.enabled).toBe(true);
  });

  test("run now: 202 {run}; the job runs through the queue and the run shows its answer", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "All quiet tonight." });
    const r = (await call("POST", "/api/routines", { name: "Alerts", schedule: "@daily", prompt: "Any alerts?" })).body;
    const run = await call("POST", `/api/routines/${r.id}/run`);
    expect(run.status).toBe(202);
    expect(structuredClone(run.body.run)).toMatchObject({ routine_id: r.id, outcome: "ran", trigger: "manual", reason: null, status: "queued", job_id: expect.any(String) });
    const runs = await runsUntil(r.id, (rs) => rs[0]?.status === "completed");
    expect(runs[0]).toMatchObject({ id: run.body.run.id, response: "All quiet tonight.", error: null });
    const job = (await getJob(t.service.services.db, run.body.run.job_id))!;
    expect(job).toMatchObject({ source: "routine", sender: r.id, message: "Any alerts?", userId: "owner" });
    expect(t.llm.lastChat().messages.at(-1).content).toContain("routine: Alerts");
    expect((await call("GET", `/api/routines/${r.id}`)).body.last_run).toMatchObject({ id: run.body.run.id, status: "completed" });
    // the owner's job list shows it
    const jobs = (await (await t.api("/api/jobs")).json()) as any;
    expect(jobs.jobs.find((j: any) => j.id === job.id)).toMatchObject({ source: "routine", status: "completed" });
  });

  test("conversation: same keeps every run in one thread", async () => {
    t.llm.reset();
    const r = (await call("POST", "/api/routines", { schedule: "@daily", prompt: "Count the runs.", conversation: "same" })).body;
    for (let i = 0; i < 2; i++) await call("POST", `/api/routines/${r.id}/run`);
    const runs = await runsUntil(r.id, (rs) => rs.length === 2 && rs.every((x) => x.status === "completed"));
    const threads = await Promise.all(runs.map(async (x) => (await getJob(t.service.services.db, x.job_id))!.threadId));
    expect(threads[0]).toBe(threads[1]!);
    // the second run saw the first
    expect(t.llm.lastChat().messages.filter((m: any) => m.role === "user")).toHaveLength(2);
  });

  test("PATCH pauses and resumes; a new schedule counts from now; DELETE is 204, then 404", async () => {
    const r = (await call("POST", "/api/routines", { schedule: "every 1h", prompt: "tick" })).body;
    const paused = await call("PATCH", `/api/routines/${r.id}`, { enabled: false });
    expect(paused.body).toMatchObject({ enabled: false, next_run_at: null, next_runs: [] });
    const resumed = await call("PATCH", `/api/routines/${r.id}`, { enabled: true });
    expect(resumed.body.enabled).toBe(true);
    expect(Date.parse(resumed.body.next_run_at)).toBeGreaterThan(Date.now());
    const changed = await call("PATCH", `/api/routines/${r.id}`, { schedule: "every 2h", name: "Two-hourly", catch_up: "all" });
    expect(changed.body).toMatchObject({ schedule: "every 2h", name: "Two-hourly", catch_up: "all", description: "every 2 hours" });
    const next = Date.parse(changed.body.next_run_at) - Date.now();
    expect(next).toBeGreaterThan(2 * 3600_000 - 60_000);
    expect(next).toBeLessThanOrEqual(2 * 3600_000);
    const bad = await call("PATCH", `/api/routines/${r.id}`, { schedule: "every fortnight" });
    expect(bad.status).toBe(400);
    expect((await call("GET", `/api/routines/${r.id}`)).body.schedule).toBe("every 2h");
    expect((await call("DELETE", `/api/routines/${r.id}`)).status).toBe(204);
    expect((await call("GET", `/api/routines/${r.id}`)).status).toBe(404);
  });

  test("preview: the schedule in words and its next three times, or a 400 with the reason", async () => {
    const p = await call("POST", "/api/routines/preview", { schedule: "30 6 * * 6,0", timezone: "UTC" });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ schedule: "30 6 * * 6,0", timezone: "UTC", description: "At 06:30, only on Sunday and Saturday (UTC)" });
    expect(p.body.next_runs).toHaveLength(3);
    const bad = await call("POST", "/api/routines/preview", { schedule: "30 6 * *" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("has 4 fields");
  });

  test("runs: ?limit is checked", async () => {
    const r = (await call("POST", "/api/routines", { schedule: "@daily", prompt: "x" })).body;
    expect((await call("GET", `/api/routines/${r.id}/runs?limit=0`)).status).toBe(400);
    expect((await call("GET", `/api/routines/${r.id}/runs?limit=5`)).body).toEqual({ runs: [] });
  });

  test("a deleted user's routines go with them", async () => {
    const u = await t.createUser();
    const r = (await call("POST", "/api/routines", { schedule: "@daily", prompt: "mine" }, u.token)).body;
    expect((await t.api(`/api/webchat/v2/admin/users/${u.user.user_id}`, { method: "DELETE" })).status).toBe(204);
    const { routines } = t.service.services;
    await expect(routines.get(u.user.user_id, r.id)).rejects.toThrow("No routine");
  });
});
