// POST /api/v1/responses, non-streaming, under revisions B (default) and A: the response
// object, thread continuation, instructions, x_context, and every 400 rule of the spec.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count } from "drizzle-orm";
import { loadItems } from "../../../src/store/conversations";
import { items, responses, threads } from "../../support/tables";
import { startTestService, type TestService } from "../../support/harness";

const RESP_ID = /^resp_[0-9a-f]{64}$/;
const ITEM_ID = /^item_[0-9a-f]+$/;
const MiB = 1024 * 1024;

const threadHex = (id: string) => id.slice(37);
const responseHex = (id: string) => id.slice(5, 37);
const threadUuid = (id: string) => {
  const h = threadHex(id);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** The user/assistant turns of a chat request the scripted LLM received (system prompt and tool plumbing left out). */
const dialogue = (chat: any) =>
  (chat.messages as any[]).filter((m) => m.role === "user" || m.role === "assistant").map((m) => ({ role: m.role, content: m.content }));

const lastUserContent = (chat: any): string => (chat.messages as any[]).findLast((m) => m.role === "user").content;

async function snapshot(t: TestService) {
  const db = t.service.services.db;
  const [th] = await db.select({ n: count() }).from(threads);
  const [rs] = await db.select({ n: count() }).from(responses);
  const [it] = await db.select({ n: count() }).from(items);
  return { llmRequests: t.llm.chatRequests().length, threads: th!.n, responses: rs!.n, items: it!.n };
}

/** Stored items of a thread, as a later GET of the conversation would show them. */
const threadItems = (t: TestService, responseId: string) => loadItems(t.service.services.db, threadUuid(responseId));

function expectEnvelope(body: any, type = "invalid_request_error") {
  expect(body).toBeObject();
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.type).toBe(type);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.code === null || typeof body.error.code === "string").toBe(true);
}

/** Sends a request that must be rejected, and checks the envelope and that nothing changed. */
async function expectRejected(
  t: TestService,
  send: () => Promise<{ status: number; body: any }>,
  opts: { status?: number; thread?: string; message?: RegExp } = {},
) {
  const before = await snapshot(t);
  const threadBefore = opts.thread ? await threadItems(t, opts.thread) : undefined;
  const { status, body } = await send();
  expect({ status, body }).toMatchObject({ status: opts.status ?? 400 });
  expectEnvelope(body);
  if (opts.message) expect(body.error.message).toMatch(opts.message);
  expect(await snapshot(t)).toEqual(before);
  if (opts.thread) expect(await threadItems(t, opts.thread)).toEqual(threadBefore!);
  return body;
}

async function raw(t: TestService, body: Bun.BodyInit, contentType = "application/json") {
  const res = await t.api("/api/v1/responses", { method: "POST", body, headers: { "content-type": contentType } });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}

const tool = (name: string) => ({
  type: "function",
  name,
  description: `the ${name} tool`,
  parameters: { type: "object", properties: { q: { type: "string", description: "query" } }, required: ["q"] },
});

/** A thread waiting on the external-tool gate: returns the response and the pending call. */
async function waitingThread(t: TestService, model: string | undefined) {
  t.llm.enqueue({ toolCalls: [{ name: "lookup", arguments: { q: "weather" } }] });
  const { status, body } = await t.respond({ ...(model ? { model } : {}), input: "what's the weather?", tools: [tool("lookup")] });
  expect(status).toBe(200);
  const call = body.output.find((o: any) => o.type === "function_call");
  // (no asymmetric matchers inside toMatchObject: Bun 1.4.5 writes them into the received object)
  expect(call).toMatchObject({ type: "function_call", name: "lookup" });
  expect(call.call_id).toMatch(/^call_[0-9a-f]+$/);
  return { response: body, callId: call.call_id as string };
}

/** 400 cases that hold under both revisions; `model` is filled in per revision. */
const commonInvalid: [string, Record<string, unknown>][] = [
  ["missing input", {}],
  ["null input", { input: null }],
  ["numeric input", { input: 42 }],
  ["object input", { input: { role: "user", content: "hi" } }],
  ["empty string input", { input: "" }],
  ["blank string input", { input: "  \n\t " }],
  ["empty array input", { input: [] }],
  ["string item", { input: ["hello"] }],
  ["null item", { input: [null] }],
  ["array item", { input: [[{ type: "message", role: "user", content: "hi" }]] }],
  ["unknown item type", { input: [{ type: "web_search_call", id: "x" }] }],
  ["item without type or role", { input: [{ content: "hi" }] }],
  ["only a function_call, with no user message", { input: [{ type: "function_call", call_id: "call_1", name: "x", arguments: "{}" }] }],
  ["function_call without call_id", { input: [{ role: "user", content: "hi" }, { type: "function_call", name: "x", arguments: "{}" }] }],
  ["message with unknown role", { input: [{ type: "message", role: "tool", content: "hi" }] }],
  ["message without content", { input: [{ type: "message", role: "user" }] }],
  ["message with numeric content", { input: [{ type: "message", role: "user", content: 7 }] }],
  // input_image parts are accepted (see the input items tests); these parts are not
  ["message with a file part", { input: [{ type: "message", role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] }],
  ["input_image without image_url", { input: [{ type: "message", role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] }],
  ["item_reference to an unknown item", { input: [{ type: "item_reference", id: "item_0" }, { role: "user", content: "hi" }] }],
  ["metadata with 17 pairs", { input: "hi", metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }],
  ["metadata with a 65-character key", { input: "hi", metadata: { ["k".repeat(65)]: "v" } }],
  ["metadata with a 513-character value", { input: "hi", metadata: { k: "v".repeat(513) } }],
  ["metadata with a number value", { input: "hi", metadata: { k: 1 } }],
  ["text.format of an unknown type", { input: "hi", text: { format: { type: "xml" } } }],
  ["json_schema format without a schema", { input: "hi", text: { format: { type: "json_schema", name: "x" } } }],
  ["conversation and previous_response_id together", { input: "hi", conversation: `conv_${"a".repeat(32)}`, previous_response_id: `resp_${"a".repeat(64)}` }],
  ["malformed conversation id", { input: "hi", conversation: "conv_x" }],
  ["background without store", { input: "hi", background: true, store: false }],
  ["only an assistant message", { input: [{ type: "message", role: "assistant", content: "hello" }] }],
  ["function_call_output with empty call_id", { input: [{ type: "function_call_output", call_id: "", output: "x" }] }],
  ["function_call_output without call_id", { input: [{ type: "function_call_output", output: "x" }] }],
  ["function_call_output without output", { input: [{ type: "function_call_output", call_id: "call_1" }] }],
  ["function_call_output with non-string output", { input: [{ type: "function_call_output", call_id: "call_1", output: 5 }] }],
  ["previous_response_id too short", { input: "hi", previous_response_id: "resp_abc" }],
  ["previous_response_id without prefix", { input: "hi", previous_response_id: "a".repeat(64) }],
  ["previous_response_id with 63 hex", { input: "hi", previous_response_id: `resp_${"a".repeat(63)}` }],
  ["previous_response_id with 65 hex", { input: "hi", previous_response_id: `resp_${"a".repeat(65)}` }],
  ["previous_response_id with non-hex", { input: "hi", previous_response_id: `resp_${"g".repeat(64)}` }],
  ["previous_response_id not a string", { input: "hi", previous_response_id: 123 }],
  ["instructions not a string", { input: "hi", instructions: 5 }],
  ["stream not a boolean", { input: "hi", stream: "yes" }],
  ["x_context over 10 KB", { input: "hi", x_context: { notes: { text: "x".repeat(10 * 1024) } } }],
  ["context alias over 10 KB", { input: "hi", context: { notes: { text: "x".repeat(10 * 1024) } } }],
  ["x_context not an object", { input: "hi", x_context: "plain text" }],
  ["x_context an array", { input: "hi", x_context: [{ a: 1 }] }],
  ["tools not an array", { input: "hi", tools: { type: "function", name: "x" } }],
  ["tool of another kind", { input: "hi", tools: [{ type: "web_search" }] }],
  ["file_search tool", { input: "hi", tools: [{ type: "file_search" }] }],
  ["code_interpreter tool", { input: "hi", tools: [{ type: "code_interpreter" }] }],
  ["tool name with a space", { input: "hi", tools: [tool("bad name")] }],
  ["tool name of 65 characters", { input: "hi", tools: [tool("a".repeat(65))] }],
  ["empty tool name", { input: "hi", tools: [tool("")] }],
  ["duplicate tool names", { input: "hi", tools: [tool("dup"), tool("dup")] }],
  ["tool shadowing memory_", { input: "hi", tools: [tool("memory_search")] }],
  ["tool shadowing skill_", { input: "hi", tools: [tool("skill_run")] }],
  ["tool shadowing mission_", { input: "hi", tools: [tool("mission_start")] }],
  ["tools over 16 KiB", { input: "hi", tools: [{ ...tool("big"), description: "d".repeat(16 * 1024) }] }],
];

const malformedBodies: [string, string][] = [
  ["truncated JSON", '{"input": "hi"'],
  ["not JSON at all", "input=hi"],
  ["a JSON array", '[{"input":"hi"}]'],
  ["a JSON string", '"hi"'],
  ["JSON null", "null"],
  ["a JSON number", "42"],
  ["an empty body", ""],
];

describe("revision B (default)", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  test("a completed response has the Responses object shape and echoes the model hint", async () => {
    t.llm.enqueue({ text: "Hello there, friend.", usage: { prompt_tokens: 17, completion_tokens: 4 } });
    const before = Math.floor(Date.now() / 1000);
    const { status, body } = await t.respond({ model: "gpt-4o-mini", input: "hi" });
    const after = Math.floor(Date.now() / 1000);
    expect(status).toBe(200);
    expect(body.id).toMatch(RESP_ID);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "gpt-4o-mini", error: null });
    expect(Number.isInteger(body.created_at)).toBe(true);
    expect(body.created_at).toBeGreaterThanOrEqual(before);
    expect(body.created_at).toBeLessThanOrEqual(after);
    expect(body.output).toEqual([
      {
        type: "message",
        id: expect.stringMatching(ITEM_ID),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hello there, friend.", annotations: [], logprobs: [] }],
      },
    ]);
    expect(body.usage).toMatchObject({ input_tokens: 17, output_tokens: 4, total_tokens: 21 });
    for (const k of ["input_tokens", "output_tokens", "total_tokens"]) expect(Number.isInteger(body.usage[k])).toBe(true);
    // the standard fields strict clients look for
    expect(body).toMatchObject({ previous_response_id: null, instructions: null, incomplete_details: null, tools: [], parallel_tool_calls: false });
    // the message reached the model as the user's message
    expect(lastUserContent(t.llm.lastChat())).toBe("hi");
  });

  test("the response id embeds the thread: one thread shares the last 32 hex, each turn mints the first 32", async () => {
    const first = await t.respond({ model: "m", input: "one" });
    const second = await t.respond({ model: "m", input: "two", previous_response_id: first.body.id });
    const third = await t.respond({ model: "m", input: "three", previous_response_id: second.body.id });
    const other = await t.respond({ model: "m", input: "elsewhere" });
    for (const r of [first, second, third, other]) {
      expect(r.status).toBe(200);
      expect(r.body.id).toMatch(RESP_ID);
    }
    const [a, b, c, d] = [first, second, third, other].map((r) => r.body.id as string);
    expect(threadHex(b!)).toBe(threadHex(a!));
    expect(threadHex(c!)).toBe(threadHex(a!));
    expect(new Set([responseHex(a!), responseHex(b!), responseHex(c!)]).size).toBe(3);
    expect(threadHex(d!)).not.toBe(threadHex(a!));
    expect(second.body.previous_response_id).toBe(a!);
  });

  test("previous_response_id continues the thread: the model sees the earlier turn", async () => {
    t.llm.enqueue({ text: "Nice to meet you, Ada." });
    const first = await t.respond({ model: "m", input: "My name is Ada." });
    expect(first.body.status).toBe("completed");
    t.llm.enqueue({ text: "Your name is Ada." });
    const second = await t.respond({ model: "m", input: "What is my name?", previous_response_id: first.body.id });
    expect(second.status).toBe(200);
    expect(second.body.output[0].content[0].text).toBe("Your name is Ada.");
    expect(dialogue(t.llm.lastChat())).toEqual([
      { role: "user", content: "My name is Ada." },
      { role: "assistant", content: "Nice to meet you, Ada." },
      { role: "user", content: "What is my name?" },
    ]);
    // only the new assistant message is output, not the earlier turn
    expect(second.body.output).toHaveLength(1);
    expect(second.body.output[0].id).not.toBe(first.body.output[0].id);
  });

  test("array input with message items works like a string", async () => {
    const { status, body } = await t.respond({
      model: "m",
      input: [
        { type: "message", role: "user", content: "first line" },
        { role: "user", content: [{ type: "input_text", text: "second line" }] },
      ],
    });
    expect(status).toBe(200);
    expect(body.status).toBe("completed");
    const users = dialogue(t.llm.lastChat()).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["first line", "second line"]);
  });

  test("instructions are an <instructions> block in the user message and stay for later turns", async () => {
    const first = await t.respond({ model: "m", input: "Bonjour?", instructions: "Answer in French." });
    expect(first.status).toBe(200);
    expect(first.body.instructions).toBe("Answer in French.");
    const chat1 = t.llm.lastChat();
    const content = lastUserContent(chat1);
    expect(content).toMatch(/^<instructions>\s*Answer in French\.\s*<\/instructions>\s+Bonjour\?$/);
    // the identity (system prompt) is not changed by instructions
    expect(chat1.messages[0].role).toBe("system");
    expect(chat1.messages[0].content).not.toContain("Answer in French.");

    const second = await t.respond({ model: "m", input: "Et maintenant?", previous_response_id: first.body.id });
    expect(second.status).toBe(200);
    const d = dialogue(t.llm.lastChat());
    expect(d[0]).toEqual({ role: "user", content }); // persisted with the user message
    expect(d.at(-1)).toEqual({ role: "user", content: "Et maintenant?" });
    // stored as part of the user message of the thread
    const stored = await threadItems(t, first.body.id);
    expect(stored[0]).toMatchObject({ type: "message", role: "user", content });
  });

  test("x_context is a <user-context> block ahead of the message; the alias context works too", async () => {
    for (const field of ["x_context", "context"]) {
      const { status, body } = await t.respond({
        model: "m",
        input: "Which plan am I on?",
        [field]: { account: { plan: "pro", seats: 3 }, locale: "en-GB" },
      });
      expect(status).toBe(200);
      expect(body.status).toBe("completed");
      const content = lastUserContent(t.llm.lastChat());
      const open = content.indexOf("<user-context>");
      const close = content.indexOf("</user-context>");
      expect(open).toBe(0);
      expect(close).toBeGreaterThan(open);
      const block = content.slice(open, close);
      for (const s of ["account", "plan", "pro", "seats", "3", "locale", "en-GB"]) expect(block).toContain(s);
      expect(content.indexOf("Which plan am I on?")).toBeGreaterThan(close);
      expect(content.endsWith("Which plan am I on?")).toBe(true);
    }
  });

  test("x_context just under 10 KB is accepted", async () => {
    const { status, body } = await t.respond({ model: "m", input: "hi", x_context: { notes: { text: "y".repeat(9 * 1024) } } });
    expect(status).toBe(200);
    expect(body.status).toBe("completed");
    expect(lastUserContent(t.llm.lastChat())).toContain("y".repeat(9 * 1024));
  });

  test("instructions and x_context together both precede the message", async () => {
    const { status } = await t.respond({ model: "m", input: "the question", instructions: "Be brief.", x_context: { who: { name: "Ada" } } });
    expect(status).toBe(200);
    const content = lastUserContent(t.llm.lastChat());
    expect(content).toContain("<instructions>");
    expect(content).toContain("Be brief.");
    expect(content).toContain("<user-context>");
    expect(content).toContain("Ada");
    expect(content.endsWith("the question")).toBe(true);
  });

  describe("accepted and ignored in B", () => {
    const accepted: [string, Record<string, unknown>][] = [
      ["tool_choice auto", { tool_choice: "auto" }],
      ["tool_choice none", { tool_choice: "none" }],
      ["tool_choice object", { tool_choice: { type: "function", name: "x" } }],
      ["max_output_tokens", { max_output_tokens: 64 }],
      ["temperature 0", { temperature: 0 }],
      ["temperature 2", { temperature: 2 }],
      ["temperature 0.7", { temperature: 0.7 }],
      ["unlisted fields", { top_p: 0.5, user: "someone", metadata: { a: "b" }, store: true, frobnicate: [1, 2, 3] }],
      ["model of exactly 256 bytes", { model: "m".repeat(256) }],
      ["model with inner spaces and unicode", { model: "my router/model é 7" }],
    ];
    for (const [name, extra] of accepted) {
      test(name, async () => {
        const n = t.llm.chatRequests().length;
        const { status, body } = await t.respond({ model: "m", input: `accepted: ${name}`, ...extra });
        expect(status).toBe(200);
        expect(body.status).toBe("completed");
        expect(body.model).toBe((extra.model as string) ?? "m");
        expect(t.llm.chatRequests().length).toBe(n + 1);
      });
    }
  });

  describe("400 rules", () => {
    const bInvalid: [string, Record<string, unknown>][] = [
      ...commonInvalid.map(([n, b]) => [n, { model: "m", ...b }] as [string, Record<string, unknown>]),
      ["missing model", { input: "hi" }],
      ["null model", { input: "hi", model: null }],
      ["empty model", { input: "hi", model: "" }],
      ["model with leading space", { input: "hi", model: " gpt-4o" }],
      ["model with trailing space", { input: "hi", model: "gpt-4o " }],
      ["model with trailing newline", { input: "hi", model: "gpt-4o\n" }],
      ["model of 257 bytes", { input: "hi", model: "m".repeat(257) }],
      ["model of 129 two-byte characters (258 bytes)", { input: "hi", model: "é".repeat(129) }],
      ["model with a newline inside", { input: "hi", model: "gpt\n4o" }],
      ["model with a NUL", { input: "hi", model: "gpt\u00004o" }],
      ["model with a tab", { input: "hi", model: "gpt\t4o" }],
      ["model with DEL", { input: "hi", model: "gpt\u007f4o" }],
      ["model not a string", { input: "hi", model: 4 }],
      ["temperature below 0", { input: "hi", model: "m", temperature: -0.1 }],
      ["temperature above 2", { input: "hi", model: "m", temperature: 2.01 }],
      ["temperature not a number", { input: "hi", model: "m", temperature: "hot" }],
      ["function_call_output without previous_response_id", { model: "m", input: [{ type: "function_call_output", call_id: "call_1", output: "x" }] }],
    ];
    for (const [name, body] of bInvalid) {
      test(name, async () => {
        await expectRejected(t, () => t.respond(body));
      });
    }

    for (const [name, text] of malformedBodies) {
      test(`body is ${name}`, async () => {
        await expectRejected(t, () => raw(t, text));
      });
    }

    test("a body over 14 MiB gives the 413 envelope", async () => {
      const big = JSON.stringify({ model: "m", input: "z".repeat(14 * MiB + 16) });
      const body = await expectRejected(t, () => raw(t, big), { status: 413 });
      expect(body.error.type).toBe("invalid_request_error");
    });

    describe("on an existing thread", () => {
      let waiting: { response: any; callId: string };
      let plain: any;
      beforeAll(async () => {
        waiting = await waitingThread(t, "m");
        plain = (await t.respond({ model: "m", input: "a plain thread" })).body;
        expect(plain.status).toBe("completed");
      });

      test("resume mixing a message with function_call_output", async () => {
        await expectRejected(
          t,
          () =>
            t.respond({
              model: "m",
              previous_response_id: waiting.response.id,
              tools: [tool("lookup")],
              input: [
                { type: "function_call_output", call_id: waiting.callId, output: "sunny" },
                { type: "message", role: "user", content: "and tomorrow?" },
              ],
            }),
          { thread: waiting.response.id },
        );
      });

      test("resume with a wrong call_id", async () => {
        await expectRejected(
          t,
          () =>
            t.respond({
              model: "m",
              previous_response_id: waiting.response.id,
              tools: [tool("lookup")],
              input: [{ type: "function_call_output", call_id: "call_wrong", output: "sunny" }],
            }),
          { thread: waiting.response.id },
        );
      });

      test("resume with an empty call_id or without output", async () => {
        for (const item of [
          { type: "function_call_output", call_id: "", output: "sunny" },
          { type: "function_call_output", call_id: waiting.callId },
        ]) {
          await expectRejected(t, () => t.respond({ model: "m", previous_response_id: waiting.response.id, tools: [tool("lookup")], input: [item] }), {
            thread: waiting.response.id,
          });
        }
      });

      test("function_call_output on a thread with no pending call", async () => {
        await expectRejected(
          t,
          () => t.respond({ model: "m", previous_response_id: plain.id, input: [{ type: "function_call_output", call_id: "call_1", output: "x" }] }),
          { thread: plain.id },
        );
      });

      test("a bad field on a continuation changes nothing on the thread", async () => {
        await expectRejected(t, () => t.respond({ model: "m", previous_response_id: plain.id, input: "hi", temperature: 3 }), { thread: plain.id });
        await expectRejected(t, () => t.respond({ model: " m", previous_response_id: plain.id, input: "hi" }), { thread: plain.id });
      });

      test("after the rejections the valid resume works and the model saw none of them", async () => {
        t.llm.enqueue({ text: "It is sunny." });
        const { status, body } = await t.respond({
          model: "m",
          previous_response_id: waiting.response.id,
          tools: [tool("lookup")],
          input: [{ type: "function_call_output", call_id: waiting.callId, output: "sunny" }],
        });
        expect({ status, error: body.error }).toEqual({ status: 200, error: null });
        expect(body.output.at(-1).content[0].text).toBe("It is sunny.");
        const msgs = t.llm.lastChat().messages as any[];
        expect(msgs.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["what's the weather?"]);
        expect(msgs.filter((m) => m.role === "tool")).toEqual([{ role: "tool", tool_call_id: waiting.callId, content: "sunny" }]);

        await t.respond({ model: "m", previous_response_id: plain.id, input: "next" });
        expect(dialogue(t.llm.lastChat()).map((m) => m.content)).toEqual(["a plain thread", "You said: a plain thread", "next"]);
      });
    });
  });
});

describe("revision A", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RESPONSES_API_REVISION: "A" } });
  });
  afterAll(() => t.stop());

  test('a completed response reports model "default"', async () => {
    t.llm.enqueue({ text: "Hi from A.", usage: { prompt_tokens: 9, completion_tokens: 3 } });
    const { status, body } = await t.respond({ input: "hi" });
    expect(status).toBe(200);
    expect(body.id).toMatch(RESP_ID);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "default", error: null });
    expect(Number.isInteger(body.created_at)).toBe(true);
    expect(body.output).toEqual([
      {
        type: "message",
        id: expect.stringMatching(ITEM_ID),
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hi from A.", annotations: [], logprobs: [] }],
      },
    ]);
    expect(body.usage).toMatchObject({ input_tokens: 9, output_tokens: 3, total_tokens: 12 });
  });

  test('model "default" is accepted and echoed as "default"', async () => {
    const { status, body } = await t.respond({ model: "default", input: "hi" });
    expect(status).toBe(200);
    expect(body.model).toBe("default");
  });

  test("continuation, instructions and x_context behave as in B", async () => {
    t.llm.enqueue({ text: "Noted." });
    const first = await t.respond({ input: "Remember 42.", instructions: "Be terse.", x_context: { session: { id: "s1" } } });
    expect(first.body.status).toBe("completed");
    const content = lastUserContent(t.llm.lastChat());
    expect(content).toContain("<instructions>");
    expect(content).toContain("Be terse.");
    expect(content).toContain("<user-context>");
    expect(content.endsWith("Remember 42.")).toBe(true);
    const second = await t.respond({ input: "What number?", previous_response_id: first.body.id });
    expect(threadHex(second.body.id)).toBe(threadHex(first.body.id));
    expect(dialogue(t.llm.lastChat())).toEqual([
      { role: "user", content },
      { role: "assistant", content: "Noted." },
      { role: "user", content: "What number?" },
    ]);
  });

  test("a resume may mix a message with function_call_output", async () => {
    const { response, callId } = await waitingThread(t, undefined);
    t.llm.enqueue({ text: "Sunny today, rain tomorrow." });
    const { status, body } = await t.respond({
      previous_response_id: response.id,
      tools: [tool("lookup")],
      input: [
        { type: "function_call_output", call_id: callId, output: "sunny" },
        { type: "message", role: "user", content: "and tomorrow?" },
      ],
    });
    expect({ status, error: body.error }).toEqual({ status: 200, error: null });
    expect(body.output.at(-1).content[0].text).toBe("Sunny today, rain tomorrow.");
    const msgs = t.llm.lastChat().messages as any[];
    expect(msgs.find((m) => m.role === "tool")).toEqual({ role: "tool", tool_call_id: callId, content: "sunny" });
    expect(msgs.at(-1)).toEqual({ role: "user", content: "and tomorrow?" });
  });

  describe("400 rules", () => {
    const aInvalid: [string, Record<string, unknown>][] = [
      ...commonInvalid,
      ["model other than default", { input: "hi", model: "gpt-4o" }],
      ["model DEFAULT in capitals", { input: "hi", model: "DEFAULT" }],
      ["empty model", { input: "hi", model: "" }],
      ["model default with space", { input: "hi", model: "default " }],
      ["model not a string", { input: "hi", model: 1 }],
      ["tool_choice", { input: "hi", tool_choice: "auto" }],
      ["tool_choice none", { input: "hi", tool_choice: "none" }],
      ["temperature", { input: "hi", temperature: 0.5 }],
      ["temperature 0", { input: "hi", temperature: 0 }],
      ["max_output_tokens", { input: "hi", max_output_tokens: 100 }],
      ["function_call_output on a new thread (no pending call)", { input: [{ type: "function_call_output", call_id: "call_1", output: "x" }] }],
    ];
    for (const [name, body] of aInvalid) {
      test(name, async () => {
        await expectRejected(t, () => t.respond(body));
      });
    }

    for (const [name, text] of malformedBodies) {
      test(`body is ${name}`, async () => {
        await expectRejected(t, () => raw(t, text));
      });
    }

    test("a body over 14 MiB gives the 413 envelope", async () => {
      const big = JSON.stringify({ input: "z".repeat(14 * MiB + 16) });
      await expectRejected(t, () => raw(t, big), { status: 413 });
    });

    test("rejections on a waiting thread change nothing", async () => {
      const { response, callId } = await waitingThread(t, undefined);
      const resume = (extra: Record<string, unknown>, item: Record<string, unknown>) =>
        t.respond({ previous_response_id: response.id, tools: [tool("lookup")], input: [item], ...extra });
      await expectRejected(t, () => resume({}, { type: "function_call_output", call_id: "call_wrong", output: "x" }), { thread: response.id });
      await expectRejected(t, () => resume({}, { type: "function_call_output", call_id: callId }), { thread: response.id });
      await expectRejected(t, () => resume({ temperature: 1 }, { type: "function_call_output", call_id: callId, output: "x" }), { thread: response.id });
      await expectRejected(t, () => resume({ model: "gpt-4o" }, { type: "function_call_output", call_id: callId, output: "x" }), { thread: response.id });
      // the gate is still live: the proper resume goes through
      const ok = await resume({}, { type: "function_call_output", call_id: callId, output: "cloudy" });
      expect({ status: ok.status, error: ok.body.error }).toEqual({ status: 200, error: null });
    });
  });
});
