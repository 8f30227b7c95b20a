// PostgreSQL shared by replicas, at the store: two processes' worth of Database objects on one
// database take migrations, locks, rate limits, events, job claims, idempotency keys and
// routine ticks in turn, never both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { cannotOpen, openDatabase, storeUnavailable, uniqueViolation, type Database } from "../../src/store/db";
import { migrations } from "../../src/store/migrations-pg";
import { claimNextJob, finishJob, getJob, insertJob, renewLeases, requeueAbandoned, type NewJob } from "../../src/store/jobs";
import { recordRuns } from "../../src/store/routines";
import { ensureOwner, OWNER_ID } from "../../src/store/users";
import { freshPostgres, skipWithoutPostgres } from "../support/postgres";

const skip = skipWithoutPostgres();
let url: string;
let a: Database;
let b: Database;

beforeAll(async () => {
  if (skip) return;
  url = await freshPostgres();
  // two replicas starting at once: one migrates, the other waits and finds it done
  [a, b] = await Promise.all([openDatabase(url), openDatabase(url)]);
  await ensureOwner(a.db);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const job = (id: string, lane = id, extra: Partial<NewJob> = {}): NewJob => ({
  id,
  userId: OWNER_ID,
  source: "webhook",
  sender: "s",
  conversationId: lane,
  message: `job ${id}`,
  metadata: null,
  ...extra,
});

describe.skipIf(skip)("PostgreSQL shared by replicas", () => {
  test("migrations ran once, whichever replica came first", async () => {
    const sql = postgres(url, { max: 1 });
    const tags = (await sql`select tag from __migrations order by tag`).map((r) => r.tag);
    await sql.end();
    expect(tags).toEqual(migrations.map((m) => m.tag));
  });

  test("a lock one replica holds keeps the other waiting until it lets go; other keys do not wait", async () => {
    const la = a.locks("thread");
    const lb = b.locks("thread");
    const order: string[] = [];
    const held = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    const first = la.hold("t1", async () => {
      order.push("a in");
      held.resolve();
      await release.promise;
      order.push("a out");
    });
    await held.promise;
    const second = lb.hold("t1", async () => void order.push("b in"));
    // another key is free at once, in either replica
    await lb.hold("t2", async () => void order.push("b t2"));
    expect(order).toEqual(["a in", "b t2"]);
    release.resolve();
    await Promise.all([first, second]);
    expect(order).toEqual(["a in", "b t2", "a out", "b in"]);
  });

  test("a replica that dies lets go of its locks with its connection", async () => {
    const c = await openDatabase(url);
    const held = Promise.withResolvers<void>();
    void c.locks("thread").hold("t3", async () => {
      held.resolve();
      await new Promise(() => {});
    });
    await held.promise;
    let got = false;
    const waiting = b.locks("thread").hold("t3", async () => void (got = true));
    await Bun.sleep(300);
    expect(got).toBe(false);
    await c.close();
    await waiting;
    expect(got).toBe(true);
  });

  test("the rate limit is one budget across replicas", async () => {
    const ra = a.rateLimiter("test", 2);
    const rb = b.rateLimiter("test", 2);
    expect(await ra.take("u")).toBe(0);
    expect(await rb.take("u")).toBe(0);
    const wait = await ra.take("u");
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await rb.take("someone else")).toBe(0);
    // off
    expect(await ra.take("u")).toBeGreaterThan(0);
    expect(await a.rateLimiter("off", 0).take("u")).toBe(0);
  });

  test("a replica hears the other's messages in order, long ones whole, never its own", async () => {
    const heardA: unknown[] = [];
    const heardB: unknown[] = [];
    a.broadcast.subscribe("t", (m) => heardA.push(m));
    b.broadcast.subscribe("t", (m) => heardB.push(m));
    const long = "é".repeat(30_000);
    for (let i = 0; i < 50; i++) a.broadcast.publish("t", i === 25 ? { i, long } : { i });
    const deadline = Date.now() + 5_000;
    while (heardB.length < 50 && Date.now() < deadline) await Bun.sleep(20);
    expect(heardB.map((m) => (m as { i: number }).i)).toEqual([...Array(50).keys()]);
    expect((heardB[25] as { long: string }).long).toBe(long);
    expect(heardA).toEqual([]);
  });

  test("jobs claimed by both replicas at once: each once; a lane's second job waits for its first", async () => {
    for (let i = 0; i < 20; i++) await insertJob(a.db, job(`c${i}`));
    await insertJob(a.db, job("lane-1", "lane"));
    await insertJob(a.db, job("lane-2", "lane"));
    const claimed: string[] = [];
    const claimAll = async (d: Database) => {
      for (let j = await claimNextJob(d.db, 30_000); j; j = await claimNextJob(d.db, 30_000)) claimed.push(j.id);
    };
    await Promise.all([claimAll(a), claimAll(b), claimAll(a), claimAll(b)]);
    expect(claimed.filter((id) => id.startsWith("c")).sort()).toEqual([...Array(20).keys()].map((i) => `c${i}`).sort());
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed).toContain("lane-1");
    expect(claimed).not.toContain("lane-2");
  });

  test("a job whose replica stopped renewing its lease goes back to the queue; the late run does not end it", async () => {
    await insertJob(a.db, job("leased"));
    let claimed = await claimNextJob(a.db, 200);
    while (claimed && claimed.id !== "leased") claimed = await claimNextJob(a.db, 200);
    expect(claimed?.id).toBe("leased");
    // renewed while it runs: nobody takes it
    await renewLeases(a.db, ["leased"], 60_000);
    expect(await requeueAbandoned(b.db, [])).toBe(0);
    // then its replica goes quiet
    await renewLeases(a.db, ["leased"], -1);
    expect(await requeueAbandoned(b.db, [])).toBeGreaterThanOrEqual(1);
    expect((await getJob(b.db, "leased"))?.status).toBe("queued");
    const again = await claimNextJob(b.db, 30_000);
    expect(again?.id).toBe("leased");
    expect(await finishJob(a.db, "leased", { status: "completed", threadId: null, responseId: null, response: "late", error: null }, claimed!)).toBe(false);
    expect(await finishJob(b.db, "leased", { status: "completed", threadId: null, responseId: null, response: "mine", error: null }, again!)).toBe(true);
    expect((await getJob(a.db, "leased"))?.response).toBe("mine");
  });

  test("one idempotency key, two replicas at once: one job", async () => {
    const results = await Promise.all([a, b, a, b].map((d) => insertJob(d.db, job(`k-${crypto.randomUUID()}`, "k", { idempotencyKey: "key-1" }))));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
  });

  test("a routine's tick recorded by one replica is refused to the other", async () => {
    await a.db.insert(a.db.t.routines).values({
      id: "r1",
      userId: OWNER_ID,
      name: "r",
      schedule: "every 1m",
      timezone: "UTC",
      prompt: "p",
      conversation: "new",
      callbackUrl: null,
      enabled: true,
      catchUp: "skip",
      anchorAt: 0,
      nextRunAt: 60_000,
      createdAt: "x",
      updatedAt: "x",
    });
    const run = (id: string) => ({ run: { id, routineId: "r1", userId: OWNER_ID, scheduledFor: 60_000, trigger: "schedule" as const, startedAt: "x", outcome: "ran" as const, reason: null, jobId: `job-${id}` }, job: job(`job-${id}`) });
    const outcomes = await Promise.allSettled([recordRuns(a.db, [run("x")], { id: "r1", nextRunAt: 120_000 }), recordRuns(b.db, [run("y")], { id: "r1", nextRunAt: 120_000 })]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(uniqueViolation(refused.reason)).toBe(true);
    // the loser's job went with its run: nothing half-recorded
    const ids = [await getJob(a.db, "job-x"), await getJob(a.db, "job-y")].filter(Boolean);
    expect(ids).toHaveLength(1);
  });
});

describe.skipIf(skip)("PostgreSQL going away", () => {
  test("a connection the server ends is told as the database unavailable (503), and the next statement connects again", async () => {
    const own = await freshPostgres();
    const d = await openDatabase(own);
    try {
      await ensureOwner(d.db);
      const admin = postgres(own, { max: 1 });
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'service' and pid <> pg_backend_pid() and datname = current_database()`;
      await admin.end();
      const failed = await getJob(d.db, "nothing").then(
        () => undefined,
        (e) => e,
      );
      // a pooled connection may have been replaced already; when the statement met the ended one, it says so
      if (failed) expect(storeUnavailable(failed)).toMatch(/\((57P01|08\w{3}|ECONNRESET|CONNECTION_\w+)\)$/);
      expect(await getJob(d.db, "nothing")).toBeUndefined();
    } finally {
      await d.close();
    }
  });
});

describe.skipIf(skip)("a PostgreSQL database that cannot be opened", () => {
  test("no server, no such database, a refused login: each is the database unavailable, said without the password", async () => {
    const base = new URL(url);
    const urls = [`postgres://postgres:secret@127.0.0.1:1/x`, `postgres://postgres:secret@${base.host}/no_such_db`, `postgres://nobody:secret@${base.host}${base.pathname}`];
    for (const u of urls) {
      const e = await openDatabase(u).then(
        () => undefined,
        (err) => err,
      );
      const reason = storeUnavailable(e);
      expect(reason).toMatch(/\((ECONNREFUSED|3D000|28000|28P01)\)$/);
      const said = cannotOpen(u, reason!);
      expect(said).not.toContain("secret");
      expect(said).toContain("Check that the PostgreSQL server is up");
    }
  });
});
