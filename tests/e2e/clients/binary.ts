// Starts the compiled binary for the client tests, as a user runs it: from an empty directory
// with no node_modules, pointed at the scripted LLM, with a known instance token.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, listeningUrl, serveUntil } from "../../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../../support/scripted-llm";

export interface RunningBinary {
  url: string;
  token: string;
  llm: ScriptedLLM;
  dir: string;
  stop(): Promise<void>;
}

export async function startBinary(env: Record<string, string> = {}): Promise<RunningBinary> {
  ensureBinary();
  const llm = await startScriptedLLM();
  const dir = mkdtempSync(join(tmpdir(), "service-clients-"));
  const token = "client-tests-token-" + crypto.randomUUID().replaceAll("-", "");
  const { proc, ready: url } = await serveUntil(
    ["serve"],
    {
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
    },
    listeningUrl,
  );
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
