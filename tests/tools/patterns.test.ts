// Tool name patterns: `*` globs, the most specific rule winning, and patterns that match nothing.
import { describe, expect, test } from "bun:test";
import { operatorPolicy } from "../../src/agent/policy";
import { couldMatchPrefix, matchesPattern, unmatchedPatterns } from "../../src/tools/patterns";

describe("matchesPattern", () => {
  test("* matches any run of characters, none included; everything else is literal", () => {
    expect(matchesPattern("mcp__fs__*", "mcp__fs__read_file")).toBe(true);
    expect(matchesPattern("mcp__fs__*", "mcp__fs__")).toBe(true);
    expect(matchesPattern("mcp__fs__*", "mcp__fsx__read")).toBe(false);
    expect(matchesPattern("*", "anything")).toBe(true);
    expect(matchesPattern("*_delete", "file_delete")).toBe(true);
    expect(matchesPattern("mcp__*__write*", "mcp__fs__write_file")).toBe(true);
    expect(matchesPattern("mcp__*__write*", "mcp__fs__read_file")).toBe(false);
    // regex characters are themselves
    expect(matchesPattern("a.b*", "a.bc")).toBe(true);
    expect(matchesPattern("a.b*", "axbc")).toBe(false);
    expect(matchesPattern("get-(sum)*", "get-(sum)")).toBe(true);
    // a name without * is exact
    expect(matchesPattern("file_read", "file_read")).toBe(true);
    expect(matchesPattern("file_read", "file_read2")).toBe(false);
  });

  test("unmatchedPatterns names the patterns no name matches, in order", () => {
    expect(unmatchedPatterns(["file_*", "mcp__x__*", "web_fetch", "nothing"], ["file_read", "web_fetch"])).toEqual(["mcp__x__*", "nothing"]);
  });

  test("couldMatchPrefix: whether a pattern may name a tool of an MCP server", () => {
    expect(couldMatchPrefix("*", "mcp__fs__")).toBe(true);
    expect(couldMatchPrefix("mcp__*", "mcp__fs__")).toBe(true);
    expect(couldMatchPrefix("mcp__fs__*", "mcp__fs__")).toBe(true);
    expect(couldMatchPrefix("mcp__fs__read_file", "mcp__fs__")).toBe(true);
    expect(couldMatchPrefix("mcp__fs__*", "mcp__memory__")).toBe(false);
    expect(couldMatchPrefix("file_*", "mcp__fs__")).toBe(false);
    expect(couldMatchPrefix("mcp__f*", "mcp__fs__")).toBe(true);
  });
});

describe("tools.approval: the most specific pattern wins", () => {
  const policy = operatorPolicy({
    approval: {
      "*": "ask",
      "mcp__fs__*": "deny",
      "mcp__fs__read_*": "auto",
      mcp__fs__read_secret: "deny",
      "file_*": "auto",
      // two globs as long: the stricter one wins, whatever the order
      "x_*_a": "auto",
      "x_b_*": "deny",
    },
    ask: [],
  });

  test("exact name, then the longest glob", () => {
    expect(policy("mcp__fs__write_file")).toBe("deny");
    expect(policy("mcp__fs__read_file")).toBe("auto");
    expect(policy("mcp__fs__read_secret")).toBe("deny");
    expect(policy("file_delete")).toBe("auto");
    expect(policy("web_fetch")).toBe("ask");
    expect(policy("x_b_a")).toBe("deny");
  });

  test("no rule, no policy", () => {
    expect(operatorPolicy({ approval: { "file_*": "ask" }, ask: [] })("web_fetch")).toBeUndefined();
    expect(operatorPolicy({ approval: {}, ask: [] })("web_fetch")).toBeUndefined();
  });

  test("a tool named like an Object method is not found on the prototype", () => {
    expect(operatorPolicy({ approval: {}, ask: [] })("constructor")).toBeUndefined();
  });

  test("tools.ask (TOOLS_ASK) makes a tool ask, whatever approval says, but never lifts a deny", () => {
    const p = operatorPolicy({ approval: { "file_*": "deny", file_read: "auto", "*": "auto" }, ask: ["file_write", "file_read", "mcp__*", "web_fetch"] });
    expect(p("file_write")).toBe("deny");
    expect(p("file_read")).toBe("ask");
    expect(p("mcp__fs__write_file")).toBe("ask");
    expect(p("web_fetch")).toBe("ask");
    expect(p("memory_read")).toBe("auto");
    expect(operatorPolicy({ approval: {}, ask: ["web_*"] })("web_fetch")).toBe("ask");
  });
});
