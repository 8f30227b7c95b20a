// Effects happen once, on the compiled binary: a webhook job switches a "heater" (an endpoint
// on loopback that counts its hits) through a tool call, and the service is killed with
// SIGKILL at the worst moments. After a restart the job goes on from what was stored: the
// heater is switched exactly once, and a call that was in flight is told to the model as
// interrupted instead of being repeated blindly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ensureBinary, listeningUrl, serveUntil, serveEnv, webhookUrl } from "../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { until } from "../support/until";

const TOKEN = "effects-once-token-0123456789abcdef";
const SECRET = "effects-once-secret-0123456789";

let llm: ScriptedLLM;
let dir: string;
let heater: { url: string; hits: number; hang: boolean; stop: () => void };

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-effects-"));
  let hits = 0;
  const state = { hang: false };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      hits++;
      if (state.hang) await new Promise(() => {}); // the heater never answers: the call stays in flight
      return new Response(`heater on (${new URL(req.url).pathname})`);
    },
  });
  heater = {
    url: `http://127.0.0.1:${server.port}`,
    get hits() {
      return hits;
    },
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
    },
    stop: () => server.stop(true),
  } as typeof heater;
});

afterAll(async () => {
  heater.stop();
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(home: string, extra: Record<string, string> = {}) {
  const env = serveEnv(
    { dir, home, token: TOKEN, llmUrl: llm.url, webhookSecret: SECRET },
    { LLM_MAX_RETRIES: "0", WEB_FETCH_ALLOW_PRIVATE: "true", ...extra },
  );
  const s = await serveUntil(["serve"], { cwd: dir, env }, (out) => {
    const url = listeningUrl(out);
    const webhook = webhookUrl(out);
    return url && webhook ? { url, webhook } : undefined;
  });
  return { proc: s.proc, ...s.ready };
}

async function postJob(webhook: string, message: string): Promise<string> {
  const res = await fetch(`${webhook}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
    body: JSON.stringify({ user_id: "home-assistant", message }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { job_id: string }).job_id;
}

/** Long-polls the job until it has ended. */
async function ended(webhook: string, id: string): Promise<any> {
  for (let i = 0; i < 20; i++) {
    const job = (await (await fetch(`${webhook}/jobs/${id}?wait=10`, { headers: { "x-webhook-secret": SECRET } })).json()) as any;
    if (job.status === "completed" || job.status === "failed") return job;
  }
  throw new Error(`job ${id} did not end`);
}

const lastRole = (body: any) => body.messages.at(-1).role;
const toolOutputs = (body: any) => body.messages.filter((m: any) => m.role === "tool").map((m: any) => String(m.content));

describe("a job's tool call across a kill -9", () => {
  test("killed while the model streams its final answer, after the heater was switched: switched once, the answer given after the restart", async () => {
    const home = join(dir, "after-tool");
    const before = heater.hits;
    llm.reset();
    llm.respondWith((body) =>
      lastRole(body) === "user"
        ? { toolCalls: [{ name: "web_fetch", arguments: { url: `${heater.url}/on` } }] }
        : { text: Array.from({ length: 200 }, (_, i) => `word${i}`).join(" "), chunkDelayMs: 20 },
    );
    const first = await serve(home);
    const id = await postJob(first.webhook, "Turn the heater on.");
    await llm.waitForTextChunks(5, 15_000);
    expect(heater.hits - before).toBe(1);
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    llm.reset();
    llm.respondWith((body) => (lastRole(body) === "user" ? { toolCalls: [{ name: "web_fetch", arguments: { url: `${heater.url}/on` } }] } : { text: "The heater is on." }));
    const second = await serve(home);
    try {
      const job = await ended(second.webhook, id);
      expect(job).toMatchObject({ status: "completed", response: "The heater is on." });
      // the model was asked again with the stored result: the heater was not switched twice
      expect(heater.hits - before).toBe(1);
      const asked = llm.chatRequests().map((r) => r.body);
      expect(asked).toHaveLength(1);
      expect(toolOutputs(asked[0])[0]).toContain("heater on (/on)");
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  }, 60_000);

  test("killed while the call is in flight: not repeated blindly, the model is told it was interrupted", async () => {
    const home = join(dir, "in-flight");
    const before = heater.hits;
    heater.hang = true;
    llm.reset();
    llm.respondWith(() => ({ toolCalls: [{ name: "web_fetch", arguments: { url: `${heater.url}/boost` } }] }));
    const first = await serve(home);
    const id = await postJob(first.webhook, "Boost the heater.");
    await until("the heater to be hit", () => heater.hits - before >= 1);
    expect(heater.hits - before).toBe(1);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    heater.hang = false;

    llm.reset();
    llm.respondWith(() => ({ text: "I could not tell whether the boost went through; please check the heater." }));
    const second = await serve(home);
    try {
      const job = await ended(second.webhook, id);
      expect(job.status).toBe("completed");
      expect(heater.hits - before).toBe(1);
      const asked = llm.chatRequests().map((r) => r.body);
      expect(asked).toHaveLength(1);
      expect(toolOutputs(asked[0])[0]).toContain("interrupted");
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  }, 60_000);
});

describe("a job that waits on an approval", () => {
  test("waits (the record says so), is listed by `service approvals`, and completes once approved there; the callback hears both", async () => {
    const home = join(dir, "approvals");
    const callbacks: any[] = [];
    const receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (req) => (callbacks.push(await req.json()), new Response("ok")) });
    llm.reset();
    llm.respondWith((body) => (lastRole(body) === "user" ? { toolCalls: [{ name: "file_list", arguments: {} }] } : { text: "Your files folder is empty." }));
    const s = await serve(home, { TOOLS_ASK: "file_list", HTTP_CALLBACK_ALLOW_HOSTS: "127.0.0.1" });
    // spawned, not spawnSync: the scripted LLM answering the service runs in this process
    const cli = async (...args: string[]) => {
      const p = Bun.spawn([BIN, "approvals", ...args, "--home", home], { env: { PATH: process.env.PATH ?? "", HOME: dir, SERVICE_REBORN_WEBUI_TOKEN: TOKEN }, stdout: "pipe", stderr: "pipe" });
      const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
      return { code, out, err };
    };
    try {
      const res = await fetch(`${s.webhook}/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
        body: JSON.stringify({ user_id: "ops", message: "What is in my files?", callback_url: `http://127.0.0.1:${receiver.port}/hook` }),
      });
      const { job_id } = (await res.json()) as any;
      const waiting = (await (await fetch(`${s.webhook}/jobs/${job_id}?wait=10`, { headers: { "x-webhook-secret": SECRET } })).json()) as any;
      expect(waiting).toMatchObject({ status: "waiting", waiting: "approval" });
      const listed = await cli("list", "--json");
      expect(listed.code).toBe(0);
      const [pending] = JSON.parse(listed.out).approvals;
      expect(pending).toMatchObject({ tool: "file_list" });
      const decided = await cli("approve", pending.thread_id);
      expect(decided.code).toBe(0);
      const job = await ended(s.webhook, job_id);
      expect(job).toMatchObject({ status: "completed", response: "Your files folder is empty." });
      await until("two callbacks", () => callbacks.length >= 2);
      expect(callbacks.map((c) => c.event ?? c.status)).toEqual(["waiting", "completed"]);
      expect(callbacks[0].approval).toMatchObject({ tool: "file_list", url: expect.stringContaining(`/?thread=${pending.thread_id}`) });
      expect((await cli("list")).out).toContain("nothing waits");
    } finally {
      receiver.stop(true);
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  }, 60_000);
});

