// memory_write, memory_read, memory_search and memory_tree through the agent loop: the
// scripted model calls the tools, and the test checks what came back to the model.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const toolMessages = (body: any) => (body.messages as any[]).filter((m) => m.role === "tool");

/** Has the model call one tool; returns the tool result text it was given. */
async function call(name: string, args: unknown, token?: string): Promise<string> {
  t.llm.enqueue({ toolCalls: [{ name, arguments: args }] }, { text: "done" });
  const r = await t.respond({ model: "m", input: `please run ${name}` }, token);
  expect(r.status).toBe(200);
  expect(r.body.status).toBe("completed");
  const results = toolMessages(t.llm.lastChat());
  expect(results).toHaveLength(1);
  return results[0].content as string;
}

describe("memory tools", () => {
  test("are registered built-ins, offered to the model with their schemas", async () => {
    await t.respond({ model: "m", input: "hello" });
    const offered = (t.llm.lastChat().tools as any[]).map((x) => x.function);
    for (const name of ["memory_search", "memory_read", "memory_write", "memory_tree"]) {
      const spec = offered.find((f) => f.name === name);
      expect(spec).toBeDefined();
      expect(spec.parameters.type).toBe("object");
    }
    expect(offered.find((f) => f.name === "memory_write").parameters.required).toEqual(["path", "content"]);
  });

  test("memory_write then memory_read in one turn: each result reaches the model", async () => {
    t.llm.enqueue(
      { toolCalls: [{ name: "memory_write", arguments: { path: "notes/plan.md", content: "Plant garlic in October." } }] },
      { toolCalls: [{ name: "memory_read", arguments: { path: "notes/plan.md" } }] },
      { text: "Noted: garlic in October." },
    );
    const r = await t.respond({ model: "m", input: "Remember to plant garlic in October." });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(r.body.output.at(-1).content[0].text).toBe("Noted: garlic in October.");
    const chats = t.llm.chatRequests().slice(-3).map((c) => c.body);
    const [afterWrite, afterRead] = [toolMessages(chats[1]), toolMessages(chats[2])];
    expect(afterWrite).toHaveLength(1);
    expect(afterWrite[0].content).toContain("Saved notes/plan.md (24 bytes).");
    expect(afterRead).toHaveLength(2);
    expect(afterRead[1].content).toContain("Plant garlic in October.");
    // and it is a memory document like any other
    const read = (await (await t.api("/api/memory/read?path=notes/plan.md")).json()) as any;
    expect(read.content).toBe("Plant garlic in October.");
  });

  test("memory_search finds what was written, best first, with snippets", async () => {
    await call("memory_write", { path: "notes/cellar.md", content: "The wine cellar keeps 12 °C. Riesling on the left rack." });
    await call("memory_write", { path: "notes/shed.md", content: "The garden shed holds the lawn mower." });
    const out = await call("memory_search", { query: "riesling rack" });
    expect(out).toMatch(/1\. notes\/cellar\.md \(score [\d.]+\)\n {3}.*\*\*Riesling\*\*/);
    expect(out).not.toContain("notes/shed.md");
    expect(await call("memory_search", { query: "submarine" })).toContain('No memory documents match "submarine".');
    const limited = await call("memory_search", { query: "the garden cellar", limit: 1 });
    expect(limited.match(/^\d+\. /gm)).toHaveLength(1);
  });

  test("memory_tree lists the documents with sizes, sorted", async () => {
    const out = await call("memory_tree", {});
    const paths = out.split("\n").map((l) => /^(?:<[^>]+>)?(\S+)\s+\(\d+ bytes, updated \S+\)$/.exec(l)?.[1]).filter(Boolean);
    expect(paths).toContain("notes/plan.md");
    expect(paths).toContain("SOUL.md");
    expect(paths).toEqual([...paths].sort());
  });

  test("bad paths and missing documents are readable errors for the model, and change nothing", async () => {
    const before = await (await t.api("/api/memory/tree")).json();
    for (const path of ["../etc/passwd", "/abs.md", "a//b.md", "a/./b", ""]) {
      const out = await call("memory_write", { path, content: "x" });
      expect(out).toContain("Error: memory_write failed: Invalid memory path: the path");
    }
    expect(await call("memory_read", { path: "notes/../../x" })).toContain('may not contain a ".." segment');
    expect(await call("memory_read", { path: "notes/missing.md" })).toContain("there is no memory document at notes/missing.md");
    expect(await call("memory_write", { path: "big.md", content: "x".repeat(1024 * 1024 + 1) })).toContain("larger than 1 MiB");
    expect(await call("memory_search", { query: "x", limit: 0 })).toContain("Error: invalid arguments for memory_search");
    expect(await call("memory_write", { path: "no-content.md" })).toContain("Error: invalid arguments for memory_write");
    expect(await (await t.api("/api/memory/tree")).json()).toEqual(before);
  });

  test("tools act for the user of the turn, never another", async () => {
    const member = await t.createUser("member");
    await call("memory_write", { path: "notes/member.md", content: "Member's kumquat note." }, member.token);
    expect(await call("memory_search", { query: "kumquat" })).toContain("No memory documents match");
    expect(await call("memory_read", { path: "notes/member.md" })).toContain("there is no memory document");
    expect(await call("memory_search", { query: "kumquat" }, member.token)).toContain("notes/member.md");
    expect(await call("memory_read", { path: "notes/plan.md" }, member.token)).toContain("there is no memory document");
  });
});
