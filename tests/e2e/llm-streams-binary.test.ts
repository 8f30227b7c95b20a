// Many turns at once through the compiled binary: past 256 streams (Bun's own fetch limit,
// which `serve` raises at its relaunch) every turn reaches the LLM at once, and GET
// /api/status counts the open streams. The turns are posted through node:http, because this
// test process's own fetch is held to 256 requests at once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, listeningUrl, serveUntil, type Served } from "../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

const TOKEN = "llm-streams-binary-token-0123456789abcdef";
const TURNS = 300;

let llm: ScriptedLLM;
let dir: string;
let served: Served<string>;

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM({ record: false });
  dir = mkdtempSync(join(tmpdir(), "service-streams-"));
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    SERVICE_HOME: join(dir, "home"),
    SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: "k",
    LLM_MODEL: "scripted-model",
    CLI_ENABLED: "false",
    GATEWAY_PORT: "0",
    RESPONSES_RATE_LIMIT: "0",
  };
  served = await serveUntil(["serve"], { cwd: dir, env }, listeningUrl);
});

afterAll(async () => {
  served?.proc.kill("SIGTERM");
  await served?.proc.exited;
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/** One streamed turn; resolves with the whole event stream. */
function streamedTurn(i: number): Promise<string> {
  const body = JSON.stringify({ model: "default", input: `question ${i}`, stream: true });
  return new Promise((resolve, reject) => {
    const req = http.request(`${served.ready}/api/v1/responses`, {
      method: "POST",
      agent,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve(text));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

test(`${TURNS} streamed turns at once all reach the LLM, are counted in /api/status, and complete`, async () => {
  const gate = Promise.withResolvers<void>();
  llm.respondWith(() => ({ text: "an answer held open mid-way", holdUntil: gate.promise }));
  const turns = Array.from({ length: TURNS }, (_, i) => streamedTurn(i));
  // with Bun's default of 256 requests at once, the rest would wait inside the service unseen
  await llm.waitForTextChunks(TURNS, 30_000);
  const status = (await (await fetch(`${served.ready}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as any;
  expect(status.llm.streams).toEqual({ limit: 1024, active: TURNS, waiting: 0 });
  gate.resolve();
  const bodies = await Promise.all(turns);
  expect(bodies.filter((b) => b.includes("response.completed"))).toHaveLength(TURNS);
}, 60_000);
