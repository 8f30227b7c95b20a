// Two replicas of the compiled binary on one PostgreSQL database, each with its own home, as
// a team would run them behind a load balancer: a response made on one is retrieved and
// chained on the other, the rate limit is one budget, jobs posted to both run once each, a
// turn sent through one streams on the other's event stream, a routine fires once per tick,
// and a job whose replica is killed with SIGKILL mid-turn is finished by the other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, listeningUrl, serveUntil, serveEnv, webhookUrl } from "../support/binary";
import { freshPostgres, skipWithoutPostgres } from "../support/postgres";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

const TOKEN = "replicas-token-0123456789abcdef";
const SECRET = "replicas-secret-0123456789";
const RATE_LIMIT = 10;

const skip = skipWithoutPostgres();
let llm: ScriptedLLM;
let dir: string;
let databaseUrl: string;

interface Replica {
  name: string;
  url: string;
  webhook: string;
  proc: ReturnType<typeof Bun.spawn>;
  output(): string;
}
let a: Replica;
let b: Replica;

async function replica(name: string): Promise<Replica> {
  const home = join(dir, name);
  const env = serveEnv(
    { dir, home, token: TOKEN, llmUrl: llm.url, webhookSecret: SECRET },
    { DATABASE_URL: databaseUrl, LLM_MAX_RETRIES: "0", HTTP_JOB_LEASE_S: "2", RESPONSES_RATE_LIMIT: String(RATE_LIMIT) },
  );
  const s = await serveUntil(["serve"], { cwd: dir, env }, (out) => {
    const url = listeningUrl(out);
    const webhook = webhookUrl(out);
    return url && webhook ? { url, webhook } : undefined;
  });
  return { name, proc: s.proc, output: s.output, ...s.ready };
}

beforeAll(async () => {
  if (skip) return;
  ensureBinary();
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-replicas-"));
  databaseUrl = await freshPostgres();
  // both start at once on an empty database: one migrates, the other waits for it
  [a, b] = await Promise.all([replica("a"), replica("b")]);
}, 60_000);

afterAll(async () => {
  for (const r of [a, b]) {
    r?.proc.kill("SIGTERM");
    await r?.proc.exited;
  }
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const api = (r: Replica, path: string, init: { method?: string; json?: unknown; token?: string } = {}) =>
  fetch(`${r.url}${path}`, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${init.token ?? TOKEN}`, ...(init.json === undefined ? {} : { "content-type": "application/json" }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });

async function postJob(r: Replica, message: string, conversation = crypto.randomUUID()): Promise<string> {
  const res = await fetch(`${r.webhook}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
    body: JSON.stringify({ user_id: "ops", conversation_id: conversation, message }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { job_id: string }).job_id;
}

/** Long-polls the job on a replica until it has ended. */
async function ended(r: Replica, id: string): Promise<any> {
  for (let i = 0; i < 30; i++) {
    const job = (await (await fetch(`${r.webhook}/jobs/${id}?wait=10`, { headers: { "x-webhook-secret": SECRET } })).json()) as any;
    if (job.status === "completed" || job.status === "failed") return job;
  }
  throw new Error(`job ${id} did not end`);
}

const lastUser = (body: any): string => String(body.messages.filter((m: any) => m.role === "user").at(-1)?.content ?? "");
const asked = (text: string) => llm.chatRequests().filter((r) => lastUser(r.body).includes(text));

describe.skipIf(skip)("two replicas on one PostgreSQL database", () => {
  test("a response made on one is retrieved and chained on the other", async () => {
    llm.respondWith(() => ({ text: "Noted: the code word is heron." }));
    const first = await api(a, "/api/v1/responses", { json: { model: "default", input: "The code word is heron." } });
    expect(first.status).toBe(200);
    const made = (await first.json()) as any;

    const got = (await (await api(b, `/api/v1/responses/${made.id}`)).json()) as any;
    expect(got.id).toBe(made.id);
    expect(got.output).toEqual(made.output);

    llm.respondWith(() => ({ text: "heron" }));
    const chained = await api(b, "/api/v1/responses", { json: { model: "default", input: "What is the code word?", previous_response_id: made.id } });
    expect(chained.status).toBe(200);
    expect(((await chained.json()) as any).status).toBe("completed");
    // the model answering on b read the turn made on a
    const history = JSON.stringify(llm.lastChat().messages);
    expect(history).toContain("The code word is heron.");
    expect(history).toContain("Noted: the code word is heron.");
  }, 30_000);

  test("an identity file written through one replica is in the next turn's system prompt on the other", async () => {
    const token = ((await (await api(a, "/api/webchat/v2/admin/users", { json: { role: "member" } })).json()) as any).api_token as string;
    llm.respondWith(() => ({ text: "ok" }));
    // b has read the user's identity files for a turn, and keeps them
    expect((await api(b, "/api/v1/responses", { json: { model: "default", input: "hello" }, token })).status).toBe(200);
    const written = await api(a, "/api/memory/write", { json: { path: "USER.md", content: "# About you\nThe user's cat is called Miso." }, token });
    expect(written.status).toBe(200);
    const system = async () => {
      expect((await api(b, "/api/v1/responses", { json: { model: "default", input: "hello again" }, token })).status).toBe(200);
      return String(llm.lastChat().messages[0].content);
    };
    // a replica hears of the write within moments (LISTEN/NOTIFY)
    let prompt = await system();
    for (let i = 0; i < 8 && !prompt.includes("Miso"); i++) prompt = await system();
    expect(prompt).toContain("The user's cat is called Miso.");
  }, 30_000);

  test("the rate limit is one budget whichever replica a request reaches", async () => {
    const created = (await (await api(a, "/api/webchat/v2/admin/users", { json: { role: "member" } })).json()) as any;
    const token = created.api_token as string;
    llm.respondWith(() => ({ text: "ok" }));
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMIT; i++) {
      const r = await api(i % 2 ? b : a, "/api/v1/responses", { json: { model: "default", input: `turn ${i}` }, token });
      statuses.push(r.status);
      if (r.status === 429) expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([...Array(RATE_LIMIT).fill(200), 429]);
  }, 30_000);

  test("jobs posted to both run once each", async () => {
    llm.respondWith((body) => ({ text: `done: ${lastUser(body).split("\n").at(-1)}` }));
    const ids = await Promise.all([
      ...[1, 2, 3].map((i) => postJob(a, `job from a ${i}`)),
      ...[1, 2, 3].map((i) => postJob(b, `job from b ${i}`)),
    ]);
    // each is read to its end on the other replica than the one that took it: long polls hear it there too
    const jobs = await Promise.all(ids.map((id, i) => ended(i < 3 ? b : a, id)));
    for (const j of jobs) expect(j.status).toBe("completed");
    for (const name of ["a", "b"]) for (const i of [1, 2, 3]) expect(asked(`job from ${name} ${i}`)).toHaveLength(1);
  }, 60_000);

  test("a turn sent through one replica streams on the other's /api/chat/events", async () => {
    const events = await fetch(`${b.url}/api/chat/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(events.status).toBe(200);
    const reader = events.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const read = async (until: (s: string) => boolean) => {
      for (const deadline = Date.now() + 15_000; !until(seen) && Date.now() < deadline; ) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value, { stream: true });
      }
    };
    await read((x) => x.includes(": connected"));
    llm.respondWith(() => ({ text: "streamed across replicas", chunks: 3 }));
    const send = async () => ((await (await api(a, "/api/chat/send", { json: { content: "hello from a" } })).json()) as any).response_id as string;
    const ended = (id: string) => (x: string) => new RegExp(`"turn.completed"[^\n]*${id}`).test(x);
    // a turn's start and end always reach the other replicas; its text once they know of the open
    // stream (said when it opens: a turn that starts in that moment may miss its text)
    const first = await send();
    await read(ended(first));
    expect(seen).toMatch(new RegExp(`"turn.started"[^\n]*${first}`));
    expect(ended(first)(seen)).toBe(true);
    let streamed = seen.includes("across replicas");
    for (let i = 0; i < 4 && !streamed; i++) {
      const next = await send();
      await read(ended(next));
      streamed = seen.includes("across replicas");
    }
    await reader.cancel();
    expect(streamed).toBe(true);
  }, 60_000);

  test("a routine fires once per tick, whichever replica has it", async () => {
    llm.respondWith(() => ({ text: "tick" }));
    const created = await api(a, "/api/routines", { json: { name: "pulse", schedule: "every 2s", timezone: "UTC", prompt: "Routine pulse." } });
    expect(created.status).toBe(201);
    const routine = (await created.json()) as any;
    // three ticks' time on the real clock
    let runs: any[] = [];
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await Bun.sleep(250)) {
      runs = ((await (await api(b, `/api/routines/${routine.id}/runs?limit=50`)).json()) as any).runs;
      if (runs.filter((r) => r.status === "completed").length >= 3) break;
    }
    await api(b, `/api/routines/${routine.id}`, { method: "PATCH", json: { enabled: false } });
    const ticks = runs.map((r) => r.scheduled_for);
    expect(runs.filter((r) => r.status === "completed").length).toBeGreaterThanOrEqual(3);
    expect(new Set(ticks).size).toBe(ticks.length);
    const jobs = runs.filter((r) => r.outcome === "ran").length;
    // the model was asked once per run that ran (a run still queued at the pause may follow)
    expect(asked("Routine pulse.").length).toBeGreaterThanOrEqual(jobs - 1);
    expect(asked("Routine pulse.").length).toBeLessThanOrEqual(jobs);
  }, 40_000);

  test("a replica killed with SIGKILL mid-job: its lease runs out and the other finishes the job", async () => {
    llm.reset();
    // the first ask hangs (the replica dies while it waits); the next one is answered
    let calls = 0;
    llm.respondWith((body) => (lastUser(body).includes("Long job") && calls++ === 0 ? { hang: true } : { text: "finished by the survivor" }));
    const id = await postJob(a, "Long job: compile the report.");
    await llm.waitForRequests(1, 15_000);
    a.proc.kill("SIGKILL");
    await a.proc.exited;

    const job = await ended(b, id);
    expect(job).toMatchObject({ status: "completed", response: "finished by the survivor" });
    expect(asked("Long job")).toHaveLength(2);
    expect(b.output()).toContain("interrupted job(s) queued again");
  }, 60_000);
});
