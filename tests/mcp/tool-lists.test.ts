// Trimming what MCP servers offer: per-server `tools` / `excludeTools`, a denied glob in
// tools.approval, forged calls of tools that are not offered, warnings for patterns that
// match nothing and for a server that does not come up.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestService } from "../support/harness";
import { until } from "../support/until";
import { MODEL, everything, filesystem, mcpStatus, startWithMcp, tempDir, waitForServer } from "./support";

const offered = (t: TestService): string[] => t.llm.lastChat().tools.map((x: any) => x.function.name);
const toolMessages = (t: TestService): string[] => t.llm.lastChat().messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
const warnings = (t: TestService): string[] => t.logLines.map((l) => JSON.parse(l)).filter((r) => r.level === "warn").map((r) => r.msg);

describe("tools, excludeTools and a denied glob", () => {
  let t: TestService;
  const tmp = tempDir("tool-lists-");
  const files = join(tmp.dir, "files");

  beforeAll(async () => {
    mkdirSync(files);
    writeFileSync(join(files, "a.txt"), "alpha");
    t = await startWithMcp(
      {
        fs: { ...filesystem(files), trusted: true, excludeTools: ["move_file", "nope_*"] },
        // untrusted: its tools ask, unless a rule says otherwise
        ev: { ...everything, tools: ["echo", "get-*", "zzz"], excludeTools: ["get-env"] },
        broken: { command: process.execPath, args: ["-e", "console.error('boom: no config'); process.exit(3)"] },
      },
      {
        config: {
          tools: { approval: { "mcp__fs__write*": "deny", "mcp__fs__edit_*": "deny", "mcp__ev__get-sum": "auto", "mcp__ev__zz*": "ask", "mcp__broken__*": "ask" } },
        },
      },
    );
    await waitForServer(t, "fs", "ready");
    await waitForServer(t, "ev", "ready");
    await waitForServer(t, "broken", ["failed", "restarting"]);
  });
  afterAll(async () => {
    await t.stop();
    tmp.cleanup();
  });
  beforeEach(() => t.llm.reset());

  test("a server's tools outside `tools` or inside `excludeTools` are not registered; status counts what is", async () => {
    const names = t.service.services.tools.specs().map((s) => s.name);
    expect(names.filter((n) => n.startsWith("mcp__ev__")).sort()).toEqual([
      "mcp__ev__echo",
      "mcp__ev__get-annotated-message",
      "mcp__ev__get-resource-links",
      "mcp__ev__get-resource-reference",
      "mcp__ev__get-structured-content",
      "mcp__ev__get-sum",
      "mcp__ev__get-tiny-image",
    ]);
    expect(names).not.toContain("mcp__fs__move_file");
    expect(names).toContain("mcp__fs__read_text_file");
    const status = await mcpStatus(t);
    expect(status.find((s) => s.name === "ev").tools).toBe(7);
    expect(status.find((s) => s.name === "fs").tools).toBe(13);
  });

  test("what is left out, or denied, is not offered to the model", async () => {
    await t.respond({ model: MODEL, input: "hello" });
    const names = offered(t);
    for (const gone of ["mcp__fs__move_file", "mcp__fs__write_file", "mcp__fs__edit_file", "mcp__ev__get-env", "mcp__ev__toggle-simulated-logging"]) {
      expect(names).not.toContain(gone);
    }
    for (const there of ["mcp__fs__read_text_file", "mcp__fs__list_directory", "mcp__ev__echo", "mcp__ev__get-sum"]) expect(names).toContain(there);
  });

  test("a forged call of a denied tool is refused: the file is not written", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "mcp__fs__write_file", arguments: { path: join(files, "forged.txt"), content: "x" } }] }, { text: "ok" });
    const r = await t.respond({ model: MODEL, input: "write" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)).toEqual([expect.stringContaining("Error: mcp__fs__write_file is disabled by the operator's policy.")]);
    expect(existsSync(join(files, "forged.txt"))).toBe(false);
  });

  test("a forged call of an excluded tool finds no such tool, without asking first, and moves nothing", async () => {
    t.llm.enqueue(
      { toolCalls: [{ name: "mcp__fs__move_file", arguments: { source: join(files, "a.txt"), destination: join(files, "b.txt") } }] },
      // an untrusted server's tool left out by its `tools` list: no approval is asked for what cannot run
      { toolCalls: [{ name: "mcp__ev__get-env", arguments: {} }] },
      { text: "ok" },
    );
    const r = await t.respond({ model: MODEL, input: "move" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)).toEqual([
      expect.stringContaining("Error: there is no tool named mcp__fs__move_file."),
      expect.stringContaining("Error: there is no tool named mcp__ev__get-env."),
    ]);
    expect(existsSync(join(files, "a.txt"))).toBe(true);
    expect(existsSync(join(files, "b.txt"))).toBe(false);
  });

  test("the tools that are left work: an untrusted server's tool allowed by a rule runs", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "mcp__ev__get-sum", arguments: { a: 1, b: 2 } }] }, { text: "3" });
    const r = await t.respond({ model: MODEL, input: "sum" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)).toEqual([expect.stringContaining("The sum of 1 and 2 is 3.")]);
  });

  test("patterns that match none of a server's tools are warnings once it has listed them; MCP failures are warnings", async () => {
    await until("the approval warning", () => warnings(t).some((w) => w.includes("mcp__ev__zz*")));
    const mine = warnings(t);
    expect(mine).toContain('mcpServers.fs.excludeTools: "nope_*" matches none of the server\'s 14 tools (read_file, read_text_file, read_media_file, read_multiple_files, write_file, edit_file, …)');
    expect(mine.filter((w) => w.startsWith("mcpServers.ev."))).toEqual([expect.stringContaining('mcpServers.ev.tools: "zzz" matches none of the server\'s 13 tools')]);
    expect(mine).toContain('tool approval rule "mcp__ev__zz*" matches no tool, so it has no effect (MCP tools are named mcp__<server>__<tool>)');
    // a server that never came up leaves its patterns unjudged
    expect(mine.filter((w) => w.includes("mcp__broken__"))).toEqual([]);
    // and its failure, with its stderr, is a warning
    expect(mine).toContainEqual(expect.stringMatching(/^mcp broken: could not start: .*boom: no config.*; retrying in/));
    const info = t.logLines.map((l) => JSON.parse(l)).filter((r) => r.msg.startsWith("mcp fs: ready"));
    expect(info).toEqual([expect.objectContaining({ level: "info", msg: "mcp fs: ready with 14 tools" })]);
  });
});
