// Starts the compiled binary for the client tests, as a user runs it: from an empty directory
// with no node_modules, pointed at the scripted LLM, with a known instance token.
import { spawn, type Subprocess } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startScriptedLLM, type ScriptedLLM } from "../../support/scripted-llm";

export const root = resolve(import.meta.dir, "../../..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");

export interface RunningBinary {
  url: string;
  token: string;
  llm: ScriptedLLM;
  dir: string;
  stop(): Promise<void>;
}

export async function startBinary(env: Record<string, string> = {}): Promise<RunningBinary> {
  if (!existsSync(BIN)) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build failed");
  }
  const llm = await startScriptedLLM();
  const dir = mkdtempSync(join(tmpdir(), "service-clients-"));
  const token = "client-tests-token-" + crypto.randomUUID().replaceAll("-", "");
  const proc = spawn([BIN, "serve"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      SERVICE_HOME: join(dir, "home"),
      SERVICE_REBORN_WEBUI_TOKEN: token,
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: "k",
      LLM_MODEL: "scripted-model",
      GATEWAY_PORT: "0",
      CLI_ENABLED: "false",
      RESPONSES_RATE_LIMIT: "0",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  }) as Subprocess<"ignore", "pipe", "pipe">;
  const reader = proc.stdout.getReader();
  let out = "";
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited early: ${out}\n${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
    url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
  }
  // keep draining stdout so the process never blocks on a full pipe
  void (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  return {
    url,
    token,
    llm,
    dir,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "City name" } },
  required: ["city"],
  additionalProperties: false,
} as const;
