// The context window as an operator meets it, through the compiled binary, with Ollama
// giving the model num_ctx 4096 and nothing configured: `doctor` and `serve` say it and where
// it came from, `status` reads it from the running service, and a configured window larger
// than Ollama's is a doctor warning with what to set.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ensureBinary, listeningUrl, serveUntil } from "../support/binary";
import { ollamaRoutes } from "../support/llm-servers";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

const KEY = "llm-key-for-the-window-test-0123";
const TOKEN = "context-window-test-token-0123456789";
const WINDOW = "context window 4096 tokens (Ollama num_ctx of scripted-model)";

let llm: ScriptedLLM;
let dir: string;

const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: dir,
  SERVICE_HOME: join(dir, "home"),
  SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
  CLI_ENABLED: "false",
  GATEWAY_PORT: "0",
  LLM_BASE_URL: llm.url,
  LLM_API_KEY: KEY,
  LLM_MODEL: "scripted-model",
  ...extra,
});

async function run(args: string[], extra: Record<string, string> = {}) {
  const p = spawn([BIN, ...args], { cwd: dir, env: env(extra), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  return { code, stdout };
}

beforeAll(async () => {
  ensureBinary();
  // the scripted LLM checks the key on every request, Ollama's own API included
  llm = await startScriptedLLM({ apiKey: KEY, routes: ollamaRoutes({ model: "scripted-model", arch: "qwen3", trained: 40960, numCtx: 4096 }) });
  dir = mkdtempSync(join(tmpdir(), "service-window-"));
});

afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("behind Ollama, nothing configured", () => {
  test("doctor says the window and where it came from", async () => {
    const r = await run(["doctor"]);
    expect(r.stdout).toMatch(new RegExp(`^ok\\s+context\\s+${WINDOW.replace(/[()]/g, "\\$&")}$`, "m"));
    expect(llm.requests.some((q) => q.method === "POST" && q.path === "/api/show")).toBe(true);
  });

  test("a configured window larger than Ollama's num_ctx is a doctor warning saying what to set", async () => {
    const r = await run(["doctor"], { LLM_CONTEXT_WINDOW: "32768" });
    const line = r.stdout.split("\n").find((l) => /^\w+\s+context\s/.test(l)) ?? "";
    expect(line).toStartWith("warn");
    expect(line).toContain("context window 32768 tokens (config), but the server gives 4096 (Ollama num_ctx of scripted-model)");
    expect(line).toContain("LLM_CONTEXT_WINDOW=4096");
  });

  test("serve says it when it starts; status reads it from the running service", async () => {
    const s = await serveUntil(["serve"], { cwd: dir, env: env() }, listeningUrl);
    try {
      expect(s.output()).toContain(`  ${WINDOW}\n`);
      const r = await run(["status"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`\n  ${WINDOW}\n`);
      const json = JSON.parse((await run(["status", "--json"])).stdout);
      expect(json.status.llm.context_window).toEqual({ tokens: 4096, source: "server", from: "Ollama num_ctx of scripted-model" });
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  }, 30_000);
});
