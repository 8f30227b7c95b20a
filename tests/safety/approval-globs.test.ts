// Globs in tools.approval: the most specific pattern wins, a denied tool is not offered to the
// model and does not run when it is called anyway, a user's "always allow" never lifts an
// operator's deny, and a pattern that matches no tool is a warning at start.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OWNER_ID } from "../../src/store/users";
import type { TestService } from "../support/harness";
import { MODEL, startWithMcp } from "../mcp/support";

const offered = (t: TestService): string[] => t.llm.lastChat().tools.map((x: any) => x.function.name);
const toolMessages = (t: TestService): string[] => t.llm.lastChat().messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
const warnings = (t: TestService): string[] => t.logLines.map((l) => JSON.parse(l)).filter((r) => r.level === "warn").map((r) => r.msg);

describe("tools.approval with globs", () => {
  let t: TestService;
  const userFile = (name: string) => join(t.home, "files", OWNER_ID, name);

  beforeAll(async () => {
    t = await startWithMcp(
      {},
      {
        config: { tools: { approval: { "file_*": "deny", file_read: "auto", "web_*": "ask", "nothing_*": "ask", "*_tree": "deny" } } },
        // TOOLS_ASK adds ask; it does not lift the deny of file_write
        env: { TOOLS_ASK: "file_write" },
      },
    );
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  test("denied tools are not offered; the others are", async () => {
    await t.respond({ model: MODEL, input: "hello" });
    const names = offered(t);
    for (const denied of ["file_write", "file_delete", "file_list", "memory_tree"]) expect(names).not.toContain(denied);
    for (const allowed of ["file_read", "web_fetch", "memory_search", "memory_write"]) expect(names).toContain(allowed);
    // few tools: no tool_search
    expect(names).not.toContain("tool_search");
  });

  test("a forged call of a denied tool is refused and does nothing", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "file_write", arguments: { path: "forged.txt", content: "x" } }] }, { text: "ok" });
    const r = await t.respond({ model: MODEL, input: "write it" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)).toEqual([expect.stringContaining("Error: file_write is disabled by the operator's policy.")]);
    expect(existsSync(userFile("forged.txt"))).toBe(false);
  });

  test("a user's \"always allow\" does not lift the operator's deny", async () => {
    await t.service.services.agent.deps.allowAlways(OWNER_ID, "file_write");
    t.llm.enqueue({ toolCalls: [{ name: "file_write", arguments: { path: "forged.txt", content: "x" } }] }, { text: "ok" });
    await t.respond({ model: MODEL, input: "write it" });
    expect(offered(t)).not.toContain("file_write");
    expect(toolMessages(t)).toEqual([expect.stringContaining("disabled by the operator's policy")]);
    expect(existsSync(userFile("forged.txt"))).toBe(false);
  });

  test("the exact name wins over the glob: file_read runs", async () => {
    mkdirSync(join(t.home, "files", OWNER_ID), { recursive: true });
    writeFileSync(userFile("note.txt"), "the note");
    t.llm.enqueue({ toolCalls: [{ name: "file_read", arguments: { path: "note.txt" } }] }, { text: "ok" });
    const r = await t.respond({ model: MODEL, input: "read it" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t)).toEqual([expect.stringContaining("the note")]);
  });

  test("a glob's ask gates the tool", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "web_fetch", arguments: { url: "https://example.com" } }] }, { text: "never" });
    const r = await t.respond({ model: MODEL, input: "fetch" });
    expect(r.body.error.code).toBe("approval_required");
    expect(t.llm.chatRequests()).toHaveLength(1);
  });

  test("a pattern that matches no tool is a warning at start; the others are not", () => {
    expect(warnings(t).filter((w) => w.startsWith("tool approval rule"))).toEqual([
      'tool approval rule "nothing_*" matches no tool, so it has no effect (MCP tools are named mcp__<server>__<tool>)',
    ]);
  });
});
