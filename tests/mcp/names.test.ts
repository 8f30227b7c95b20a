// Agent tool names for MCP tools: mcp__<server>__<tool>, fitted to ^[A-Za-z0-9_-]{1,64}$ and unique.
import { describe, expect, test } from "bun:test";
import { MAX_NAME, mcpServerPrefix, mcpToolName } from "../../src/mcp/names";

const VALID = /^[A-Za-z0-9_-]{1,64}$/;

describe("mcpToolName", () => {
  test("a name that fits is kept as it is", () => {
    expect(mcpToolName("everything", "echo")).toBe("mcp__everything__echo");
    expect(mcpToolName("gh", "get-sum_2")).toBe("mcp__gh__get-sum_2");
  });

  test("characters outside [A-Za-z0-9_-] become underscores", () => {
    expect(mcpToolName("my server", "files.read/all")).toBe("mcp__my_server__files_read_all");
    expect(mcpToolName("ü", "")).toBe("mcp______");
    expect(mcpToolName("ü", "")).toMatch(VALID);
  });

  test("a long name is cut to 64 characters and ends in a hash of the original names", () => {
    const name = mcpToolName("a-server-with-a-rather-long-name", "and_a_tool_whose_name_goes_on_and_on_and_on");
    expect(name).toHaveLength(MAX_NAME);
    expect(name).toMatch(VALID);
    expect(name).toMatch(/^mcp__a-server-with-a-rather-long-name__and_a_tool.*_[0-9a-f]{6}$/);
    // the same input gives the same name; a different one a different name
    expect(mcpToolName("a-server-with-a-rather-long-name", "and_a_tool_whose_name_goes_on_and_on_and_on")).toBe(name);
    expect(mcpToolName("a-server-with-a-rather-long-name", "and_a_tool_whose_name_goes_on_and_on_and_ox")).not.toBe(name);
  });

  test("a name already taken gets a hash suffix, then a counter", () => {
    const taken = new Set(["mcp__s__a_b"]);
    const second = mcpToolName("s", "a.b", (n) => taken.has(n));
    expect(second).toMatch(/^mcp__s__a_b_[0-9a-f]{6}$/);
    taken.add(second);
    const third = mcpToolName("s", "a.b", (n) => taken.has(n));
    expect(third).toBe(`${second}2`);
    for (const n of [second, third]) expect(n).toMatch(VALID);
  });

  test("every generated name fits, whatever the input", () => {
    const samples = ["", "x", "名前", "a".repeat(200), "with space", "a/b\\c", "emoji 🎉", "-_-"];
    const seen = new Set<string>();
    for (const server of samples) {
      for (const tool of samples) {
        const name = mcpToolName(server, tool, (n) => seen.has(n));
        expect(name).toMatch(VALID);
        expect(seen.has(name)).toBe(false);
        seen.add(name);
        expect(name.startsWith(mcpServerPrefix(server))).toBe(true);
      }
    }
  });
});
