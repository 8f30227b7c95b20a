// The official reference server (@modelcontextprotocol/server-everything) over stdio, through the agent loop.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { OWNER_ID } from "../../src/store/users";
import type { TestService } from "../support/harness";
import { MODEL, asModelSees, everything, mcpStatus, startWithMcp, toolMessages, waitForServer } from "./support";

const fn = (name: string) => ({ type: "function", name, description: "x", parameters: { type: "object", properties: {} } });

describe("an untrusted stdio server", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startWithMcp({ everything }, { config: { tools: { approval: { "mcp__everything__get-sum": "auto" } } } });
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  test("starts in the background and lists its tools with the mcp__everything__ prefix", async () => {
    const ready = await waitForServer(t, "everything", "ready");
    expect(ready).toEqual({ name: "everything", transport: "stdio", state: "ready", tools: expect.any(Number), error: null });
    expect(ready.tools).toBeGreaterThanOrEqual(5);
    expect(await mcpStatus(t)).toHaveLength(1);

    t.llm.enqueue({ text: "hi" });
    const r = await t.respond({ model: MODEL, input: "hello" });
    expect(r.body.status).toBe("completed");
    const sent = t.llm.lastChat().tools.map((x: any) => x.function);
    const names = sent.map((f: any) => f.name);
    expect(names).toContain("mcp__everything__echo");
    expect(names).toContain("mcp__everything__get-sum");
    expect(names.filter((n: string) => n.startsWith("mcp__everything__"))).toHaveLength(ready.tools);
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const echo = sent.find((f: any) => f.name === "mcp__everything__echo");
    expect(echo.description).toBe('<tool_description server="everything" trust="untrusted">\nEchoes back the input string\n</tool_description>');
    expect(echo.parameters).toEqual({
      type: "object",
      properties: { message: { type: "string", description: "Message to echo" } },
      required: ["message"],
    });
  });

  test("its tools need approval: the Responses turn fails with approval_required", async () => {
    await waitForServer(t, "everything", "ready");
    t.llm.enqueue({ toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "hi" } }] }, { text: "never" });
    const r = await t.respond({ model: MODEL, input: "echo hi" });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("approval_required");
    expect(r.body.error.message).toContain("mcp__everything__echo");
    expect(t.llm.chatRequests()).toHaveLength(1);
  });

  test("a user's \"always allow\" lets the tool run for that user", async () => {
    await waitForServer(t, "everything", "ready");
    await t.service.services.agent.deps.allowAlways(OWNER_ID, "mcp__everything__echo");
    t.llm.enqueue({ toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "again" } }] }, { text: "ok" });
    const r = await t.respond({ model: MODEL, input: "echo again" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t).map((m) => m.content)).toEqual([asModelSees(t, "mcp__everything__echo", "Echo: again")]);
  });

  test("an operator's tools.approval entry overrides the default", async () => {
    await waitForServer(t, "everything", "ready");
    t.llm.enqueue({ toolCalls: [{ name: "mcp__everything__get-sum", arguments: { a: 2, b: 40 } }] }, { text: "42" });
    const r = await t.respond({ model: MODEL, input: "add" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t).map((m) => m.content)).toEqual([asModelSees(t, "mcp__everything__get-sum", "The sum of 2 and 40 is 42.")]);
  });

  test("a caller tool named like an MCP tool, or under a server's prefix, is rejected with 400", async () => {
    for (const name of ["mcp__everything__echo", "mcp__everything__not_listed"]) {
      const r = await t.respond({ model: MODEL, input: "hi", tools: [fn(name)] });
      expect(r.status).toBe(400);
      expect(r.body.error.type).toBe("invalid_request_error");
      expect(r.body.error.message).toContain(name);
    }
    t.llm.enqueue({ text: "ok" });
    const ok = await t.respond({ model: MODEL, input: "hi", tools: [fn("mcp__other__echo")] });
    expect(ok.status).toBe(200);
  });
});

describe("a trusted stdio server", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startWithMcp({ everything: { ...everything, trusted: true } });
    await waitForServer(t, "everything", "ready");
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  async function call(name: string, args: unknown) {
    t.llm.enqueue({ toolCalls: [{ name, arguments: args }] }, { text: "done" });
    const r = await t.respond({ model: MODEL, input: `use ${name}` });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    const [message] = toolMessages(t);
    return message.content as string;
  }

  test("echo runs through the loop; its result reaches the model through the safety layer", async () => {
    expect(await call("mcp__everything__echo", { message: "hello over MCP" })).toBe(
      asModelSees(t, "mcp__everything__echo", "Echo: hello over MCP"),
    );
  });

  test("get-sum runs too", async () => {
    expect(await call("mcp__everything__get-sum", { a: 19, b: 23 })).toBe(asModelSees(t, "mcp__everything__get-sum", "The sum of 19 and 23 is 42."));
  });

  test("an image result is summarised, not pasted", async () => {
    const out = await call("mcp__everything__get-tiny-image", {});
    expect(out).toContain("[image: image/png, ");
    expect(out).not.toContain("iVBORw0KGgo");
  });

  test("arguments that do not fit the server's schema become a readable tool error", async () => {
    const out = await call("mcp__everything__get-sum", { a: "two" });
    expect(out).toContain("invalid arguments for mcp__everything__get-sum");
    expect(out).toContain("/a must be number");
    expect(out).toContain("required property 'b'");
  });
});
