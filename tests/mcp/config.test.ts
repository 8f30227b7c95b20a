// mcpServers in config.json: the formats other MCP clients use, and clear errors for mistakes.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, servicePaths } from "../../src/config/load";
import { ConfigError } from "../../src/errors";
import { tempDir } from "./support";

const tmp = tempDir("mcp-config-");
afterAll(tmp.cleanup);
let n = 0;

function load(mcpServers: unknown) {
  const home = join(tmp.dir, `h${++n}`);
  const paths = servicePaths({ SERVICE_HOME: home });
  mkdirSync(home, { recursive: true });
  writeFileSync(paths.config, JSON.stringify({ mcpServers }));
  return loadConfig(paths, {});
}

function problem(mcpServers: unknown): string {
  try {
    load(mcpServers);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("mcpServers", () => {
  test("defaults to none", () => {
    expect(loadConfig(servicePaths({ SERVICE_HOME: join(tmp.dir, "empty") }), {}).mcpServers).toEqual({});
  });

  test("stdio and Streamable HTTP entries in the usual format are accepted", () => {
    const servers = {
      fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], env: { DEBUG: "1" } },
      git: { type: "stdio", command: "uvx", args: ["mcp-server-git"], trusted: true, timeoutMs: 5000, cwd: "/srv" },
      remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } },
      typed: { type: "http", url: "http://127.0.0.1:9000/mcp", disabled: true },
      trimmed: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], tools: ["get-*", "echo"], excludeTools: ["get-env"] },
    };
    expect(load(servers).mcpServers).toEqual(servers as any);
  });

  test.each([
    [{ x: { args: [] } }, 'mcpServers.x needs "command" (a stdio server) or "url" (a Streamable HTTP server)'],
    [{ x: { command: "a", url: "http://h" } }, 'mcpServers.x has both "command" and "url"'],
    [{ x: { command: "" } }, "mcpServers.x.command must be a non-empty string"],
    [{ x: { command: "a", args: "b" } }, "mcpServers.x.args must be an array of strings"],
    [{ x: { command: "a", env: { A: 1 } } }, "mcpServers.x.env must be an object of string values"],
    [{ x: { url: "ftp://h" } }, "mcpServers.x.url must be an http:// or https:// URL"],
    [{ x: { url: "not a url" } }, "mcpServers.x.url must be an http:// or https:// URL"],
    [{ x: { url: "http://h", headers: ["a"] } }, "mcpServers.x.headers must be an object of string values"],
    [{ x: { type: "sse", url: "http://h/sse" } }, "the SSE transport is not supported"],
    [{ x: { type: "http", command: "a" } }, 'mcpServers.x.type must be "stdio"'],
    [{ x: { command: "a", trusted: "yes" } }, "mcpServers.x.trusted must be true or false"],
    [{ x: { command: "a", timeoutMs: 0 } }, "mcpServers.x.timeoutMs must be a positive integer"],
    [{ x: "npx foo" }, 'mcpServers.x must be an object with "command" (stdio) or "url" (Streamable HTTP)'],
    [{ x: { command: "a", tools: "read_*" } }, "mcpServers.x.tools must be an array of the server's tool names, where * matches any run of characters"],
    [{ x: { command: "a", excludeTools: ["ok", ""] } }, "mcpServers.x.excludeTools must be an array of the server's tool names"],
    [{ x: { url: "http://h", excludeTools: [3] } }, "mcpServers.x.excludeTools must be an array of the server's tool names"],
    [{ x: { command: "a", tools: [] } }, 'mcpServers.x.tools is empty, which would offer none of its tools: remove it to offer them all, or set "disabled": true'],
    [{ x: { command: "a", includeTools: ["a"] } }, 'mcpServers.x.includeTools: the allow list is called "tools" here'],
  ])("%j is rejected clearly", (servers, message) => {
    expect(problem(servers)).toContain(message);
  });
});
