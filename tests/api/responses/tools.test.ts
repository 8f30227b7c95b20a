// Caller-supplied function tools end to end, plus built-in tools inside the agent loop.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { eq } from "drizzle-orm";
import { threadOfResponse } from "../../../src/conversation/ids";
import { getGate, getThread, loadItems } from "../../../src/store/conversations";
import { responses, threads } from "../../support/tables";
import { defineTool, type ToolContext } from "../../../src/tools/tool";
import { startTestService, type TestService } from "../../support/harness";

const MODEL = "test-model";
const CALL_ID = /^call_[0-9a-f]+$/;
const ITEM_ID = /^item_[0-9a-f]+$/;

function fn(name: string, description = `The ${name} tool`, properties: Record<string, unknown> = { q: { type: "string", description: "query" } }) {
  return { type: "function", name, description, parameters: { type: "object", properties, required: Object.keys(properties) } };
}
const weather = fn("get_weather", "Current weather for a city", { city: { type: "string", description: "City name" } });

/** Names of the tools the model was offered, less the built-in tools it is always offered. */
function callerToolsOffered(t: TestService): string[] {
  const offered: { function: { name: string } }[] = t.llm.lastChat().tools ?? [];
  return offered.map((x) => x.function.name).filter((name) => !t.service.services.tools.get(name));
}

/** JSON with sorted keys and no white space, written independently of the service's own. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

async function threadCount(t: TestService): Promise<number> {
  return (await t.service.services.db.select().from(threads)).length;
}

/** Everything stored about the thread of a response: items, gate, responses and the thread row. */
async function snapshot(t: TestService, responseId: string) {
  const db = t.service.services.db;
  const threadId = threadOfResponse(responseId)!;
  return {
    thread: await getThread(db, threadId),
    items: await loadItems(db, threadId),
    gate: await getGate(db, threadId),
    responses: (await db.select().from(responses).where(eq(responses.threadId, threadId))).map((r) => r.id).sort(),
  };
}

function expectInvalid(r: { status: number; body: any }, messagePart?: RegExp) {
  expect(r.status).toBe(400);
  expect(r.body.error.type).toBe("invalid_request_error");
  expect(typeof r.body.error.message).toBe("string");
  if (messagePart) expect(r.body.error.message).toMatch(messagePart);
}

const chatCount = (t: TestService) => t.llm.chatRequests().length;
const functionCalls = (body: any) => body.output.filter((o: any) => o.type === "function_call");
const outputOf = (call: any, output: string) => ({ type: "function_call_output", call_id: call.call_id, output });
const toolMessages = (req: any) => req.messages.filter((m: any) => m.role === "tool");
/** A built-in's result as the model sees it: wrapped as untrusted data by the safety layer. */
const untrusted = (tool: string, text: string) => `<tool_output tool="${tool}" trust="untrusted">\n${text}\n</tool_output>`;

/**
 * Checks the chat messages sent to the model are a sequence providers accept: each assistant
 * message with tool_calls is followed directly by one tool message per call, and nothing else.
 */
function expectAnsweredCalls(messages: any[]) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "tool") expect(messages[i - 1].role === "tool" || messages[i - 1].tool_calls).toBeTruthy();
    if (m.role !== "assistant" || !m.tool_calls) continue;
    const ids = m.tool_calls.map((c: any) => c.id);
    const answers = messages.slice(i + 1, i + 1 + ids.length);
    expect(answers.map((a: any) => a.role)).toEqual(ids.map(() => "tool"));
    expect(answers.map((a: any) => a.tool_call_id)).toEqual(ids);
  }
}

describe("caller tool validation", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    t.service.services.tools.register(
      defineTool({ name: "builtin_clock", description: "Tells the time", parameters: Type.Object({}), execute: async () => "12:00" }),
    );
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  /** Sends the request, expects a 400 and that no thread was created and the model never ran. */
  async function rejected(tools: unknown, messagePart?: RegExp) {
    const before = await threadCount(t);
    const r = await t.respond({ model: MODEL, input: "hello", tools });
    expectInvalid(r, messagePart);
    expect(await threadCount(t)).toBe(before);
    expect(chatCount(t)).toBe(0);
    return r;
  }

  test.each(["web_search", "file_search", "code_interpreter", "web_search_preview", "custom"])("tool type %s is rejected", async (type) => {
    const r = await rejected([weather, { type, name: "x" }], /function/);
    expect(r.body.error.message).toContain("tools[1]");
  });

  test("a tool without a type is rejected", async () => {
    await rejected([{ name: "no_type", parameters: { type: "object", properties: {} } }]);
  });

  test.each([
    ["empty", ""],
    ["65 characters", "a".repeat(65)],
    ["a space", "get weather"],
    ["a dot", "get.weather"],
    ["a slash", "a/b"],
    ["non-ASCII letters", "wetter_für_stadt"],
    ["a colon", "ns:tool"],
  ])("a name with %s is rejected", async (_, name) => {
    await rejected([fn(name)], /\^\[A-Za-z0-9_-\]\{1,64\}\$/);
  });

  test("a missing or non-string name is rejected", async () => {
    await rejected([{ type: "function", parameters: { type: "object", properties: {} } }]);
    await rejected([{ type: "function", name: 42, parameters: { type: "object", properties: {} } }]);
  });

  test("a name of exactly 64 characters from the whole alphabet is accepted", async () => {
    const name = ("Az09_-" + "x".repeat(64)).slice(0, 64);
    expect(name).toHaveLength(64);
    t.llm.enqueue({ text: "ok" });
    const r = await t.respond({ model: MODEL, input: "hello", tools: [fn(name)] });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(t.llm.lastChat().tools.map((x: any) => x.function.name)).toContain(name);
  });

  test("duplicate names are rejected", async () => {
    await rejected([fn("lookup"), fn("other"), fn("lookup", "again")], /lookup.*unique|twice/);
  });

  test("a name that shadows a registered built-in tool is rejected", async () => {
    await rejected([fn("builtin_clock")], /builtin_clock/);
  });

  test.each(["mission_start", "skill_run", "memory_write", "memory_"])("the reserved prefix of %s is rejected", async (name) => {
    await rejected([fn(name)], new RegExp(name));
  });

  test("names that merely contain a reserved word are accepted", async () => {
    t.llm.enqueue({ text: "ok" });
    const r = await t.respond({ model: MODEL, input: "hello", tools: [fn("my_memory_tool"), fn("Memory_x"), fn("skills")] });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
  });

  describe("16 KiB of canonical JSON", () => {
    /** A tools payload whose canonical JSON is exactly `bytes` long. */
    function toolsOfSize(bytes: number) {
      const tools = [fn("big", "")];
      const base = Buffer.byteLength(canonical(tools));
      tools[0]!.description = "d".repeat(bytes - base);
      expect(Buffer.byteLength(canonical(tools))).toBe(bytes);
      return tools;
    }

    test("one byte over the limit is rejected", async () => {
      await rejected(toolsOfSize(16 * 1024 + 1), /16 KiB/);
    });

    test("exactly 16 KiB is accepted, and white space outside the canonical form does not count", async () => {
      t.llm.enqueue({ text: "ok" });
      const tools = toolsOfSize(16 * 1024);
      // Pretty-printed, the body's tools text is well over 16 KiB; the canonical form is not.
      const pretty = JSON.stringify({ model: MODEL, input: "hello", tools }, null, 8);
      expect(Buffer.byteLength(JSON.stringify(tools, null, 8))).toBeGreaterThan(16 * 1024);
      const res = await t.api("/api/v1/responses", { method: "POST", body: pretty, headers: { "content-type": "application/json" } });
      const body = (await res.json()) as any;
      expect(res.status).toBe(200);
      expect(body.status).toBe("completed");
      const sent = t.llm.lastChat().tools.find((x: any) => x.function.name === "big");
      expect(sent.function.description).toBe(tools[0]!.description);
    });

    test("multi-byte characters count in bytes", async () => {
      // 6000 three-byte characters: 6000 characters, but 18000 bytes.
      await rejected([fn("wide", "€".repeat(6000))], /16 KiB/);
    });
  });

  test("malformed parameters are rejected", async () => {
    await rejected([{ type: "function", name: "p", parameters: { type: "array" } }]);
    await rejected([{ type: "function", name: "p", parameters: "object" }]);
    await rejected([{ type: "function", name: "p", parameters: { type: "object", required: "q" } }]);
  });

  test("`tools` that is not an array is rejected", async () => {
    await rejected({ type: "function", name: "x" });
  });

  test("an invalid tools array on a resume leaves the waiting thread unchanged", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] });
    const first = await t.respond({ model: MODEL, input: "weather?", tools: [weather] });
    const [call] = functionCalls(first.body);
    const before = await snapshot(t, first.body.id);
    expect(before.gate?.callId).toBe(call.call_id);
    const r = await t.respond({
      model: MODEL,
      previous_response_id: first.body.id,
      input: [outputOf(call, "sunny")],
      tools: [weather, fn("memory_peek")],
    });
    expectInvalid(r, /memory_peek/);
    expect(await snapshot(t, first.body.id)).toEqual(before);
    expect(chatCount(t)).toBe(1);
  });
});

describe("caller tool flow", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  /** Starts a thread whose model calls get_weather; returns the response and the call. */
  async function waitingThread(opts: { leadingText?: string } = {}) {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }], text: opts.leadingText });
    const r = await t.respond({ model: MODEL, input: "What is the weather in Paris?", tools: [weather] });
    expect(r.status).toBe(200);
    const [call] = functionCalls(r.body);
    expect(call).toBeDefined();
    return { response: r.body, call };
  }

  test("the tools reach the model as chat-completions function tools", async () => {
    t.llm.enqueue({ text: "Nothing to do." });
    const extra = fn("send_mail", "Sends an email", { to: { type: "string", description: "recipient" }, body: { type: "string", description: "text" } });
    const r = await t.respond({ model: MODEL, input: "hi", tools: [weather, extra] });
    expect(r.body.status).toBe("completed");
    const sent = t.llm.lastChat().tools;
    expect(sent).toContainEqual({
      type: "function",
      function: { name: "get_weather", description: weather.description, parameters: weather.parameters },
    });
    expect(sent).toContainEqual({ type: "function", function: { name: "send_mail", description: "Sends an email", parameters: extra.parameters } });
  });

  test("the nested chat-completions tool form is accepted too", async () => {
    t.llm.enqueue({ text: "ok" });
    const nested = { type: "function", function: { name: "nested_tool", description: "nested", parameters: { type: "object", properties: {} } } };
    const r = await t.respond({ model: MODEL, input: "hi", tools: [nested] });
    expect(r.body.status).toBe("completed");
    expect(t.llm.lastChat().tools).toContainEqual({
      type: "function",
      function: { name: "nested_tool", description: "nested", parameters: { type: "object", properties: {} } },
    });
  });

  test("a call of a caller tool completes the response with a function_call item", async () => {
    const { response, call } = await waitingThread();
    expect(response.status).toBe("completed");
    expect(response.error).toBeNull();
    expect(response.output).toHaveLength(1);
    expect(call).toEqual({
      type: "function_call",
      id: expect.stringMatching(ITEM_ID),
      call_id: expect.stringMatching(CALL_ID),
      name: "get_weather",
      arguments: expect.any(String),
      status: "completed",
    });
    expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" });
    // The call id is the service's own, not the provider's.
    expect(call.call_id).not.toBe("call_1_0");
    const snap = await snapshot(t, response.id);
    expect(snap.gate).toMatchObject({ kind: "external_tool", callId: call.call_id, responseId: response.id });
  });

  test("leading prose of the same step comes first as a message item", async () => {
    const { response, call } = await waitingThread({ leadingText: "Let me look that up." });
    expect(response.output.map((o: any) => o.type)).toEqual(["message", "function_call"]);
    expect(response.output[0]).toMatchObject({
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Let me look that up.", annotations: [], logprobs: [] }],
    });
    expect(response.output[1]).toEqual(call);
  });

  test("a resume hands the tool result to the model and returns its answer", async () => {
    const { response, call } = await waitingThread({ leadingText: "Checking." });
    t.llm.enqueue({ text: "It is 18 degrees and sunny in Paris." });
    const r = await t.respond({ model: MODEL, previous_response_id: response.id, input: [outputOf(call, '{"temp":18,"sky":"sunny"}')], tools: [weather] });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(r.body.id).not.toBe(response.id);
    expect(threadOfResponse(r.body.id)).toBe(threadOfResponse(response.id)!);
    expect(r.body.output).toHaveLength(1);
    expect(r.body.output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "It is 18 degrees and sunny in Paris." }] });

    expect(chatCount(t)).toBe(2);
    const messages = t.llm.lastChat().messages;
    const assistant = messages.find((m: any) => m.role === "assistant" && m.tool_calls);
    expect(assistant.content).toBe("Checking.");
    expect(assistant.tool_calls).toEqual([{ id: call.call_id, type: "function", function: { name: "get_weather", arguments: call.arguments } }]);
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: call.call_id, content: '{"temp":18,"sky":"sunny"}' });
    expect(messages.indexOf(assistant)).toBe(messages.length - 2);
    // The gate is gone: the thread goes on with plain messages.
    expect((await snapshot(t, r.body.id)).gate).toBeUndefined();
    t.llm.enqueue({ text: "You're welcome." });
    const next = await t.respond({ model: MODEL, previous_response_id: r.body.id, input: "thanks" });
    expect(next.body.status).toBe("completed");
    expect(next.body.output[0].content[0].text).toBe("You're welcome.");
  });

  test("an empty string is a valid output", async () => {
    const { response, call } = await waitingThread();
    t.llm.enqueue({ text: "No data." });
    const r = await t.respond({ model: MODEL, previous_response_id: response.id, input: [outputOf(call, "")] });
    expect(r.body.status).toBe("completed");
    expect(t.llm.lastChat().messages.at(-1)).toEqual({ role: "tool", tool_call_id: call.call_id, content: "" });
  });

  describe("invalid resumes are rejected and change nothing", () => {
    let response: any;
    let call: any;
    let before: Awaited<ReturnType<typeof snapshot>>;
    beforeAll(async () => {
      t.llm.reset();
      ({ response, call } = await waitingThread());
      before = await snapshot(t, response.id);
      expect(before.gate?.callId).toBe(call.call_id);
    });

    async function rejectedResume(body: Record<string, unknown>, messagePart?: RegExp) {
      t.llm.reset();
      const r = await t.respond({ model: MODEL, tools: [weather], ...body });
      expectInvalid(r, messagePart);
      expect(await snapshot(t, response.id)).toEqual(before);
      expect(chatCount(t)).toBe(0);
    }

    test("a wrong call_id", async () => {
      await rejectedResume({ previous_response_id: response.id, input: [{ type: "function_call_output", call_id: "call_0123abcd", output: "x" }] }, /call_0123abcd/);
    });

    test("an empty call_id", async () => {
      await rejectedResume({ previous_response_id: response.id, input: [{ type: "function_call_output", call_id: "", output: "x" }] }, /call_id/);
    });

    test("a missing call_id", async () => {
      await rejectedResume({ previous_response_id: response.id, input: [{ type: "function_call_output", output: "x" }] }, /call_id/);
    });

    test("a missing output", async () => {
      await rejectedResume({ previous_response_id: response.id, input: [{ type: "function_call_output", call_id: call.call_id }] }, /output/);
    });

    test("an output that is not a string", async () => {
      await rejectedResume({ previous_response_id: response.id, input: [{ type: "function_call_output", call_id: call.call_id, output: 18 }] }, /output/);
    });

    test("a function_call_output without previous_response_id (revision B)", async () => {
      await rejectedResume({ input: [outputOf(call, "sunny")] }, /previous_response_id/);
    });

    test("two outputs for the one pending call", async () => {
      await rejectedResume({ previous_response_id: response.id, input: [outputOf(call, "a"), outputOf(call, "b")] });
    });

    test("a plain message while the thread waits on the gate", async () => {
      await rejectedResume({ previous_response_id: response.id, input: "never mind, what time is it?" }, new RegExp(call.call_id));
      await rejectedResume({ previous_response_id: response.id, input: [{ type: "message", role: "user", content: "hello?" }] }, new RegExp(call.call_id));
    });

    test("a message mixed into the resume (revision B)", async () => {
      await rejectedResume(
        { previous_response_id: response.id, input: [outputOf(call, "sunny"), { type: "message", role: "user", content: "and tomorrow?" }] },
        /only function_call_output/,
      );
    });

    test("after all of them, the correct resume still works", async () => {
      t.llm.reset();
      t.llm.enqueue({ text: "Sunny." });
      const r = await t.respond({ model: MODEL, previous_response_id: response.id, input: [outputOf(call, "sunny")] });
      expect(r.status).toBe(200);
      expect(r.body.status).toBe("completed");
      expect(r.body.output[0].content[0].text).toBe("Sunny.");
      // Resuming the same gate twice: it is gone now.
      const again = await t.respond({ model: MODEL, previous_response_id: response.id, input: [outputOf(call, "sunny")] });
      expectInvalid(again, /No tool call is waiting/);
    });
  });

  test("a function_call_output on a thread with no pending gate is rejected and changes nothing", async () => {
    t.llm.enqueue({ text: "Hello!" });
    const done = await t.respond({ model: MODEL, input: "hi", tools: [weather] });
    expect(done.body.status).toBe("completed");
    const before = await snapshot(t, done.body.id);
    expect(before.gate).toBeUndefined();
    const r = await t.respond({
      model: MODEL,
      previous_response_id: done.body.id,
      input: [{ type: "function_call_output", call_id: "call_deadbeef", output: "x" }],
    });
    expectInvalid(r, /No tool call is waiting/);
    expect(await snapshot(t, done.body.id)).toEqual(before);
    expect(chatCount(t)).toBe(1);
  });

  test("multi-call: only the first call is returned; the second comes after the resume without a model call", async () => {
    const toolA = fn("tool_a", "A", { x: { type: "number", description: "x" } });
    const toolB = fn("tool_b", "B", { y: { type: "number", description: "y" } });
    t.llm.enqueue({ text: "Both, please.", toolCalls: [{ name: "tool_a", arguments: { x: 1 } }, { name: "tool_b", arguments: { y: 2 } }] });
    const first = await t.respond({ model: MODEL, input: "use both", tools: [toolA, toolB] });
    expect(first.body.status).toBe("completed");
    expect(first.body.output.map((o: any) => o.type)).toEqual(["message", "function_call"]);
    const [a] = functionCalls(first.body);
    expect(a.name).toBe("tool_a");
    expect(JSON.parse(a.arguments)).toEqual({ x: 1 });
    expect(chatCount(t)).toBe(1);

    const second = await t.respond({ model: MODEL, previous_response_id: first.body.id, input: [outputOf(a, "A=1")], tools: [toolA, toolB] });
    expect(second.status).toBe(200);
    expect(second.body.status).toBe("completed");
    expect(second.body.output).toHaveLength(1);
    const [b] = functionCalls(second.body);
    expect(b.name).toBe("tool_b");
    expect(JSON.parse(b.arguments)).toEqual({ y: 2 });
    expect(b.call_id).toMatch(CALL_ID);
    expect(b.call_id).not.toBe(a.call_id);
    expect(chatCount(t)).toBe(1); // no new model call

    // Answering tool_a again is wrong now: the gate waits for tool_b.
    const stale = await t.respond({ model: MODEL, previous_response_id: second.body.id, input: [outputOf(a, "A=1")] });
    expectInvalid(stale, new RegExp(b.call_id));

    t.llm.enqueue({ text: "A is 1 and B is 2." });
    const third = await t.respond({ model: MODEL, previous_response_id: second.body.id, input: [outputOf(b, "B=2")], tools: [toolA, toolB] });
    expect(third.body.status).toBe("completed");
    expect(third.body.output[0].content[0].text).toBe("A is 1 and B is 2.");
    expect(chatCount(t)).toBe(2);
    const messages = t.llm.lastChat().messages;
    expectAnsweredCalls(messages);
    const assistantCalls = messages.filter((m: any) => m.tool_calls);
    expect(assistantCalls[0].content).toBe("Both, please.");
    expect(assistantCalls.flatMap((m: any) => m.tool_calls.map((c: any) => [c.id, c.function.name, c.function.arguments]))).toEqual([
      [a.call_id, "tool_a", a.arguments],
      [b.call_id, "tool_b", b.arguments],
    ]);
    expect(toolMessages({ messages })).toEqual([
      { role: "tool", tool_call_id: a.call_id, content: "A=1" },
      { role: "tool", tool_call_id: b.call_id, content: "B=2" },
    ]);
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: b.call_id, content: "B=2" });
  });

  test("the catalog is per thread: a resume without `tools` keeps it, a new `tools` array replaces it", async () => {
    const { response, call } = await waitingThread();
    // Resume without tools: the model is still offered get_weather, and calling it pauses again.
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Lyon" } }] });
    const second = await t.respond({ model: MODEL, previous_response_id: response.id, input: [outputOf(call, "sunny")] });
    expect(second.body.status).toBe("completed");
    expect(callerToolsOffered(t)).toEqual(["get_weather"]);
    const [again] = functionCalls(second.body);
    expect(again).toMatchObject({ name: "get_weather", status: "completed" });
    expect(JSON.parse(again.arguments)).toEqual({ city: "Lyon" });

    // A plain follow-up without tools after the resume still offers the catalog.
    t.llm.enqueue({ text: "Lyon is rainy." });
    const third = await t.respond({ model: MODEL, previous_response_id: second.body.id, input: [outputOf(again, "rain")] });
    expect(third.body.output[0].content[0].text).toBe("Lyon is rainy.");
    t.llm.enqueue({ text: "ok" });
    await t.respond({ model: MODEL, previous_response_id: third.body.id, input: "and now?" });
    expect(callerToolsOffered(t)).toEqual(["get_weather"]);

    // A new tools array replaces the catalog.
    const clock = fn("get_time", "Current time", { tz: { type: "string", description: "zone" } });
    t.llm.enqueue({ toolCalls: [{ name: "get_time", arguments: { tz: "UTC" } }] });
    const fourth = await t.respond({ model: MODEL, previous_response_id: third.body.id, input: "what time is it?", tools: [clock] });
    expect(callerToolsOffered(t)).toEqual(["get_time"]);
    const [timeCall] = functionCalls(fourth.body);
    expect(timeCall.name).toBe("get_time");

    // The replaced catalog is the one that persists.
    t.llm.enqueue({ text: "It is noon." });
    const fifth = await t.respond({ model: MODEL, previous_response_id: fourth.body.id, input: [outputOf(timeCall, "12:00")] });
    expect(fifth.body.status).toBe("completed");
    expect(callerToolsOffered(t)).toEqual(["get_time"]);
  });

  test("an empty `tools` array clears the catalog", async () => {
    t.llm.enqueue({ text: "first" });
    const first = await t.respond({ model: MODEL, input: "hi", tools: [weather] });
    t.llm.enqueue({ text: "second" });
    await t.respond({ model: MODEL, previous_response_id: first.body.id, input: "again", tools: [] });
    expect(callerToolsOffered(t)).toEqual([]);
  });

  test("the legacy /v1/responses path runs the same flow", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] });
    const res = await t.api("/v1/responses", { method: "POST", json: { model: MODEL, input: "Rome?", tools: [weather] } });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    const [call] = functionCalls(body);
    expect(call.name).toBe("get_weather");
    t.llm.enqueue({ text: "Warm." });
    const res2 = await t.api("/v1/responses", { method: "POST", json: { model: MODEL, previous_response_id: body.id, input: [outputOf(call, "30C")] } });
    const body2 = (await res2.json()) as any;
    expect(body2.output[0].content[0].text).toBe("Warm.");
  });
});

describe("built-in tools inside the loop", () => {
  let t: TestService;
  const calls: { args: unknown; ctx: ToolContext }[] = [];
  beforeAll(async () => {
    t = await startTestService();
    const tools = t.service.services.tools;
    tools.register(
      defineTool({
        name: "test_add",
        description: "Adds two numbers",
        parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
        async execute(args, ctx) {
          calls.push({ args, ctx });
          return String(args.a + args.b);
        },
      }),
    );
    tools.register(
      defineTool({
        name: "test_crash",
        description: "Has a bug",
        parameters: Type.Object({}),
        async execute() {
          return (undefined as unknown as { x: string }).x;
        },
      }),
    );
    tools.register(
      defineTool({
        name: "test_explode",
        description: "Always fails",
        parameters: Type.Object({}),
        async execute() {
          throw new Error("the widget is on fire");
        },
      }),
    );
  });
  afterAll(() => t.stop());
  beforeEach(() => {
    t.llm.reset();
    calls.length = 0;
  });

  test("the model calls a built-in: it runs, its output goes back to the model, and it stays out of the output", async () => {
    t.llm.enqueue({ text: "Let me add.", toolCalls: [{ name: "test_add", arguments: { a: 2, b: 3 } }] }, { text: "2 + 3 = 5" });
    const r = await t.respond({ model: MODEL, input: "what is 2+3?" });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(r.body.output.map((o: any) => o.type)).toEqual(["message", "message"]);
    expect(r.body.output.map((o: any) => o.content[0].text)).toEqual(["Let me add.", "2 + 3 = 5"]);
    expect(JSON.stringify(r.body.output)).not.toContain("test_add");

    expect(calls).toHaveLength(1);
    expect(calls[0]!.args).toEqual({ a: 2, b: 3 });
    expect(calls[0]!.ctx.threadId).toBe(threadOfResponse(r.body.id)!);
    expect(calls[0]!.ctx.userId).toEqual(expect.any(String));

    const reqs = t.llm.chatRequests();
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.body.tools.map((x: any) => x.function.name)).toEqual(expect.arrayContaining(["test_add", "test_explode"]));
    const messages = reqs[1]!.body.messages;
    const assistant = messages.at(-2);
    expect(assistant).toMatchObject({ role: "assistant", content: "Let me add." });
    expect(assistant.tool_calls).toHaveLength(1);
    expect(assistant.tool_calls[0].function).toEqual({ name: "test_add", arguments: '{"a":2,"b":3}' });
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: assistant.tool_calls[0].id, content: untrusted("test_add", "5") });

    // GET shows the same caller-visible output.
    const got = (await (await t.api(`/api/v1/responses/${r.body.id}`)).json()) as any;
    expect(got.output).toEqual(r.body.output);
  });

  test("the built-in's result stays in the thread history for later turns", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "test_add", arguments: { a: 40, b: 2 } }] }, { text: "42" });
    const r = await t.respond({ model: MODEL, input: "40+2?" });
    t.llm.enqueue({ text: "Yes." });
    await t.respond({ model: MODEL, previous_response_id: r.body.id, input: "sure?" });
    const messages = t.llm.lastChat().messages;
    expect(toolMessages({ messages }).map((m: any) => m.content)).toEqual([untrusted("test_add", "42")]);
    expect(messages.at(-1)).toEqual({ role: "user", content: "sure?" });
  });

  test.each([
    ["arguments of the wrong type", '{"a":"two","b":3}', /^Error: invalid arguments for test_add: .*\/a/],
    ["a missing argument", '{"a":2}', /^Error: invalid arguments for test_add: .*b/],
    ["arguments that are not JSON", "{a: 2,", /^Error: the arguments for test_add are not valid JSON\.$/],
  ])("%s become a readable error for the model, not a failure", async (_, args, expected) => {
    t.llm.enqueue({ toolCalls: [{ name: "test_add", arguments: args }] }, { text: "Sorry, I got the arguments wrong." });
    const r = await t.respond({ model: MODEL, input: "add" });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(r.body.error).toBeNull();
    expect(r.body.output[0].content[0].text).toBe("Sorry, I got the arguments wrong.");
    expect(calls).toHaveLength(0);
    const [result] = toolMessages(t.llm.lastChat());
    const wrapper = untrusted("test_add", "").split("\n\n");
    expect(result.content).toStartWith(wrapper[0]);
    expect(result.content).toEndWith(wrapper[1]);
    expect(result.content.slice(wrapper[0]!.length + 1, -wrapper[1]!.length - 1)).toMatch(expected);
  });

  test("a built-in that throws becomes an error text for the model", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "test_explode", arguments: {} }] }, { text: "The tool failed." });
    const r = await t.respond({ model: MODEL, input: "go" });
    expect(r.body.status).toBe("completed");
    expect(toolMessages(t.llm.lastChat())[0].content).toBe(untrusted("test_explode", "Error: test_explode failed: the widget is on fire"));
  });

  test("a built-in that crashes (a defect, not a failure it reports) fails the turn with tool_error", async () => {
    t.llm.enqueue({ text: "Let me try.", toolCalls: [{ name: "test_crash", arguments: {} }] }, { text: "never asked" });
    const before = t.llm.chatRequests().length;
    const r = await t.respond({ model: MODEL, input: "go" });
    expect(r.body.status).toBe("failed");
    expect(r.body.error).toMatchObject({ code: "tool_error", type: "server_error" });
    expect(r.body.error.message).toStartWith("The tool test_crash crashed: ");
    expect(r.body.output.map((o: any) => o.content?.[0]?.text)).toEqual(["Let me try."]);
    expect(t.llm.chatRequests()).toHaveLength(before + 1);
    // stored so, and the thread goes on
    const got = (await (await t.api(`/api/v1/responses/${r.body.id}`)).json()) as any;
    expect(got.error.code).toBe("tool_error");
    t.llm.enqueue({ text: "Fine now." });
    const next = await t.respond({ model: MODEL, input: "again", previous_response_id: r.body.id });
    expect(next.body.status).toBe("completed");
  });

  test("a call of an unknown tool becomes an error text for the model", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "no_such_tool", arguments: {} }] }, { text: "Never mind." });
    const r = await t.respond({ model: MODEL, input: "go" });
    expect(r.body.status).toBe("completed");
    expect(r.body.output).toHaveLength(1);
    expect(toolMessages(t.llm.lastChat())[0].content).toBe(untrusted("no_such_tool", "Error: there is no tool named no_such_tool."));
  });

  test("a built-in and a caller tool in one step: the built-in runs, the turn pauses on the caller tool", async () => {
    const external = fn("ask_user", "Asks the user", { question: { type: "string", description: "q" } });
    t.llm.enqueue({ toolCalls: [{ name: "test_add", arguments: { a: 1, b: 1 } }, { name: "ask_user", arguments: { question: "ok?" } }] });
    const first = await t.respond({ model: MODEL, input: "go", tools: [external] });
    expect(first.body.status).toBe("completed");
    expect(first.body.output).toHaveLength(1);
    expect(first.body.output[0]).toMatchObject({ type: "function_call", name: "ask_user" });
    expect(calls).toHaveLength(1);
    const call = first.body.output[0];

    t.llm.enqueue({ text: "Done." });
    const second = await t.respond({ model: MODEL, previous_response_id: first.body.id, input: [outputOf(call, "yes")] });
    expect(second.body.output[0].content[0].text).toBe("Done.");
    expect(calls).toHaveLength(1); // the built-in did not run again
    const messages = t.llm.lastChat().messages;
    expectAnsweredCalls(messages);
    const sentCalls = messages.filter((m: any) => m.tool_calls).flatMap((m: any) => m.tool_calls);
    expect(sentCalls.map((c: any) => c.function.name)).toEqual(["test_add", "ask_user"]);
    expect(toolMessages({ messages })).toEqual([
      { role: "tool", tool_call_id: sentCalls[0].id, content: untrusted("test_add", "2") },
      { role: "tool", tool_call_id: call.call_id, content: "yes" },
    ]);
  });
});

describe("max steps", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { AGENT_MAX_STEPS: "2" } });
    t.service.services.tools.register(
      defineTool({ name: "test_spin", description: "Does nothing", parameters: Type.Object({}), execute: async () => "again" }),
    );
  });
  afterAll(() => t.stop());

  test("a model that always calls a built-in fails the turn with max_steps", async () => {
    t.llm.respondWith(() => ({ toolCalls: [{ name: "test_spin", arguments: {} }] }));
    const r = await t.respond({ model: MODEL, input: "loop forever" });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error).toEqual({ code: "max_steps", message: expect.any(String), type: "server_error", param: null });
    expect(r.body.error.message).toContain("2");
    expect(t.llm.chatRequests()).toHaveLength(2);
    const got = (await (await t.api(`/api/v1/responses/${r.body.id}`)).json()) as any;
    expect(got.status).toBe("failed");
    expect(got.error.code).toBe("max_steps");
  });

  test("an answer within the limit completes", async () => {
    t.llm.reset();
    t.llm.enqueue({ toolCalls: [{ name: "test_spin", arguments: {} }] }, { text: "Done in two." });
    const r = await t.respond({ model: MODEL, input: "two steps" });
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("Done in two.");
  });
});

describe("caller tools under revision A", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RESPONSES_API_REVISION: "A" } });
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  test("a function_call_output without previous_response_id has no gate to answer: 400, nothing stored", async () => {
    const before = await threadCount(t);
    const r = await t.respond({ input: [{ type: "function_call_output", call_id: "call_abc", output: "x" }] });
    expectInvalid(r, /No tool call is waiting/);
    expect(await threadCount(t)).toBe(before);
    expect(chatCount(t)).toBe(0);
  });

  test("a message may be mixed into the resume; the model sees the tool result, then the message", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Bern" } }] });
    const first = await t.respond({ input: "Bern?", tools: [weather] });
    expect(first.body.model).toBe("default");
    const [call] = functionCalls(first.body);
    expect(call.call_id).toMatch(CALL_ID);
    t.llm.enqueue({ text: "Snow in Bern; tomorrow too." });
    const r = await t.respond({
      previous_response_id: first.body.id,
      input: [outputOf(call, "snow"), { type: "message", role: "user", content: "and tomorrow?" }],
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("completed");
    expect(r.body.output[0].content[0].text).toBe("Snow in Bern; tomorrow too.");
    const messages = t.llm.lastChat().messages;
    expectAnsweredCalls(messages);
    expect(messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: call.call_id, content: "snow" },
      { role: "user", content: "and tomorrow?" },
    ]);
  });

  test("a wrong call_id is still rejected and changes nothing", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Basel" } }] });
    const first = await t.respond({ input: "Basel?", tools: [weather] });
    const before = await snapshot(t, first.body.id);
    const r = await t.respond({ previous_response_id: first.body.id, input: [{ type: "function_call_output", call_id: "call_ffff", output: "x" }] });
    expectInvalid(r, /call_ffff/);
    expect(await snapshot(t, first.body.id)).toEqual(before);
  });
});
