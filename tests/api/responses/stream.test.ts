// Server-Sent Events of POST /api/v1/responses with stream: true.
import { afterAll, beforeAll, beforeEach, describe, expect, spyOn, test } from "bun:test";
import type { AgentEvent } from "../../../src/agent/events";
import type { TurnResult } from "../../../src/agent/turn-types";
import { buildResponse } from "../../../src/api/responses/objects";
import { Run } from "../../../src/api/responses/runs";
import { ResponseEventMapper, responseStream } from "../../../src/api/responses/stream";
import { KEEPALIVE_MS } from "../../../src/http/sse";
import { startTestService, type TestService } from "../../support/harness";

const MODEL = "stream-model";
const RESP_ID = /^resp_[0-9a-f]{64}$/;
const ITEM_ID = /^item_[0-9a-f]+$/;
const CALL_ID = /^call_[0-9a-f]+$/;

type Sse = { event: string; data: any };

/** Parses an SSE body into events; comment lines (keepalives) are returned separately. */
function parseSse(raw: string): { events: Sse[]; comments: string[] } {
  const events: Sse[] = [];
  const comments: string[] = [];
  for (const frame of raw.split("\n\n")) {
    if (!frame) continue;
    const lines = frame.split("\n");
    if (lines.every((l) => l.startsWith(":"))) {
      comments.push(...lines);
      continue;
    }
    const event = lines.find((l) => l.startsWith("event: "))?.slice("event: ".length);
    const data = lines
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice("data: ".length))
      .join("\n");
    expect(event).toBeDefined();
    events.push({ event: event!, data: JSON.parse(data) });
  }
  return { events, comments };
}

/** The SSE framing rules that hold for every stream: event = type, sequence numbers 0, 1, 2, ... */
function expectWellFormed(events: Sse[]) {
  events.forEach((e, i) => {
    expect(e.event).toBe(e.data.type);
    expect(e.data.sequence_number).toBe(i);
  });
}

const types = (events: Sse[]) => events.map((e) => e.data.type);
const ofType = (events: Sse[], type: string) => events.filter((e) => e.data.type === type).map((e) => e.data);
const SPEC_EVENTS = new Set([
  "response.created",
  "response.output_item.added",
  "response.output_text.delta",
  "response.output_item.done",
  "response.completed",
  "response.failed",
]);

const TEXT_EVENTS_HEAD = ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"];
const TEXT_EVENTS_TAIL = ["response.output_text.done", "response.content_part.done", "response.output_item.done"];
const CALL_EVENTS = [
  "response.output_item.added",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.output_item.done",
];

const weather = {
  type: "function",
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string", description: "City" } }, required: ["city"] },
};

describe("streaming over HTTP", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());
  beforeEach(() => t.llm.reset());

  async function stream(body: Record<string, unknown>) {
    const res = await t.api("/api/v1/responses", { method: "POST", json: { model: MODEL, stream: true, ...body } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    // text() resolves only when the server closes the stream.
    const raw = await res.text();
    const { events } = parseSse(raw);
    expectWellFormed(events);
    return events;
  }

  async function retrieve(id: string) {
    const res = await t.api(`/api/v1/responses/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  }

  /** GET returns the final streamed response, with model and usage as revision B reports them. */
  async function expectRetrievedEquals(final: any) {
    const got = await retrieve(final.id);
    const { model, usage, ...rest } = got;
    const { model: _m, usage: finalUsage, ...finalRest } = final;
    expect(rest).toEqual(finalRest);
    expect(model).toBe("reborn");
    expect(usage).toEqual({ ...finalUsage, cost_usd: 0 });
    return got;
  }

  test("a text answer: the exact event order and fields", async () => {
    t.llm.enqueue({ text: "Hello brave new world", usage: { prompt_tokens: 11, completion_tokens: 4 } });
    const events = await stream({ input: "greet me" });
    expect(types(events)).toEqual([...TEXT_EVENTS_HEAD, ...Array(4).fill("response.output_text.delta"), ...TEXT_EVENTS_TAIL, "response.completed"]);

    const [created, inProgress] = [events[0]!.data.response, events[1]!.data.response];
    expect(created.id).toMatch(RESP_ID);
    expect(created).toMatchObject({ object: "response", status: "in_progress", model: MODEL, output: [], error: null });
    expect(inProgress).toEqual(created);

    const added = events[2]!.data;
    expect(added.output_index).toBe(0);
    expect(added.item).toEqual({ type: "message", id: expect.stringMatching(ITEM_ID), status: "in_progress", role: "assistant", content: [] });
    const itemId = added.item.id;
    expect(events[3]!.data).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });

    const deltas = ofType(events, "response.output_text.delta");
    for (const d of deltas) expect(d).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0 });
    expect(deltas.map((d) => d.delta)).toEqual(["Hello ", "brave ", "new ", "world"]);

    const textDone = ofType(events, "response.output_text.done")[0];
    expect(textDone).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, text: "Hello brave new world" });
    const partDone = ofType(events, "response.content_part.done")[0];
    expect(partDone).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", text: "Hello brave new world", annotations: [], logprobs: [] } });
    const itemDone = ofType(events, "response.output_item.done")[0];
    const finalItem = {
      type: "message",
      id: itemId,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Hello brave new world", annotations: [], logprobs: [] }],
    };
    expect(itemDone).toMatchObject({ output_index: 0, item: finalItem });

    const final = events.at(-1)!.data.response;
    expect(final).toMatchObject({ id: created.id, status: "completed", model: MODEL, error: null, output: [finalItem] });
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 4, total_tokens: 15 });
    await expectRetrievedEquals(final);
  });

  test("the legacy /v1/responses path streams the same way", async () => {
    // ends in a character no secret starts with, so the redactor holds nothing back: one delta
    t.llm.enqueue({ text: "alias works.", chunks: 1 });
    const res = await t.api("/v1/responses", { method: "POST", json: { model: MODEL, stream: true, input: "hi" } });
    const { events } = parseSse(await res.text());
    expectWellFormed(events);
    expect(types(events)).toEqual([...TEXT_EVENTS_HEAD, "response.output_text.delta", ...TEXT_EVENTS_TAIL, "response.completed"]);
    expect(events.at(-1)!.data.response.output[0].content[0].text).toBe("alias works.");
  });

  test("external tool flow with leading prose: the order the spec gives, then the stream closes", async () => {
    t.llm.enqueue({ text: "Let me check.", chunks: 2, toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] });
    const events = await stream({ input: "weather in Paris?", tools: [weather] });
    expect(types(events)).toEqual([
      ...TEXT_EVENTS_HEAD,
      "response.output_text.delta",
      "response.output_text.delta",
      ...TEXT_EVENTS_TAIL,
      ...CALL_EVENTS,
      "response.completed",
    ]);
    // The spec's own events, in its order.
    expect(types(events).filter((x) => SPEC_EVENTS.has(x))).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_item.done",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ]);

    const [, callAdded] = ofType(events, "response.output_item.added");
    const [, callDone] = ofType(events, "response.output_item.done");
    expect(callAdded.output_index).toBe(1);
    expect(callAdded.item).toEqual({
      type: "function_call",
      id: expect.stringMatching(ITEM_ID),
      call_id: expect.stringMatching(CALL_ID),
      name: "get_weather",
      arguments: "",
      status: "in_progress",
    });
    expect(callDone.output_index).toBe(1);
    expect(callDone.item).toEqual({ ...callAdded.item, arguments: '{"city":"Paris"}', status: "completed" });
    const argDeltas = ofType(events, "response.function_call_arguments.delta");
    for (const d of argDeltas) expect(d).toMatchObject({ item_id: callAdded.item.id, output_index: 1 });
    expect(argDeltas.map((d) => d.delta).join("")).toBe('{"city":"Paris"}');
    expect(ofType(events, "response.function_call_arguments.done")[0]).toMatchObject({
      item_id: callAdded.item.id,
      output_index: 1,
      name: "get_weather",
      arguments: '{"city":"Paris"}',
    });

    const final = events.at(-1)!.data.response;
    expect(final.status).toBe("completed");
    expect(final.output.map((o: any) => o.type)).toEqual(["message", "function_call"]);
    expect(final.output[1]).toEqual(callDone.item);
    const got = await retrieve(final.id);
    expect(got.status).toBe("completed");
    expect(got.output).toEqual(final.output);

    // The resume is a new POST; streamed, it carries the answer.
    t.llm.enqueue({ text: "Sunny, 21 degrees.", chunks: 1 });
    const resumed = await stream({ previous_response_id: final.id, input: [{ type: "function_call_output", call_id: callDone.item.call_id, output: "sunny 21" }] });
    expect(types(resumed)).toEqual([...TEXT_EVENTS_HEAD, "response.output_text.delta", ...TEXT_EVENTS_TAIL, "response.completed"]);
    const answer = resumed.at(-1)!.data.response;
    expect(answer.id).not.toBe(final.id);
    expect(answer.output).toHaveLength(1);
    expect(answer.output[0].content[0].text).toBe("Sunny, 21 degrees.");
    expect(t.llm.lastChat().messages.at(-1)).toEqual({ role: "tool", tool_call_id: callDone.item.call_id, content: "sunny 21" });
  });

  test("external tool flow without prose starts with the function_call at output_index 0", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] });
    const events = await stream({ input: "Oslo?", tools: [weather] });
    expect(types(events)).toEqual(["response.created", "response.in_progress", ...CALL_EVENTS, "response.completed"]);
    expect(events[2]!.data.output_index).toBe(0);
    expect(events.at(-1)!.data.response.output).toEqual([events.at(-2)!.data.item]);
  });

  test("multi-call: the second call streams after the resume without a model call", async () => {
    const toolB = { ...weather, name: "get_time" };
    t.llm.enqueue({ toolCalls: [{ name: "get_weather", arguments: { city: "Rome" } }, { name: "get_time", arguments: { city: "Rome" } }] });
    const first = await stream({ input: "Rome?", tools: [weather, toolB] });
    const a = first.at(-1)!.data.response.output[0];
    expect(a.name).toBe("get_weather");
    const second = await stream({ previous_response_id: first.at(-1)!.data.response.id, input: [{ type: "function_call_output", call_id: a.call_id, output: "hot" }] });
    expect(types(second)).toEqual(["response.created", "response.in_progress", ...CALL_EVENTS, "response.completed"]);
    expect(second.at(-1)!.data.response.output).toMatchObject([{ type: "function_call", name: "get_time" }]);
    expect(t.llm.chatRequests()).toHaveLength(1);
  });

  test("a model failure ends the stream with response.failed carrying the error", async () => {
    t.llm.enqueue({ error: { status: 500, message: "upstream exploded" } });
    const events = await stream({ input: "fail please" });
    expect(types(events)).toEqual(["response.created", "response.in_progress", "response.failed"]);
    const final = events.at(-1)!.data.response;
    expect(final.id).toBe(events[0]!.data.response.id);
    expect(final.status).toBe("failed");
    expect(final.error).toEqual({ code: "llm_error", message: expect.stringContaining("upstream exploded"), type: "server_error", param: null });
    expect(final.output).toEqual([]);
    await expectRetrievedEquals(final);
  });

  test("a connection drop mid-answer ends the stream with response.failed and never response.completed", async () => {
    t.llm.enqueue({ dropAfterChunks: 2, text: "one two three four five" });
    const events = await stream({ input: "go" });
    expect(types(events).slice(0, 4)).toEqual(TEXT_EVENTS_HEAD);
    expect(ofType(events, "response.output_text.delta").map((d) => d.delta)).toEqual(["one ", "two "]);
    expect(types(events)).not.toContain("response.completed");
    const final = events.at(-1)!.data;
    expect(final.type).toBe("response.failed");
    expect(final.response.error.code).toBe("llm_error");
    expect((await retrieve(final.response.id)).status).toBe("failed");
  });

  test("invalid requests with stream: true get a JSON 400, not a stream", async () => {
    const res = await t.api("/api/v1/responses", {
      method: "POST",
      json: { model: MODEL, stream: true, input: "hi", tools: [{ type: "web_search" }] },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("invalid_request_error");
    expect(t.llm.chatRequests()).toHaveLength(0);
  });
});

describe("ResponseEventMapper", () => {
  test("numbers events from 0 and maps agent events to Responses events; built-in tool activity stays out", () => {
    const sent: any[] = [];
    const mapper = new ResponseEventMapper((e) => sent.push(e));
    const shell = buildResponse({ id: "resp_x", createdAt: 1, status: "in_progress", model: "m", error: null, output: [], usage: null });
    mapper.start(shell);
    const events: AgentEvent[] = [
      { type: "message.started", itemId: "item_a" },
      { type: "text.delta", itemId: "item_a", delta: "Hi " },
      { type: "text.delta", itemId: "item_a", delta: "there" },
      { type: "message.completed", item: { type: "message", id: "item_a", role: "assistant", content: "Hi there" } },
      { type: "tool.started", item: { type: "function_call", id: "item_b", call_id: "call_1", name: "builtin", arguments: "{}", external: false } },
      { type: "tool.completed", item: { type: "function_call_output", id: "item_c", call_id: "call_1", output: "x" }, isError: false },
      { type: "usage", inputTokens: 1, outputTokens: 2 },
      { type: "function_call", item: { type: "function_call", id: "item_d", call_id: "call_2", name: "ext", arguments: '{"a":1}', external: true } },
    ];
    for (const e of events) mapper.agentEvent(e);
    mapper.finish({ ...shell, status: "completed" });

    expect(sent.map((e) => e.sequence_number)).toEqual(sent.map((_, i) => i));
    expect(sent.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      ...CALL_EVENTS,
      "response.completed",
    ]);
    expect(sent.filter((e) => e.item_id === "item_a" || e.item?.id === "item_a").every((e) => e.output_index === 0)).toBe(true);
    expect(sent.filter((e) => e.item_id === "item_d" || e.item?.id === "item_d").map((e) => e.output_index)).toEqual([1, 1, 1, 1]);
    expect(JSON.stringify(sent)).not.toContain("builtin");
  });

  test("a failed response finishes with response.failed", () => {
    const sent: any[] = [];
    const mapper = new ResponseEventMapper((e) => sent.push(e));
    const failed = buildResponse({
      id: "resp_x",
      createdAt: 1,
      status: "failed",
      model: "m",
      error: { code: "llm_error", message: "boom" },
      output: [],
      usage: null,
    });
    mapper.finish(failed);
    expect(sent).toEqual([{ type: "response.failed", response: failed, sequence_number: 0 }]);
  });
});

describe("keepalive", () => {
  test("the interval is 15 seconds", () => {
    expect(KEEPALIVE_MS).toBe(15_000);
  });

  test("a response stream writes `: keepalive` on its 15 s timer and stops the timer when the turn ends", async () => {
    // Capture the keepalive timer instead of waiting 15 s for it; other timers run normally.
    const realSetInterval = globalThis.setInterval;
    const keepalives: { fn: () => void; handle: any }[] = [];
    const setSpy = spyOn(globalThis, "setInterval").mockImplementation(((fn: () => void, ms?: number, ...rest: any[]) => {
      if (ms !== KEEPALIVE_MS) return realSetInterval(fn, ms, ...rest);
      const handle = { keepalive: true };
      keepalives.push({ fn, handle });
      return handle;
    }) as any);
    const clearSpy = spyOn(globalThis, "clearInterval");
    try {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const result: TurnResult = {
        id: "resp_k",
        threadId: "t",
        createdAt: 1,
        tools: [],
        model: "m",
        status: "completed",
        error: null,
        items: [{ type: "message", id: "item_k", role: "assistant", content: "done" }],
        output: [{ type: "message", id: "item_k", role: "assistant", content: "done" }],
        usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0, reasoningTokens: 0, costUsd: 0 },
      };
      const echo = { store: true } as const;
      const run = new Run({ id: "resp_k", threadId: "t", createdAt: 1, input: [] }, { userId: "u", model: "m", echo: echo as any, tools: [] });
      const res = responseStream(run);
      void (async () => {
        await released; // a long silent tool call
        run.event({ type: "message.started", itemId: "item_k" });
        run.event({ type: "text.delta", itemId: "item_k", delta: "done" });
        run.event({ type: "message.completed", item: { type: "message", id: "item_k", role: "assistant", content: "done" } });
        run.finish(result);
      })();
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const readUntil = async (needle: string) => {
        while (!text.includes(needle)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${JSON.stringify(needle)}`);
          text += decoder.decode(value, { stream: true });
        }
      };
      await readUntil("event: response.in_progress");
      expect(keepalives).toHaveLength(1);
      keepalives[0]!.fn();
      await readUntil(": keepalive\n\n");
      keepalives[0]!.fn();
      release();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const { events, comments } = parseSse(text);
      expect(comments).toEqual([": keepalive", ": keepalive"]);
      expectWellFormed(events);
      expect(events.at(-1)!.data.type).toBe("response.completed");
      expect(clearSpy.mock.calls.some(([h]) => h === keepalives[0]!.handle)).toBe(true);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });
});
