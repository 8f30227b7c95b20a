// Tool lists that fit, through the compiled binary as an operator sets them up: config.json
// with the three stock MCP servers, a trimmed tool list and approval globs (one of them a
// typo), `service doctor`, then a 4,096-token model that finds its tool with tool_search.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "bun";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { BIN, ensureBinary, serveUntil } from "../support/binary";
import { charTokens, startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { everything, filesystem, memoryServer } from "../mcp/support";

const WINDOW = 4096;
const TOKEN = "tools-binary-test-token-0123456789abcdef";
let llm: ScriptedLLM;
let dir: string;
let home: string;
let graph: string;

const envOf = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: dir,
  SERVICE_HOME: home,
  SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
  GATEWAY_PORT: "0",
  CLI_ENABLED: "false",
  LLM_BASE_URL: llm.url,
  LLM_API_KEY: "k",
  LLM_MODEL: "scripted-model",
  LLM_CONTEXT_WINDOW: String(WINDOW),
  ...extra,
});

async function run(args: string[]) {
  const p = spawn([BIN, ...args], { cwd: dir, env: envOf(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, stdout, stderr };
}

function writeConfig(opts: { typo: boolean; broken: boolean }) {
  const config = {
    mcpServers: {
      everything,
      memory: { ...memoryServer(graph), tools: ["create_*", "read_graph", "search_nodes"] },
      filesystem: { ...filesystem(join(dir, "files")), excludeTools: ["move_file"] },
      ...(opts.broken ? { broken: { command: process.execPath, args: ["-e", "console.error('boom: no token'); process.exit(1)"] } } : {}),
    },
    tools: {
      approval: { "mcp__memory__*": "auto", "mcp__everything__*": "deny", ...(opts.typo ? { "mcp__everythin__*": "deny" } : {}) },
    },
  };
  writeFileSync(join(home, "config.json"), JSON.stringify(config, null, 2));
}

/** `verdict what` of each line of doctor's output. */
const verdicts = (out: string) => out.trim().split("\n").filter((l) => /^(ok|warn|fail|skip)\s/.test(l)).map((l) => l.split(/\s{2,}/).slice(0, 2).join(" "));

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM({ contextWindow: WINDOW, countTokens: charTokens });
  dir = mkdtempSync(join(tmpdir(), "service-tools-e2e-"));
  home = join(dir, "home");
  graph = join(dir, "graph.jsonl");
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(join(dir, "files"));
});

afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("tool lists that fit, on the binary", () => {
  test("doctor starts each MCP server, fails on the one that does not come up and on a pattern that matches nothing", async () => {
    writeConfig({ typo: true, broken: true });
    const r = await run(["doctor"]);
    expect(r.code).toBe(1);
    const lines = verdicts(r.stdout);
    for (const line of ["ok mcp everything", "ok mcp memory", "ok mcp filesystem", "fail mcp broken", "fail tool rules"]) expect(lines).toContain(line);
    expect(r.stdout).toMatch(/^ok\s+mcp memory\s+.*: up, 9 tools, 4 offered \(tools, excludeTools\)$/m);
    expect(r.stdout).toMatch(/^fail\s+mcp broken\s+.*could not start: .*boom: no token/m);
    expect(r.stdout).toMatch(/^fail\s+tool rules\s+tool approval rule "mcp__everythin__\*" matches no tool/m);
  });

  test("fixed, doctor passes", async () => {
    writeConfig({ typo: false, broken: false });
    const r = await run(["doctor"]);
    expect(r.stdout).toMatch(/^ok\s+tool rules\s+6 patterns, each matches a tool$/m);
    expect(r.stdout).not.toMatch(/^fail/m);
    expect(r.code).toBe(0);
  });

  test("serve warns of the typo and the broken server; a 4,096-token model finds its tool and stores the entity", async () => {
    writeConfig({ typo: true, broken: true });
    const listening = (out: string) => out.split("\n").find((l) => l.includes('"msg":"listening"'));
    const s = await serveUntil(["serve"], { cwd: dir, env: envOf({ LOG_FORMAT: "json" }) }, listening);
    try {
      const url = JSON.parse(s.ready).url as string;
      const client = new OpenAI({ baseURL: `${url}/api/v1`, apiKey: TOKEN });
      llm.enqueue(
        { toolCalls: [{ name: "tool_search", arguments: { query: "echo" } }] },
        { toolCalls: [{ name: "tool_search", arguments: { query: "create entities in the knowledge graph" } }] },
        { toolCalls: [{ name: "mcp__memory__create_entities", arguments: { entities: [{ name: "Grace", entityType: "person", observations: ["writes compilers"] }] } }] },
        // a forged call of a denied tool: refused, the turn goes on
        { toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "leak" } }] },
        { text: "Saved Grace." },
      );
      const r = await client.responses.create({ model: "m", input: "Remember that Grace writes compilers." });
      expect(r.status).toBe("completed");
      expect(r.output_text).toBe("Saved Grace.");
      const requests = llm.chatRequests().map((x) => x.body);
      expect(requests).toHaveLength(5);
      for (const body of requests) expect(charTokens(body)).toBeLessThanOrEqual(WINDOW);
      const offered = requests.map((b) => b.tools.map((t: any) => t.function.name));
      expect(offered[0]).toEqual(["tool_search"]);
      // the denied server is never found nor offered
      const outputs = requests.at(-1).messages.filter((m: any) => m.role === "tool").map((m: any) => m.content as string);
      expect(outputs[0]).not.toContain("mcp__everything__");
      expect(outputs[1]).toContain("- mcp__memory__create_entities: ");
      expect(offered[2]).toContain("mcp__memory__create_entities");
      for (const names of offered) expect(names.filter((n: string) => n.startsWith("mcp__everything__"))).toEqual([]);
      expect(outputs[3]).toContain("Error: mcp__everything__echo is disabled by the operator's policy.");
      expect(readFileSync(graph, "utf8")).toContain('"name":"Grace"');

      const warns = () =>
        s
          .output()
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l))
          .filter((x) => x.level === "warn")
          .map((x) => x.msg as string);
      expect(warns()).toContainEqual(expect.stringContaining('tool approval rule "mcp__everythin__*" matches no tool'));
      expect(warns()).toContainEqual(expect.stringMatching(/^mcp broken: could not start: .*boom: no token/));
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  });
});
