// The official `openai` SDK against the compiled binary, used as its documentation shows.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { startBinary, weatherSchema, type RunningBinary } from "./binary";

let s: RunningBinary;
let client: OpenAI;
beforeAll(async () => {
  s = await startBinary();
  client = new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: s.token, maxRetries: 0 });
});
afterAll(() => s.stop());
beforeEach(() => s.llm.reset());

const tools: OpenAI.Responses.FunctionTool[] = [{ type: "function", name: "get_weather", description: "Weather for a city", parameters: weatherSchema, strict: true }];
const weatherOf: Record<string, string> = { Paris: "sunny, 24 °C", Rome: "rainy, 18 °C" };

/** The client-side tool loop as the SDK's docs write it: run each call, send the outputs back. */
async function toolLoop(first: OpenAI.Responses.ResponseCreateParamsNonStreaming, chained: boolean) {
  const input: OpenAI.Responses.ResponseInputItem[] = Array.isArray(first.input) ? [...first.input] : [{ role: "user", content: first.input as string }];
  let response = await client.responses.create({ ...first, input });
  for (let steps = 0; steps < 5; steps++) {
    const calls = response.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === "function_call");
    if (!calls.length) return response;
    const outputs = calls.map((c) => ({ type: "function_call_output" as const, call_id: c.call_id, output: weatherOf[JSON.parse(c.arguments).city] ?? "unknown" }));
    if (chained) {
      response = await client.responses.create({ model: first.model, tools: first.tools, previous_response_id: response.id, input: outputs });
    } else {
      input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]), ...outputs);
      response = await client.responses.create({ ...first, input });
    }
  }
  throw new Error("the tool loop did not end");
}

describe("openai SDK", () => {
  test("a plain turn, then a chained one", async () => {
    s.llm.enqueue({ text: "Hello! I am your agent." });
    const first = await client.responses.create({ model: "gpt-4o-mini", input: "Hello" });
    expect(first.output_text).toBe("Hello! I am your agent.");
    expect(first.status).toBe("completed");
    s.llm.enqueue({ text: "You said hello." });
    const second = await client.responses.create({ model: "gpt-4o-mini", input: "What did I say?", previous_response_id: first.id });
    expect(second.output_text).toBe("You said hello.");
    expect(s.llm.lastChat().messages.slice(1).map((m: any) => m.content)).toEqual(["Hello", "Hello! I am your agent.", "What did I say?"]);
  });

  test("streaming with responses.stream() and create({stream: true})", async () => {
    s.llm.enqueue({ text: "one two three" });
    const deltas: string[] = [];
    const runner = client.responses.stream({ model: "m", input: "count" });
    runner.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await runner.finalResponse();
    expect(deltas.join("")).toBe("one two three");
    expect(final.output_text).toBe("one two three");
    s.llm.enqueue({ text: "four five" });
    let text = "";
    for await (const e of await client.responses.create({ model: "m", input: "more", stream: true })) if (e.type === "response.output_text.delta") text += e.delta;
    expect(text).toBe("four five");
  });

  for (const chained of [false, true]) {
    test(`client-side tools over several steps, ${chained ? "chained with previous_response_id" : "stateless (the whole history each time)"}`, async () => {
      s.llm.enqueue(
        { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
        { toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
        { text: "Paris is sunny, Rome is rainy." },
      );
      const final = await toolLoop({ model: "m", input: "Weather in Paris and Rome?", tools }, chained);
      expect(final.output_text).toBe("Paris is sunny, Rome is rainy.");
      const toolMessages = s.llm.lastChat().messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
      expect(toolMessages).toEqual(["sunny, 24 °C", "rainy, 18 °C"]);
    });
  }

  test("store: false, and structured output with responses.parse", async () => {
    s.llm.enqueue({ text: "not kept" });
    const ephemeral = await client.responses.create({ model: "m", input: "x", store: false });
    expect((ephemeral as { store?: boolean }).store).toBe(false); // echoed, though the SDK type leaves it out
    expect(await client.responses.retrieve(ephemeral.id).catch((e) => e.status)).toBe(404);

    s.llm.enqueue({ text: '{"city":"Paris","temperature_c":24}' });
    const parsed = await client.responses.parse({
      model: "m",
      input: "Weather as JSON",
      text: { format: zodTextFormat(z.object({ city: z.string(), temperature_c: z.number() }), "weather") },
    });
    expect(parsed.output_parsed).toEqual({ city: "Paris", temperature_c: 24 });
    expect(s.llm.lastChat().response_format).toMatchObject({ type: "json_schema", json_schema: { name: "weather", strict: true } });
  });

  test("a failed turn: status failed with the service's message, streamed as response.failed", async () => {
    s.llm.enqueue({ error: { status: 400, message: "the prompt is too long" } });
    const failed = await client.responses.create({ model: "m", input: "x" });
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toContain("the prompt is too long");
    s.llm.enqueue({ error: { status: 400, message: "the prompt is too long" } });
    const events: string[] = [];
    let error: string | undefined;
    for await (const e of await client.responses.create({ model: "m", input: "x", stream: true })) {
      events.push(e.type);
      if (e.type === "response.failed") error = e.response.error?.message;
    }
    expect(events.at(-1)).toBe("response.failed");
    expect(error).toContain("the prompt is too long");
  });

  test("conversations: create, respond into it, list its items", async () => {
    const conv = await client.conversations.create({ metadata: { topic: "trip" }, items: [{ type: "message", role: "user", content: "I fly to Lisbon." }] });
    s.llm.enqueue({ text: "Enjoy Lisbon!" });
    const r = await client.responses.create({ model: "m", conversation: conv.id, input: "Where do I fly?" });
    expect(r.output_text).toBe("Enjoy Lisbon!");
    const items = await client.conversations.items.list(conv.id, { order: "asc" });
    expect(items.data.map((i: any) => i.content[0].text)).toEqual(["I fly to Lisbon.", "Where do I fly?", "Enjoy Lisbon!"]);
    expect((await client.conversations.retrieve(conv.id)).metadata).toEqual({ topic: "trip" });
    const inputs = await client.responses.inputItems.list(r.id);
    expect(inputs.data.map((i: any) => i.content[0].text)).toEqual(["Where do I fly?"]);
    await client.conversations.delete(conv.id);
    expect(await client.conversations.retrieve(conv.id).catch((e) => e.status)).toBe(404);
  });

  test("background: create, poll with retrieve, stream it with retrieve({stream: true}) from starting_after", async () => {
    let release!: () => void;
    const wait = new Promise<void>((r) => (release = r));
    s.llm.respondWith(async () => {
      await wait;
      return { text: "background work done", chunks: 3 };
    });
    const created = await client.responses.create({ model: "m", input: "long", background: true });
    expect(created.status).toBe("in_progress");
    expect(created.background).toBe(true);
    expect((await client.responses.retrieve(created.id)).status).toBe("in_progress");
    const live = await client.responses.retrieve(created.id, { stream: true, starting_after: 1 });
    release();
    const types: string[] = [];
    let text = "";
    for await (const e of live) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
    }
    expect(types[0]).toBe("response.output_item.added"); // created (0) and in_progress (1) skipped
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("background work done");
    let polled = await client.responses.retrieve(created.id);
    while (polled.status === "in_progress") polled = await client.responses.retrieve(created.id);
    expect(polled.output_text).toBe("background work done");
    // a finished response replays the whole stream
    const replay: string[] = [];
    for await (const e of await client.responses.retrieve(created.id, { stream: true })) replay.push(e.type);
    expect(replay[0]).toBe("response.created");
    expect(replay.at(-1)).toBe("response.completed");
    await client.responses.delete(created.id);
    expect(await client.responses.retrieve(created.id).catch((e) => e.status)).toBe(404);
  });

  test("models, the chat completions alias and the legacy /v1 base URL", async () => {
    expect((await client.models.list()).data.map((m) => m.id)).toContain("default");
    s.llm.enqueue({ text: "raw" });
    const chat = await client.chat.completions.create({ model: "default", messages: [{ role: "user", content: "hi" }] });
    expect(chat.choices[0]!.message.content).toBe("raw");
    const legacy = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.token, maxRetries: 0 });
    s.llm.enqueue({ text: "via /v1" });
    const r = await legacy.responses.create({ model: "m", input: "hi" });
    expect((await legacy.responses.retrieve(r.id)).output_text).toBe("via /v1");
  });

  test("responses.inputTokens.count, responses.compact and its window given back, under /api/v1 and /v1", async () => {
    for (const c of [client, new OpenAI({ baseURL: `${s.url}/v1`, apiKey: s.token, maxRetries: 0 })]) {
      const short = await c.responses.inputTokens.count({ model: "m", input: "hi" });
      expect(short.object).toBe("response.input_tokens");
      const long = await c.responses.inputTokens.count({ model: "m", input: "hi ".repeat(400), tools });
      expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 200);

      s.llm.enqueue({ text: "Ada works on ticket T-4711." });
      const compacted = await c.responses.compact({
        model: "m",
        input: [
          { role: "user", content: "I am Ada, ticket T-4711." },
          { role: "assistant", content: "Hello Ada." },
        ],
      });
      expect(compacted.object).toBe("response.compaction");
      const sealed = compacted.output.at(-1)!;
      expect(sealed.type).toBe("compaction");
      s.llm.enqueue({ text: "T-4711." });
      const next = await c.responses.create({ model: "m", input: [...(compacted.output as OpenAI.Responses.ResponseInputItem[]), { role: "user", content: "Which ticket?" }] });
      expect(next.output_text).toBe("T-4711.");
      expect(JSON.stringify(s.llm.lastChat().messages)).toContain("Ada works on ticket T-4711.");
      const forged = await c.responses
        .create({ model: "m", input: [{ type: "compaction", encrypted_content: "v1:AAAA" }, { role: "user", content: "x" }] })
        .catch((e) => e);
      expect(forged).toBeInstanceOf(OpenAI.BadRequestError);
    }
  });

  test("conversations.items.delete and models.retrieve", async () => {
    const conv = await client.conversations.create({ items: [{ type: "message", role: "user", content: "one" }, { type: "message", role: "user", content: "two" }] });
    const items = await client.conversations.items.list(conv.id, { order: "asc" });
    const after = await client.conversations.items.delete(items.data[0]!.id!, { conversation_id: conv.id });
    expect(after.id).toBe(conv.id);
    const left = await client.conversations.items.list(conv.id);
    expect(left.data.map((i) => (i as any).content[0].text)).toEqual(["two"]);
    const model = await client.models.retrieve("scripted-model");
    expect(model).toMatchObject({ id: "scripted-model", object: "model", owned_by: "service" });
  });

  test("a text file as an input_file part (as the Python SDK sends one)", async () => {
    s.llm.enqueue({ text: "Three fruits." });
    const r = await client.responses.create({
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_file", filename: "fruits.txt", file_data: `data:text/plain;base64,${Buffer.from("apple\nbanana\ncherry").toString("base64")}` },
            { type: "input_text", text: "What is in the file?" },
          ],
        },
      ],
    });
    expect(r.output_text).toBe("Three fruits.");
    expect(JSON.stringify(s.llm.lastChat().messages)).toContain("apple\\nbanana\\ncherry");
    const refused = await client.responses
      .create({ model: "m", input: [{ role: "user", content: [{ type: "input_file", filename: "x.png", file_data: "data:image/png;base64,iVBORw0KGgo=" }] }] })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.message).toContain("image/png");
  });
});
