// Webhook jobs survive the process: the compiled binary is killed (SIGKILL) or stopped (SIGTERM)
// with a job running and others queued; after a restart on the same home every job completes
// exactly once, in order, and the database holds each job's turn once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { createClient } from "@libsql/client";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN as DEFAULT_BIN, listeningUrl, root, serveUntil, serveEnv, webhookUrl } from "../../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../../support/scripted-llm";
import { until } from "../../support/until";

let BIN = DEFAULT_BIN;
const TOKEN = "durability-token-0123456789abcdef0123456789";
const SECRET = "durability-secret-0123456789";

let llm: ScriptedLLM;
let dir: string;

/** The newest modification time of any file under `path`. */
function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n))));
}

type Running = { proc: Subprocess<"ignore", "pipe", "pipe">; url: string; webhook: string; output: () => string };

/** Starts `serve` on `home` and resolves once it printed its URLs (readiness, not a sleep). */
async function serve(home: string, extraEnv: Record<string, string> = {}): Promise<Running> {
  const env = serveEnv({ dir, home, token: TOKEN, llmUrl: llm.url, webhookSecret: SECRET }, extraEnv);
  const s = await serveUntil(["serve"], { cwd: dir, env, bin: BIN }, (out) => {
    const url = listeningUrl(out);
    const webhook = webhookUrl(out);
    if (url && !webhook && /instance token/.test(out)) throw new Error(`${BIN} does not print the webhook channel's URL: rebuild it (bun run build)`);
    return url && webhook ? { url, webhook } : undefined;
  });
  return { proc: s.proc, ...s.ready, output: s.output };
}

async function postJob(s: Running, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${s.webhook}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
    body: JSON.stringify(body),
  });
  const reply = (await res.json()) as any;
  expect(res.status).toBe(202);
  expect(reply.status).toBe("queued");
  return reply.job_id;
}

async function jobRecord(s: Running, id: string): Promise<any> {
  const res = await fetch(`${s.webhook}/jobs/${id}`, { headers: { "x-webhook-secret": SECRET } });
  expect(res.status).toBe(200);
  return res.json();
}

/** Polls the gateway's job list (no webhook rate-limit budget) until these jobs have all finished; bounded. */
async function allFinished(s: Running, ids: string[], timeoutMs = 15_000): Promise<void> {
  let mine: any[] = [];
  await until(
    () => `the jobs to finish: ${JSON.stringify(mine.map((j) => j.status))}`,
    async () => {
      const res = await fetch(`${s.url}/api/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } });
      mine = ((await res.json()) as { jobs: any[] }).jobs.filter((j) => ids.includes(j.id));
      return mine.length === ids.length && mine.every((j) => j.status === "completed" || j.status === "failed");
    },
    { timeoutMs },
  );
}

/** The job's message, as the LLM got it (after the <user-context> block). */
const messageOf = (body: any) => String(body.messages.at(-1).content).split("\n\n").at(-1)!;

/** Everything the database holds about webhook jobs and their turns (read after the process stopped). */
async function readDatabase(home: string) {
  const db = createClient({ url: `file:${join(home, "service.db")}` });
  try {
    const jobs = (await db.execute("SELECT id, status, message, response, response_id, thread_id, attempts, started_at, completed_at FROM jobs ORDER BY seq")).rows;
    const items = (await db.execute("SELECT thread_id, response_id, seq, data FROM items ORDER BY thread_id, seq")).rows.map((r) => ({
      threadId: String(r.thread_id),
      responseId: String(r.response_id),
      item: JSON.parse(String(r.data)),
    }));
    const responses = (await db.execute("SELECT id, thread_id, status, error FROM responses")).rows.map((r) => ({
      id: String(r.id),
      status: String(r.status),
      error: r.error ? (JSON.parse(String(r.error)) as { code: string }) : null,
    }));
    const threads = (await db.execute("SELECT id FROM threads")).rows;
    return { jobs, items, responses, threads };
  } finally {
    db.close();
  }
}

/** Each job's message as exactly one user item and one completed response with the right answer. */
function expectEachTurnOnce(data: Awaited<ReturnType<typeof readDatabase>>, messages: string[], answer: (m: string) => string) {
  const userItems = data.items.filter((r) => r.item.type === "message" && r.item.role === "user");
  for (const m of messages) {
    expect({ m, n: userItems.filter((r) => String(r.item.content).endsWith(`\n\n${m}`)).length }).toEqual({ m, n: 1 });
  }
  expect(userItems).toHaveLength(messages.length);
  for (const job of data.jobs) {
    expect(job.status).toBe("completed");
    const mine = data.responses.filter((r) => r.id === job.response_id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.status).toBe("completed");
    const assistant = data.items.filter((r) => r.responseId === job.response_id && r.item.type === "message" && r.item.role === "assistant");
    expect(assistant.map((r) => r.item.content)).toEqual([answer(String(job.message))]);
  }
  expect(data.responses).toHaveLength(messages.length);
  expect(data.responses.every((r) => r.status === "completed")).toBe(true);
}

beforeAll(async () => {
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-webhook-durability-"));
  if (!existsSync(BIN)) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build failed");
  } else if (!process.env.SERVICE_BIN && newest(join(root, "src")) > statSync(BIN).mtimeMs) {
    // dist/service is older than the source: test the source, in a binary of our own (dist/ is left alone)
    BIN = join(dir, "service");
    const build = Bun.spawnSync(["bun", "run", "build.ts", "--outfile", BIN, "--no-sourcemap"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build.ts failed");
  }
});

afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("webhook jobs across restarts of the binary", () => {
  test("SIGKILL with job 1 running and 2–5 queued: after a restart each completes exactly once, in order", async () => {
    const home = join(dir, "kill-home");
    const answer = (m: string) => `answer to ${m}`;
    const messages = [1, 2, 3, 4, 5].map((n) => `durable job ${n}`);
    llm.reset();
    llm.respondWith((body) => (messageOf(body) === messages[0] ? { hang: true } : { text: answer(messageOf(body)) }));

    const first = await serve(home);
    const ids: string[] = [];
    for (const message of messages) ids.push(await postJob(first, { user_id: "ops", message, conversation_id: "incident-7" }));
    await llm.waitForRequests(1);
    expect(messageOf(llm.chatRequests()[0]!.body)).toBe(messages[0]!);
    // job 1 is running and holds the worker: the others wait their turn
    expect((await jobRecord(first, ids[0]!)).status).toBe("running");
    for (const id of ids.slice(1)) expect((await jobRecord(first, id)).status).toBe("queued");
    first.proc.kill("SIGKILL");
    expect(await first.proc.exited).not.toBe(0);
    expect(llm.chatRequests()).toHaveLength(1);

    llm.reset();
    llm.respondWith((body) => ({ text: answer(messageOf(body)) }));
    const second = await serve(home);
    await allFinished(second, ids);
    for (const [i, id] of ids.entries()) {
      const rec = await jobRecord(second, id);
      expect(rec).toMatchObject({ id, status: "completed", response: answer(messages[i]!), conversation_id: "incident-7" });
      expect(rec.error).toBeUndefined();
    }
    // after the restart: job 1 again first, then the rest in the order they were accepted,
    // one conversation growing by one exchange per job
    const sent = llm.chatRequests().map((r) => r.body);
    expect(sent.map(messageOf)).toEqual(messages);
    for (const [i, body] of sent.entries()) expect(body.messages.filter((m: any) => m.role !== "system")).toHaveLength(2 * i + 1);
    expect(second.output()).toContain("1 interrupted job(s) queued again");
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);

    const data = await readDatabase(home);
    expect(data.jobs.map((j) => j.id)).toEqual(ids);
    expect(data.jobs.map((j) => j.attempts)).toEqual([2, 1, 1, 1, 1]);
    for (let i = 1; i < data.jobs.length; i++) expect(String(data.jobs[i]!.started_at) >= String(data.jobs[i - 1]!.completed_at)).toBe(true);
    expectEachTurnOnce(data, messages, answer);
    expect(new Set(data.jobs.map((j) => j.thread_id)).size).toBe(1);
    expect(data.threads).toHaveLength(1);
  }, 40_000);

  test("SIGTERM with a job running: it goes back to the queue and completes after the restart", async () => {
    const home = join(dir, "term-home");
    const answer = (m: string) => `done: ${m}`;
    const messages = ["graceful job A", "graceful job B"];
    llm.reset();
    llm.respondWith((body) => (messageOf(body) === messages[0] ? { hang: true } : { text: answer(messageOf(body)) }));

    const first = await serve(home, { SHUTDOWN_GRACE_MS: "200" });
    const ids: string[] = [];
    // one conversation: B waits behind A
    for (const message of messages) ids.push(await postJob(first, { user_id: "ops", message, conversation_id: "graceful" }));
    await llm.waitForRequests(1);
    first.proc.kill("SIGTERM");
    // the running turn gets the shutdown grace, is then cancelled, and its job re-queued
    expect(await first.proc.exited).toBe(0);
    expect(first.output()).toContain("stopped");
    let data = await readDatabase(home);
    expect(data.jobs.map((j) => j.status)).toEqual(["queued", "queued"]);
    expect(data.jobs.map((j) => j.completed_at)).toEqual([null, null]);
    // the cut-short attempt is stored as far as it got (its input), for the next run to go on with
    expect(data.items.map((r) => r.item.type)).toEqual(["message"]);
    expect(data.responses.map((r) => [r.status, r.error?.code])).toEqual([["failed", "shutdown"]]);
    expect(data.threads).toHaveLength(1);

    llm.reset();
    llm.respondWith((body) => ({ text: answer(messageOf(body)) }));
    const second = await serve(home);
    await allFinished(second, ids);
    const [a, b] = [await jobRecord(second, ids[0]!), await jobRecord(second, ids[1]!)];
    expect(a).toMatchObject({ status: "completed", response: answer(messages[0]!) });
    expect(a.error).toBeUndefined();
    expect(b).toMatchObject({ status: "completed", response: answer(messages[1]!) });
    expect(llm.chatRequests().map((r) => messageOf(r.body))).toEqual(messages);
    // job A's conversation holds only its own exchange: no trace of the cancelled attempt
    expect(llm.chatRequests()[0]!.body.messages.filter((m: any) => m.role !== "system")).toHaveLength(1);
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);

    data = await readDatabase(home);
    expect(data.jobs.map((j) => j.attempts)).toEqual([2, 1]);
    expectEachTurnOnce(data, messages, answer);
  }, 40_000);

  test("SIGTERM while the model is streaming a job's answer: back to the queue, then the answer asked for again, once", async () => {
    const home = join(dir, "stream-home");
    const long = Array.from({ length: 300 }, (_, i) => `part${i}`).join(" ");
    const message = "streamed job";
    llm.reset();
    llm.respondWith(() => ({ text: long, chunkDelayMs: 20 }));

    const first = await serve(home, { SHUTDOWN_GRACE_MS: "200" });
    const id = await postJob(first, { user_id: "ops", message });
    await llm.waitForTextChunks(10);
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);
    let data = await readDatabase(home);
    // the answer was cut short by the stop: not completed; the turn is stored as far as it got
    expect(data.jobs.map((j) => j.status)).toEqual(["queued"]);
    expect(data.jobs[0]!.response).toBeNull();
    expect(data.items.map((r) => r.item.status ?? "whole")).toEqual(["whole", "incomplete"]);
    expect(data.responses.map((r) => r.error?.code)).toEqual(["shutdown"]);

    llm.reset();
    llm.respondWith(() => ({ text: long }));
    const second = await serve(home);
    await allFinished(second, [id]);
    expect(await jobRecord(second, id)).toMatchObject({ status: "completed", response: long });
    expect(llm.chatRequests()).toHaveLength(1);
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);
    data = await readDatabase(home);
    expect(data.jobs.map((j) => j.attempts)).toEqual([2]);
    expectEachTurnOnce(data, [message], () => long);
  }, 40_000);
});
