// `service doctor`'s checks of the tools, in process: each MCP server started, its tools
// listed and stopped; a server that does not come up fails with its stderr; tool patterns
// that match nothing fail.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { toolChecks } from "../../src/cli/doctor-tools";
import { servicePaths } from "../../src/config/load";
import { DEFAULTS, type Config } from "../../src/config/schema";
import { everything, tempDir } from "../mcp/support";

const tmp = tempDir("doctor-tools-");
afterAll(tmp.cleanup);
const paths = servicePaths({ SERVICE_HOME: join(tmp.dir, "home") });
mkdirSync(paths.home, { recursive: true });

const broken = { command: process.execPath, args: ["-e", "console.error('boom: no API key'); process.exit(2)"] };
const config = (mcpServers: Config["mcpServers"], approval: Config["tools"]["approval"] = {}, ask: string[] = []): Config => ({
  ...DEFAULTS,
  tools: { ...DEFAULTS.tools, approval, ask },
  mcpServers,
});

describe("doctor's tool checks", () => {
  test("no MCP server and no pattern: nothing to say", async () => {
    expect(await toolChecks(config({}), paths)).toEqual([]);
  });

  test("a server that comes up, one that does not, one disabled; patterns judged against the tools there are", async () => {
    const checks = await toolChecks(
      config(
        { ev: { ...everything, excludeTools: ["get-env", "nope"] }, bad: broken, off: { command: "nonexistent", disabled: true } },
        { "mcp__ev__get-*": "auto", "file_*": "ask", "nothing_*": "deny", "mcp__bad__*": "ask", "mcp__off__x": "deny" },
        ["mcp__ev__ech*", "web_nope"],
      ),
      paths,
    );
    expect(checks.map((c) => [c.verdict, c.what])).toEqual([
      ["ok", "mcp ev"],
      ["fail", "mcp bad"],
      ["skip", "mcp off"],
      ["fail", "tool rules"],
    ]);
    expect(checks[0]!.detail).toBe(`${process.execPath}: up, 13 tools, 12 offered (tools, excludeTools)`);
    expect(checks[1]!.detail).toStartWith(`${process.execPath}: could not start: `);
    expect(checks[1]!.detail).toContain("boom: no API key");
    expect(checks[2]!.detail).toBe("disabled");
    // the patterns of the servers that are down or disabled are not judged
    expect(checks[3]!.detail.split("; ")).toEqual([
      'mcpServers.ev.excludeTools: "nope" matches none of the server\'s 13 tools (echo, get-annotated-message, get-env, get-resource-links, get-resource-reference, get-structured-content, …)',
      'tool approval rule "nothing_*" matches no tool, so it has no effect (MCP tools are named mcp__<server>__<tool>)',
      'tool approval rule "web_nope" matches no tool, so it has no effect (MCP tools are named mcp__<server>__<tool>)',
    ]);
  });

  test("every pattern matching a tool is one ok line", async () => {
    const checks = await toolChecks(config({ ev: { ...everything, tools: ["echo", "get-sum"] } }, { "mcp__ev__*": "auto", tool_search: "auto", "memory_*": "ask" }), paths);
    expect(checks).toEqual([
      { verdict: "ok", what: "mcp ev", detail: `${process.execPath}: up, 13 tools, 2 offered (tools, excludeTools)` },
      { verdict: "ok", what: "tool rules", detail: "5 patterns, each matches a tool" },
    ]);
  });
});
