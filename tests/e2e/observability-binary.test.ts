// The compiled binary, run from a folder with no node_modules, as an operator runs it: traces
// reach an OTLP receiver on loopback (the OpenTelemetry SDK loads inside the binary), /metrics
// answers, a turn's cost is on the response and in GET /api/usage and `service usage`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "bun";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ensureBinary, serveUntil, type Served } from "../support/binary";
import { startOtlpReceiver } from "../support/otlp-receiver";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

const TOKEN = "observability-binary-token-0123456789";
let llm: ScriptedLLM;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let dir: string;
let served: Served<string>;
let url: string;

const env = () => ({
  PATH: process.env.PATH ?? "",
  HOME: dir,
  SERVICE_HOME: join(dir, "home"),
  SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
  LLM_BASE_URL: llm.url,
  LLM_API_KEY: "k",
  LLM_MODEL: "scripted-model",
  GATEWAY_PORT: "0",
  CLI_ENABLED: "false",
  LOG_FORMAT: "json",
  METRICS_ENABLED: "true",
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
});
const api = (path: string, init: RequestInit = {}) => fetch(url + path, { ...init, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" } });

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM();
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), "service-obs-bin-"));
  mkdirSync(join(dir, "home"), { recursive: true });
  writeFileSync(join(dir, "home", "config.json"), JSON.stringify({ llm: { prices: { "scripted-model": { input_per_mtok: 1, output_per_mtok: 2 } } } }));
  const listening = (out: string) => out.split("\n").find((l) => l.includes('"msg":"listening"'));
  served = await serveUntil(["serve"], { cwd: dir, env: env() }, listening);
  url = JSON.parse(served.ready).url;
});

afterAll(async () => {
  served?.proc.kill("SIGTERM");
  await served?.proc.exited;
  await llm.close();
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the binary", () => {
  test("a turn: its cost on retrieval and in /api/usage, its series on /metrics, its spans at the receiver", async () => {
    llm.enqueue({ text: "Observed.", usage: { prompt_tokens: 1000, completion_tokens: 500, prompt_tokens_details: { cached_tokens: 100 } } });
    const created = (await (await api("/api/v1/responses", { method: "POST", body: JSON.stringify({ model: "m", input: "watch me" }) })).json()) as any;
    expect(created.status).toBe("completed");
    const got = (await (await api(`/api/v1/responses/${created.id}`)).json()) as any;
    expect(got.usage.cost_usd).toBeCloseTo((1000 * 1 + 500 * 2) / 1e6, 12);
    const usage = (await (await api("/api/usage?group_by=model")).json()) as any;
    expect(usage.rows).toEqual([expect.objectContaining({ key: "scripted-model", turns: 1, input_tokens: 1000, cached_tokens: 100, output_tokens: 500 })]);
    const metrics = await (await api("/metrics")).text();
    expect(metrics).toContain('service_turns_total{channel="responses",status="completed"} 1');
    expect(metrics).toContain('service_llm_tokens_total{model="scripted-model",type="input"} 1000');
    // the batch goes out at the latest when the service stops
    served.proc.kill("SIGTERM");
    expect(await served.proc.exited).toBe(0);
    const turn = await receiver.until((s) => s.name === "invoke_agent service" && s.attributes["gen_ai.response.id"] === created.id);
    expect(receiver.spans.some((s) => s.parentSpanId === turn.spanId && s.name === "chat scripted-model" && s.attributes["gen_ai.usage.input_tokens"] === 1000)).toBe(true);
    const p = spawn([BIN, "usage", "--by", "channel", "--json"], { cwd: dir, env: env(), stdout: "pipe", stderr: "pipe" });
    const [code, out] = [await p.exited, await new Response(p.stdout).text()];
    expect(code).toBe(0);
    expect(JSON.parse(out).rows).toEqual([expect.objectContaining({ key: "responses", turns: 1, cost_usd: expect.closeTo(0.002, 12) })]);
  });
});
