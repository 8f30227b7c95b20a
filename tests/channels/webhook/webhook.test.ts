// The webhook channel in-process: its own listener over real HTTP, jobs stored before the 202,
// run one at a time in order through the agent and the scripted LLM.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servicePaths } from "../../../src/config/load";
import { ConfigError } from "../../../src/errors";
import { createLogger } from "../../../src/log";
import { startService } from "../../../src/server";
import { eq } from "drizzle-orm";
import { getJob, listJobs } from "../../../src/store/jobs";
import { threads } from "../../support/tables";
import { OWNER_ID } from "../../../src/store/users";
import { startTestService, type TestService } from "../../support/harness";
import { finished, jobUntil } from "./support";

const SECRET = "webhook-test-secret-0123456789";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const webhookEnv = (extra: Record<string, string> = {}) => ({
  HTTP_ENABLED: "true",
  HTTP_WEBHOOK_SECRET: SECRET,
  HTTP_HOST: "127.0.0.1",
  HTTP_PORT: "0",
  ...extra,
});

type Reply = { status: number; body: any; headers: Headers };

/** A request to the webhook listener; `secret: null` sends none. Bodies that are objects go as JSON. */
async function hook(
  t: TestService,
  path: string,
  init: { method?: string; body?: unknown; raw?: RequestInit["body"]; headers?: Record<string, string>; secret?: string | null } = {},
): Promise<Reply> {
  const headers = new Headers(init.headers);
  const secret = init.secret === undefined ? SECRET : init.secret;
  if (secret !== null) headers.set("x-webhook-secret", secret);
  let body = init.raw;
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

const post = (t: TestService, body: unknown, init: Parameters<typeof hook>[2] = {}) => hook(t, "/webhook", { ...init, body });

/** POSTs a job that must be accepted; returns the 202 body. */
async function accept(t: TestService, body: Record<string, unknown>): Promise<{ job_id: string; status: string; conversation_id: string }> {
  const r = await post(t, body);
  expect(r.status).toBe(202);
  return r.body;
}

/** A promise the test resolves: holds the scripted LLM inside a step. */
function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

const lastUser = (body: any) => [...body.messages].reverse().find((m: any) => m.role === "user")?.content;
const jobCount = async (t: TestService) => (await listJobs(t.service.services.db, OWNER_ID, 10_000)).length;
const hmac = (body: string | Uint8Array, secret = SECRET) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

describe("webhook jobs", () => {
  let t: TestService;
  beforeAll(async () => {
    // one lane at a time, as the spec's queue: lanes side by side are tested in lanes.test.ts
    t = await startTestService({ env: webhookEnv({ HTTP_JOB_CONCURRENCY: "1" }) });
  });
  afterAll(() => t.stop());

  test("the channel has its own URL, separate from the gateway", () => {
    expect(t.service.webhookUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.service.webhookUrl).not.toBe(t.url);
  });

  test("202 {job_id, status: queued, conversation_id}; the job is stored before the answer", async () => {
    const gate = deferred();
    t.llm.reset();
    t.llm.respondWith(async (body) => {
      if (lastUser(body).endsWith("hold me")) await gate.promise;
      return { text: `answer to ${lastUser(body).split("\n").at(-1)}` };
    });

    const a = await post(t, { user_id: "alice", message: "hold me" });
    expect(a.status).toBe(202);
    expect(a.headers.get("content-type")).toContain("application/json");
    expect(Object.keys(a.body).sort()).toEqual(["conversation_id", "job_id", "status"]);
    expect(a.body.job_id).toMatch(UUID);
    expect(a.body.status).toBe("queued");
    expect(a.body.conversation_id).toMatch(UUID); // none given: a new conversation
    const rowA = await getJob(t.service.services.db, a.body.job_id);
    expect(rowA).toMatchObject({ id: a.body.job_id, userId: OWNER_ID, source: "webhook", sender: "alice", message: "hold me", conversationId: a.body.conversation_id });

    // job A is now running (the LLM holds it), so B stays queued
    await t.llm.waitForRequests(1);
    const b = await post(t, { user_id: "alice", message: "second", conversation_id: "conv-given" });
    expect(b.status).toBe(202);
    expect(b.body).toEqual({ job_id: expect.stringMatching(UUID), status: "queued", conversation_id: "conv-given" });
    const rowB = await getJob(t.service.services.db, b.body.job_id);
    expect(rowB).toMatchObject({ status: "queued", sender: "alice", message: "second", conversationId: "conv-given", startedAt: null, completedAt: null, response: null });
    expect((await getJob(t.service.services.db, a.body.job_id))!.status).toBe("running");

    const running = await hook(t, `/jobs/${a.body.job_id}`);
    expect(running.status).toBe(200);
    expect(running.body.status).toBe("running");
    expect(running.body.response).toBeUndefined();
    expect(running.body.completed_at).toBeUndefined();
    const queued = await hook(t, `/jobs/${b.body.job_id}`);
    expect(queued.body.status).toBe("queued");

    gate.release();
    expect((await finished(t, a.body.job_id)).status).toBe("completed");
    expect((await finished(t, b.body.job_id)).status).toBe("completed");
    t.llm.respondWith(null);
  });

  test("a job runs to completed; GET /jobs/{id} returns the record", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "The build is green." });
    const before = Date.now();
    const job = await accept(t, { user_id: "ci-bot", message: "How is the build?", conversation_id: "build-42" });
    await t.llm.waitForRequests(1);
    const row = await finished(t, job.job_id);
    expect(row.status).toBe("completed");

    const r = await hook(t, `/jobs/${job.job_id}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.body).toMatchObject({
      id: job.job_id,
      status: "completed",
      response: "The build is green.",
      conversation_id: "build-42",
      user_id: "ci-bot",
    });
    expect(r.body.error).toBeUndefined();
    expect(r.body.created_at).toMatch(ISO);
    expect(r.body.completed_at).toMatch(ISO);
    const created = Date.parse(r.body.created_at);
    const completed = Date.parse(r.body.completed_at);
    expect(created).toBeGreaterThanOrEqual(before - 1);
    expect(completed).toBeGreaterThanOrEqual(created);
    expect(completed).toBeLessThanOrEqual(Date.now());
  });

  test("the LLM gets the message after a <user-context> block with sender, conversation_id and metadata", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "ok" });
    const job = await accept(t, {
      user_id: "user-7",
      message: "Summarise the ticket.",
      conversation_id: "ticket-99",
      metadata: { source: "jira", priority: 2 },
    });
    await t.llm.waitForRequests(1);
    await finished(t, job.job_id);
    const sent = t.llm.chatRequests()[0]!.body;
    expect(sent.messages.at(-1)).toEqual({
      role: "user",
      content: "<user-context>\nsender: user-7\nconversation_id: ticket-99\nmetadata:\n  source: jira\n  priority: 2\n</user-context>\n\nSummarise the ticket.",
    });
    // without metadata the block has no metadata line
    t.llm.enqueue({ text: "ok" });
    const plain = await accept(t, { user_id: "user-8", message: "Hi" });
    await t.llm.waitForRequests(2);
    await finished(t, plain.job_id);
    expect(t.llm.chatRequests()[1]!.body.messages.at(-1).content).toBe(
      `<user-context>\nsender: user-8\nconversation_id: ${plain.conversation_id}\n</user-context>\n\nHi`,
    );
  });

  test("jobs of one (sender, conversation_id) share a thread; another sender's do not", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "Noted: the code word is heron." }, { text: "It is heron." }, { text: "I do not know." });
    const first = await accept(t, { user_id: "alice", message: "Remember the code word heron.", conversation_id: "shared" });
    const second = await accept(t, { user_id: "alice", message: "What is the code word?", conversation_id: "shared" });
    const other = await accept(t, { user_id: "bob", message: "What is the code word?", conversation_id: "shared" });
    await t.llm.waitForRequests(3);
    for (const j of [first, second, other]) expect((await finished(t, j.job_id)).status).toBe("completed");

    const [r1, r2, r3] = t.llm.chatRequests().map((r) => r.body);
    const contents = (b: any) => b.messages.filter((m: any) => m.role !== "system").map((m: any) => m.content);
    expect(contents(r1)).toHaveLength(1);
    expect(contents(r2)).toHaveLength(3);
    expect(contents(r2)[0]).toContain("Remember the code word heron.");
    expect(r2.messages.filter((m: any) => m.role !== "system")[1]).toEqual({ role: "assistant", content: "Noted: the code word is heron." });
    expect(contents(r2)[2]).toContain("sender: alice");
    // bob's job starts a thread of its own
    expect(contents(r3)).toHaveLength(1);
    expect(JSON.stringify(r3)).not.toContain("heron");
    expect(contents(r3)[0]).toContain("sender: bob\nconversation_id: shared");

    const db = t.service.services.db;
    const [j1, j2, j3] = await Promise.all([first, second, other].map((j) => getJob(db, j.job_id)));
    expect(j1!.threadId).toBeTruthy();
    expect(j2!.threadId).toBe(j1!.threadId);
    expect(j3!.threadId).not.toBe(j1!.threadId);
    expect((await hook(t, `/jobs/${second.job_id}`)).body.response).toBe("It is heron.");
  });

  test("jobs without a conversation_id each start a conversation", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "one" }, { text: "two" });
    const a = await accept(t, { user_id: "carol", message: "first" });
    const b = await accept(t, { user_id: "carol", message: "second" });
    expect(a.conversation_id).not.toBe(b.conversation_id);
    await t.llm.waitForRequests(2);
    await finished(t, b.job_id);
    expect(t.llm.chatRequests()[1]!.body.messages.filter((m: any) => m.role !== "system")).toHaveLength(1);
    // the returned conversation_id continues it
    t.llm.enqueue({ text: "three" });
    const c = await accept(t, { user_id: "carol", message: "third", conversation_id: a.conversation_id });
    expect(c.conversation_id).toBe(a.conversation_id);
    await t.llm.waitForRequests(3);
    await finished(t, c.job_id);
    expect(t.llm.chatRequests()[2]!.body.messages.some((m: any) => m.role === "assistant" && m.content === "one")).toBe(true);
  });

  test("jobs run one at a time, in the order they were accepted", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "slow", delayMs: 300 }, { text: "fast 2" }, { text: "fast 3" });
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await accept(t, { user_id: `sender-${n}`, message: `job number ${n}` })).job_id);
    await t.llm.waitForRequests(3, 10_000);
    const rows = [];
    for (const id of ids) rows.push(await finished(t, id));
    expect(t.llm.chatRequests().map((r) => lastUser(r.body).split("\n").at(-1))).toEqual(["job number 1", "job number 2", "job number 3"]);
    expect(rows.map((r) => r.response)).toEqual(["slow", "fast 2", "fast 3"]);
    // no overlap: each started after the one before had finished
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.startedAt! >= rows[i - 1]!.completedAt!).toBe(true);
    const at = t.llm.chatRequests().map((r) => r.at);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(290);
  });

  test("a conversation whose thread is gone (deleted behind the worker's back) goes on in a new one; the queue keeps moving", async () => {
    t.llm.reset();
    const first = await accept(t, { user_id: "erin", message: "remember this", conversation_id: "vanishing" });
    const firstRow = await finished(t, first.job_id);
    expect(firstRow.status).toBe("completed");
    const db = t.service.services.db;
    // the thread row goes, the job still names it
    await db.delete(threads).where(eq(threads.id, firstRow.threadId!));
    const second = await accept(t, { user_id: "erin", message: "and now?", conversation_id: "vanishing" });
    const third = await accept(t, { user_id: "erin", message: "next in line" });
    const secondRow = await finished(t, second.job_id);
    expect(secondRow.status).toBe("completed");
    expect(secondRow.threadId).not.toBe(firstRow.threadId);
    expect((await finished(t, third.job_id)).status).toBe("completed");
  });

  test("a failing LLM call fails the job with error code llm_error; the next job runs", async () => {
    t.llm.reset();
    // a request the provider refuses is no transient failure: the job is not run again (retries.test.ts)
    t.llm.enqueue({ error: { status: 400, message: "upstream refused" } }, { text: "fine again" });
    const bad = await accept(t, { user_id: "dave", message: "this fails" });
    const good = await accept(t, { user_id: "dave", message: "this works" });
    await t.llm.waitForRequests(2);
    const row = await finished(t, bad.job_id);
    expect(row.status).toBe("failed");
    const r = await hook(t, `/jobs/${bad.job_id}`);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error).toEqual({ code: "llm_error", message: expect.any(String) });
    expect(r.body.response).toBeUndefined();
    expect(r.body.completed_at).toMatch(ISO);
    expect((await finished(t, good.job_id)).response).toBe("fine again");
  });

  test("unknown job → 404 {error}", async () => {
    for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
      const r = await hook(t, `/jobs/${id}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: expect.any(String) });
    }
  });

  test("webhook jobs show in the gateway's GET /api/jobs for the owner, newest first", async () => {
    t.llm.reset();
    const a = await accept(t, { user_id: "erin", message: "list me 1" });
    const b = await accept(t, { user_id: "erin", message: "list me 2" });
    await finished(t, a.job_id);
    await finished(t, b.job_id);
    const res = await t.api("/api/jobs");
    expect(res.status).toBe(200);
    const { jobs } = (await res.json()) as { jobs: any[] };
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    expect(jobs[0]).toMatchObject({ id: b.job_id, status: "completed", response: `You said: ${lastUserMessage("erin", b.conversation_id, "list me 2")}`, user_id: "erin", conversation_id: b.conversation_id });
    expect(jobs[1].id).toBe(a.job_id);
    const created = jobs.map((j) => j.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    // a member sees none of them; without a token it is the plain-text 401
    const member = await t.createUser("member");
    const mine = await t.api("/api/jobs", { token: member.token });
    expect(((await mine.json()) as any).jobs).toEqual([]);
    const anon = await t.api("/api/jobs", { token: null });
    expect(anon.status).toBe(401);
  });

  test("the webhook listener serves no gateway routes, and the gateway no webhook routes", async () => {
    const job = await accept(t, { user_id: "frank", message: "where am I" });
    await finished(t, job.job_id);
    for (const [method, path] of [
      ["GET", "/api/status"],
      ["GET", "/api/jobs"],
      ["POST", "/api/v1/responses"],
      ["GET", "/health"],
    ] as const) {
      const res = await fetch(t.service.webhookUrl + path, {
        method,
        headers: { authorization: `Bearer ${t.token}`, "x-webhook-secret": SECRET, "content-type": "application/json" },
        body: method === "POST" ? JSON.stringify({ model: "m", input: "hi" }) : undefined,
      });
      expect(res.status).toBe(404);
    }
    const onGateway = [
      await t.api("/webhook", { method: "POST", json: { user_id: "x", message: "y" }, headers: { "x-webhook-secret": SECRET } }),
      await t.api(`/jobs/${job.job_id}`, { headers: { "x-webhook-secret": SECRET } }),
    ];
    for (const res of onGateway) {
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.type).toBe("not_found_error");
    }
  });
});

/** What the default scripted answer echoes back for a webhook job. */
function lastUserMessage(sender: string, conversationId: string, message: string) {
  return `<user-context>\nsender: ${sender}\nconversation_id: ${conversationId}\n</user-context>\n\n${message}`;
}

describe("webhook auth and validation", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: webhookEnv() });
  });
  afterAll(() => t.stop());

  const good = { user_id: "alice", message: "hello" };

  test("401 {error} for a missing or wrong secret or signature; nothing is stored", async () => {
    const raw = JSON.stringify(good);
    const json = { "content-type": "application/json" };
    const cases: Reply[] = [
      await post(t, good, { secret: null }),
      await post(t, good, { secret: "wrong-secret" }),
      await post(t, good, { secret: "" }),
      await post(t, good, { secret: SECRET.slice(0, -1) }),
      await hook(t, "/webhook", { raw, secret: null, headers: { ...json, "x-hub-signature-256": hmac(raw, "another-secret") } }),
      await hook(t, "/webhook", { raw, secret: null, headers: { ...json, "x-hub-signature-256": hmac(JSON.stringify({ ...good, message: "other" })) } }),
      await hook(t, "/webhook", { raw, secret: null, headers: { ...json, "x-hub-signature-256": hmac(raw).slice(7) } }), // no sha256= prefix
      await hook(t, "/webhook", { raw, secret: null, headers: { ...json, "x-hub-signature-256": "sha256=zz" } }),
      await hook(t, `/jobs/${crypto.randomUUID()}`, { secret: null }),
      await hook(t, `/jobs/${crypto.randomUUID()}`, { secret: "wrong-secret" }),
      // a read has no body: the HMAC of an empty one never changes, so it is no credential
      await hook(t, `/jobs/${crypto.randomUUID()}`, { secret: null, headers: { "x-hub-signature-256": hmac("") } }),
    ];
    for (const r of cases) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: expect.any(String) });
    }
    expect(await jobCount(t)).toBe(0);
  });

  test("a valid X-Hub-Signature-256 (HMAC-SHA256 of the raw body) is accepted instead of the secret", async () => {
    const raw = JSON.stringify({ user_id: "github", message: "signed push" });
    const r = await hook(t, "/webhook", { raw, secret: null, headers: { "content-type": "application/json", "x-hub-signature-256": hmac(raw) } });
    expect(r.status).toBe(202);
    const row = await finished(t, r.body.job_id);
    expect(row).toMatchObject({ sender: "github", message: "signed push", status: "completed" });
    // the signature covers the exact bytes: the same JSON re-spaced is refused
    const spaced = JSON.stringify({ user_id: "github", message: "signed push" }, null, 1);
    const bad = await hook(t, "/webhook", { raw: spaced, secret: null, headers: { "content-type": "application/json", "x-hub-signature-256": hmac(raw) } });
    expect(bad.status).toBe(401);
    expect(await jobCount(t)).toBe(1);
  });

  test("400 {error} for every malformed request; no job is created", async () => {
    const before = await jobCount(t);
    const send = (raw: RequestInit["body"], contentType?: string) => hook(t, "/webhook", { raw, headers: contentType ? { "content-type": contentType } : {} });
    const over = JSON.stringify({ user_id: "a", message: "x".repeat(64 * 1024) });
    const cases: [string, Reply][] = [
      ["no content type", await send(JSON.stringify(good))],
      ["text/plain", await send(JSON.stringify(good), "text/plain")],
      ["form", await send("user_id=a&message=b", "application/x-www-form-urlencoded")],
      ["json-ish type", await send(JSON.stringify(good), "application/jsonx")],
      ["bad JSON", await send("{user_id: 'a'", "application/json")],
      ["empty body", await send("", "application/json")],
      ["invalid UTF-8", await send(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), "application/json")],
      ["array", await post(t, [good])],
      ["string", await post(t, "hello")],
      ["number", await post(t, 42)],
      ["null", await post(t, null)],
      ["missing user_id", await post(t, { message: "hi" })],
      ["missing message", await post(t, { user_id: "a" })],
      ["empty user_id", await post(t, { user_id: "", message: "hi" })],
      ["empty message", await post(t, { user_id: "a", message: "" })],
      ["user_id a number", await post(t, { user_id: 7, message: "hi" })],
      ["message an object", await post(t, { user_id: "a", message: { text: "hi" } })],
      ["message null", await post(t, { user_id: "a", message: null })],
      ["conversation_id a number", await post(t, { ...good, conversation_id: 3 })],
      ["conversation_id empty", await post(t, { ...good, conversation_id: "" })],
      ["metadata a string", await post(t, { ...good, metadata: "x" })],
      ["metadata an array", await post(t, { ...good, metadata: [1, 2] })],
      ["metadata null", await post(t, { ...good, metadata: null })],
      ["body over 64 KB", await send(over, "application/json")],
      [
        "body over 64 KB, chunked",
        await send(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode(over));
              c.close();
            },
          }),
          "application/json",
        ),
      ],
    ];
    for (const [name, r] of cases) {
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      expect({ name, body: r.body }).toEqual({ name, body: { error: expect.any(String) } });
      expect(r.body.error.length).toBeGreaterThan(0);
    }
    const messages = Object.fromEntries(cases.map(([n, r]) => [n, r.body.error as string]));
    expect(messages["missing user_id"]).toContain("user_id");
    expect(messages["missing message"]).toContain("message");
    expect(messages["metadata a string"]).toContain("metadata");
    expect(messages["body over 64 KB"]).toContain("64 KB");
    expect(messages["no content type"]).toContain("Content-Type");
    expect(await jobCount(t)).toBe(before);
  });

  test("64 KB exactly is accepted; charset in the content type is fine", async () => {
    const shell = JSON.stringify({ user_id: "big", message: "" });
    const exact = JSON.stringify({ user_id: "big", message: "y".repeat(64 * 1024 - shell.length) });
    expect(Buffer.byteLength(exact)).toBe(64 * 1024);
    const r = await hook(t, "/webhook", { raw: exact, headers: { "content-type": "application/json; charset=utf-8" } });
    expect(r.status).toBe(202);
    expect((await finished(t, r.body.job_id)).status).toBe("completed");
  });

  test("after all that the channel still serves a good request", async () => {
    t.llm.reset();
    t.llm.enqueue({ text: "still here" });
    const job = await accept(t, good);
    await t.llm.waitForRequests(1);
    await finished(t, job.job_id);
    const r = await hook(t, `/jobs/${job.job_id}`);
    expect(r.body).toMatchObject({ status: "completed", response: "still here" });
    expect(t.logs.filter((l) => l.startsWith("webhook:"))).toEqual([]); // no 500s were logged
  });
});

describe("webhook rate limit", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: webhookEnv() });
  });
  afterAll(() => t.stop());

  test("the 61st request in a minute from one IP gets 429 with retry-after; nothing is queued", async () => {
    const job = await accept(t, { user_id: "burst", message: "one" });
    for (let i = 1; i < 60; i++) {
      const r = await hook(t, `/jobs/${job.job_id}`);
      expect(r.status).toBe(200);
    }
    const limited = [
      await post(t, { user_id: "burst", message: "two" }),
      await hook(t, `/jobs/${job.job_id}`),
      await post(t, { user_id: "burst", message: "three" }, { secret: "wrong" }),
    ];
    for (const r of limited) {
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: expect.any(String) });
      const after = Number(r.headers.get("retry-after"));
      expect(Number.isInteger(after)).toBe(true);
      expect(after).toBeGreaterThanOrEqual(1);
      expect(after).toBeLessThanOrEqual(60);
    }
    expect(await jobCount(t)).toBe(1);
    // the gateway has its own limits: unaffected
    expect((await t.api("/api/jobs")).status).toBe(200);
  });
});

describe("webhook configuration", () => {
  test("HTTP_ENABLED=true without HTTP_WEBHOOK_SECRET: startService throws a ConfigError naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "service-webhook-cfg-"));
    try {
      const env = { SERVICE_HOME: join(dir, "home"), GATEWAY_HOST: "127.0.0.1", GATEWAY_PORT: "0", HTTP_ENABLED: "true", HTTP_PORT: "0" };
      const started = startService({ paths: servicePaths(env), env, log: createLogger({ format: "json", write: () => {} }) });
      await expect(started).rejects.toBeInstanceOf(ConfigError);
      await expect(started).rejects.toThrow("HTTP_WEBHOOK_SECRET");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a HTTP_WEBHOOK_SECRET under 16 characters: startService refuses and says why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "service-webhook-cfg-"));
    try {
      const env = { SERVICE_HOME: join(dir, "home"), GATEWAY_HOST: "127.0.0.1", GATEWAY_PORT: "0", HTTP_ENABLED: "true", HTTP_PORT: "0", HTTP_WEBHOOK_SECRET: "hunter2" };
      const started = startService({ paths: servicePaths(env), env, log: createLogger({ format: "json", write: () => {} }) });
      await expect(started).rejects.toBeInstanceOf(ConfigError);
      await expect(started).rejects.toThrow("HTTP_WEBHOOK_SECRET is 7 characters long: the webhook channel needs a secret of at least 16 characters");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a job that runs past TURN_TIMEOUT_S while the model streams fails with turn_timeout, its partial answer kept", async () => {
    const t = await startTestService({ env: webhookEnv({ TURN_TIMEOUT_S: "1" }) });
    try {
      const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");
      t.llm.enqueue({ text: words, chunkDelayMs: 20 });
      const job = await accept(t, { user_id: "ops", message: "a long report" });
      const row = await finished(t, job.job_id);
      expect(row.status).toBe("failed");
      expect(row.error!.code).toBe("turn_timeout");
      expect(words.startsWith(row.response!)).toBe(true);
      expect(row.response!.length).toBeGreaterThan(0);
      expect(row.response!.length).toBeLessThan(words.length / 2);
      const rec = await hook(t, `/jobs/${job.job_id}`);
      expect(rec.body).toMatchObject({ status: "failed", error: { code: "turn_timeout" } });
    } finally {
      await t.stop();
    }
  });

  test("off by default: no webhook URL, and /api/status says so", async () => {
    const t = await startTestService();
    try {
      expect(t.service.webhookUrl).toBeUndefined();
      const status = (await (await t.api("/api/status")).json()) as any;
      expect(status.channels.webhook).toBe(false);
      expect((await t.api("/webhook", { method: "POST", json: { user_id: "a", message: "b" } })).status).toBe(404);
    } finally {
      await t.stop();
    }
  });

  test("a job that meets an approval waits (its lane too); approved in the web UI's endpoint, it runs on and completes", async () => {
    const t = await startTestService({ env: webhookEnv({ TOOLS_ASK: "file_list" }) });
    try {
      t.llm.enqueue({ toolCalls: [{ name: "file_list", arguments: {} }] });
      const first = await accept(t, { user_id: "gina", message: "list my files", conversation_id: "gated" });
      const waiting = await jobUntil(t, first.job_id, (j) => j.status === "waiting");
      expect(waiting.waiting).toBe("approval");
      const rec = await hook(t, `/jobs/${first.job_id}`);
      expect(rec.body).toMatchObject({ status: "waiting", waiting: "approval" });
      expect(rec.body.response).toBeUndefined();

      // the same conversation's next job waits behind it; another conversation is not held up
      const second = await accept(t, { user_id: "gina", message: "hello again", conversation_id: "gated" });
      const other = await accept(t, { user_id: "gina", message: "fresh start", conversation_id: "free" });
      expect((await finished(t, other.job_id)).status).toBe("completed");
      expect((await hook(t, `/jobs/${second.job_id}`)).body.status).toBe("queued");

      // the owner approves the call where the web UI does
      t.llm.enqueue({ text: "You have no files yet." });
      const approved = await t.api(`/api/chat/approvals/${waiting.threadId}`, { method: "POST", json: { decision: "approve" } });
      expect(approved.status).toBe(200);
      const done = await finished(t, first.job_id);
      expect(done).toMatchObject({ status: "completed", response: "You have no files yet.", waiting: null });
      // then the lane goes on
      expect((await finished(t, second.job_id)).status).toBe("completed");
    } finally {
      await t.stop();
    }
  });
});
