// Starting the service with MCP servers in config.json, and waiting on their state.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Env } from "../../src/config/load";
import { startTestService, type TestService } from "../support/harness";
import type { ScriptedLLM } from "../support/scripted-llm";
import { until } from "../support/until";

const root = resolve(import.meta.dir, "../..");
/** The official reference server, run over stdio with the same Bun that runs the tests. */
export const everything = { command: process.execPath, args: [join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"] };
/** The stock filesystem server, allowed into `dir` only. */
export const filesystem = (dir: string) => ({ command: process.execPath, args: [join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), dir] });
/** The stock knowledge-graph memory server, keeping its graph in `file`. */
export const memoryServer = (file: string) => ({
  command: process.execPath,
  args: [join(root, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
  env: { MEMORY_FILE_PATH: file },
});
export const flaky = { command: process.execPath, args: [join(import.meta.dir, "fixtures/flaky-server.ts")] };

export const MODEL = "test-model";

/** A temp dir removed by the returned `cleanup`. */
export function tempDir(prefix = "mcp-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts the service with `mcpServers` written to $SERVICE_HOME/config.json. */
export async function startWithMcp(
  mcpServers: Record<string, unknown>,
  opts: { env?: Env; config?: Record<string, unknown>; llm?: ScriptedLLM } = {},
): Promise<TestService> {
  const { dir, cleanup } = tempDir("service-mcp-");
  const home = join(dir, "home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify({ ...opts.config, mcpServers }));
  const t = await startTestService({ keepHome: home, env: opts.env, llm: opts.llm });
  const stop = t.stop;
  t.stop = async () => {
    await stop();
    await opts.llm?.close();
    cleanup();
  };
  return t;
}

export async function mcpStatus(t: TestService): Promise<any[]> {
  const res = await t.api("/api/status");
  return ((await res.json()) as any).mcp.servers;
}

/** Polls /api/status until the server is in one of `states` (bounded; throws with the last status). */
export async function waitForServer(t: TestService, name: string, states: string | string[], timeoutMs = 15_000): Promise<any> {
  const wanted = [states].flat();
  let last: any;
  return until(
    () => `MCP server ${name} to reach ${wanted.join("|")}: ${JSON.stringify(last)}`,
    async () => {
      last = (await mcpStatus(t)).find((s) => s.name === name);
      return last && wanted.includes(last.state) && last;
    },
    { timeoutMs },
  );
}

/** The tool messages the model was sent in its last request. */
export function toolMessages(t: TestService): any[] {
  return t.llm.lastChat().messages.filter((m: any) => m.role === "tool");
}

/** The text the model is given for this tool output, through the service's own safety layer. */
export function asModelSees(t: TestService, tool: string, output: string): string {
  const safety = t.service.services.agent.deps.safety;
  return safety.toolOutput(tool, safety.redact(output));
}
