// A turn cut short while the model is streaming ends honestly: failed with the reason, what was
// streamed kept as an incomplete message, in the reply, the stream, the store and the chat views.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chatEvents } from "../support/chat-events";
import { startTestService, type TestService } from "../support/harness";
import { openStream, text } from "../support/responses-stream";

/** A long answer the scripted LLM streams a word every `ms` milliseconds. */
const WORDS = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
const slow = (ms = 10) => ({ text: WORDS, chunkDelayMs: ms });

async function getResponse(t: TestService, id: string) {
  const res = await t.api(`/api/v1/responses/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

async function history(t: TestService, threadId: string) {
  const res = await t.api(`/api/chat/history?thread_id=${threadId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

/** A partial answer: a non-empty prefix of the whole, well short of it. */
function expectPartial(partial: string, atLeast: string) {
  expect(partial.length).toBeGreaterThan(0);
  expect(WORDS.startsWith(partial)).toBe(true);
  expect(partial.startsWith(atLeast)).toBe(true);
  expect(partial.length).toBeLessThan(WORDS.length / 2);
}

/** The one assistant message of a failed response: incomplete, holding exactly `partial`. */
function expectIncompleteOutput(response: any, partial: string) {
  expect(response.output).toHaveLength(1);
  expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "incomplete" });
  expect(response.output[0].content[0].text).toBe(partial);
}

describe("cut short while the model streams", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ turnTimeoutMs: 400 });
  });
  afterAll(() => t.stop());

  test("cancel after several deltas: failed/cancelled everywhere, the streamed text kept as incomplete", async () => {
    t.llm.enqueue(slow());
    const stream = await openStream(t, { model: "m", input: "tell me everything" });
    const id = (await stream.until("response.created")).data.response.id as string;
    const before = await stream.deltas(20);

    const res = await t.api(`/api/v1/responses/${id}/cancel`, { method: "POST" });
    const reply = (await res.json()) as any;
    expect(reply).toMatchObject({ id, status: "failed", model: "reborn", error: { code: "cancelled" } });
    const partial = reply.output[0].content[0].text as string;
    expectPartial(partial, before);
    expectIncompleteOutput(reply, partial);

    const rest = await stream.rest();
    const types = rest.map((e) => e.data.type);
    expect(types).not.toContain("response.completed");
    expect(types.at(-1)).toBe("response.failed");
    const done = rest.find((e) => e.data.type === "response.output_item.done")!;
    expect(done.data.item.status).toBe("incomplete");
    const failed = rest.at(-1)!.data.response;
    expect(failed.error.code).toBe("cancelled");
    expectIncompleteOutput(failed, partial);
    // the deltas the client got add up to what is stored
    expect(text(stream.seen)).toBe(partial);

    const stored = await getResponse(t, id);
    expect(stored.status).toBe("failed");
    expect(stored.error.code).toBe("cancelled");
    expectIncompleteOutput(stored, partial);

    // the thread goes on, and the model sees what it had said before the cut
    t.llm.enqueue({ text: "Resuming." });
    const next = await t.respond({ model: "m", input: "go on", previous_response_id: id });
    expect(next.body.status).toBe("completed");
    const sent = t.llm.lastChat().messages;
    expect(sent.at(-2)).toEqual({ role: "assistant", content: partial });
  });

  test("a non-streaming turn past its timeout while the model streams: turn_timeout with the partial text", async () => {
    t.llm.enqueue(slow(20));
    const started = Date.now();
    const r = await t.respond({ model: "m", input: "a long essay" });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("turn_timeout");
    const partial = r.body.output[0].content[0].text as string;
    expectPartial(partial, "word0");
    expectIncompleteOutput(r.body, partial);
    const stored = await getResponse(t, r.body.id);
    expect(stored.error.code).toBe("turn_timeout");
    expectIncompleteOutput(stored, partial);
  });

  test("the model's stream breaks mid-answer: llm_error, no retry, the partial text kept", async () => {
    t.llm.reset();
    t.llm.enqueue({ dropAfterChunks: 8, text: WORDS });
    const r = await t.respond({ model: "m", input: "break" });
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("llm_error");
    expect(r.body.error.message).toContain("stopped in the middle of its answer");
    expectIncompleteOutput(r.body, WORDS.split(" ").slice(0, 8).join(" ") + " ");
    expect(t.llm.chatRequests()).toHaveLength(1);
  });

  test("a stream that ends cleanly without a finish reason is not a finished answer", async () => {
    t.llm.enqueue({ endAfterChunks: 5, text: WORDS });
    const r = await t.respond({ model: "m", input: "end early" });
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("llm_error");
    expect(r.body.error.message).toContain("closed before the answer was complete");
    expect(r.body.output[0].status).toBe("incomplete");
  });
});

describe("chat endpoints", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { TURN_TIMEOUT_S: "1" } });
  });
  afterAll(() => t.stop());

  test("/api/chat/send has the TURN_TIMEOUT_S timeout; the events and the history say so", async () => {
    const events = await chatEvents(t);
    t.llm.enqueue(slow(20));
    const res = await t.api("/api/chat/send", { method: "POST", json: { content: "write a novel" } });
    expect(res.status).toBe(202);
    const { thread_id, response_id } = (await res.json()) as any;
    await events.until((e) => e.type === "message.delta");
    const end = await events.until((e) => e.type === "turn.completed" && e.response_id === response_id);
    expect(end.status).toBe("failed");
    expect(end.error.code).toBe("turn_timeout");
    const streamed = events.seen.filter((e) => e.type === "message.delta" && e.response_id === response_id).map((e) => e.delta).join("");
    expectPartial(streamed, "word0");
    const h = await history(t, thread_id);
    const answer = h.items.find((i: any) => i.type === "message" && i.role === "assistant");
    expect(answer.content).toBe(streamed);
    expect(answer.status).toBe("incomplete");
    void events.close();
  });

  test("a chat turn stopped by the user (the web UI's Stop) is cancelled with the text so far", async () => {
    const events = await chatEvents(t);
    t.llm.enqueue(slow());
    const res = await t.api("/api/chat/send", { method: "POST", json: { content: "long story" } });
    const { thread_id, response_id } = (await res.json()) as any;
    await events.until((e) => e.type === "message.delta");
    await events.until(() => events.seen.filter((e) => e.type === "message.delta").length >= 10);
    const cancel = await t.api(`/api/v1/responses/${response_id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    const end = await events.until((e) => e.type === "turn.completed");
    expect(end).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    const h = await history(t, thread_id);
    expect(h.items.findLast((i: any) => i.type === "message")).toMatchObject({ role: "assistant", status: "incomplete" });
    expect(h.items.at(-1)).toMatchObject({ type: "turn_error", code: "cancelled" });
    void events.close();
  });
});

describe("shutdown", () => {
  test("a turn still waiting for its thread when the service stops ends shutdown too, and the stop completes", async () => {
    const t = await startTestService({ env: { SHUTDOWN_GRACE_MS: "100" } });
    const first = await t.respond({ model: "m", input: "start a thread" });
    t.llm.enqueue(slow(), { text: "should never be asked" });
    const streaming = await openStream(t, { model: "m", input: "long", previous_response_id: first.body.id });
    const a = (await streaming.until("response.created")).data.response.id as string;
    await streaming.deltas(5);
    // the same thread: it waits for the first turn (inside the service once the agent has it)
    const agent = t.service.services.agent;
    const inside = Promise.withResolvers<void>();
    const start = agent.start.bind(agent);
    agent.start = (req) => (inside.resolve(), start(req));
    const waiting = t.respond({ model: "m", input: "queued", previous_response_id: first.body.id });
    await inside.promise;
    const asked = t.llm.chatRequests().length;
    await t.service.stop();
    const b = await waiting;
    expect(b.body).toMatchObject({ status: "failed", error: { code: "shutdown" } });
    expect(t.llm.chatRequests()).toHaveLength(asked);
    const again = await startTestService({ keepHome: t.home, llm: t.llm });
    try {
      for (const id of [a, b.body.id]) expect(await getResponse(again, id)).toMatchObject({ status: "failed", error: { code: "shutdown" } });
    } finally {
      await again.stop();
      await t.llm.close();
    }
  });

  test("a streaming turn at stop ends with response.failed/shutdown and is stored so", async () => {
    const t = await startTestService({ env: { SHUTDOWN_GRACE_MS: "100" } });
    t.llm.enqueue(slow());
    const stream = await openStream(t, { model: "m", input: "keep talking" });
    const id = (await stream.until("response.created")).data.response.id as string;
    await stream.deltas(10);
    const stopping = t.service.stop();
    const last = (await stream.rest()).at(-1)!;
    await stopping;
    expect(last.data.type).toBe("response.failed");
    expect(last.data.response.error.code).toBe("shutdown");
    const partial = text(stream.seen);
    expectIncompleteOutput(last.data.response, partial);

    // the same home, started again: the turn is stored as it ended
    const again = await startTestService({ keepHome: t.home, llm: t.llm });
    try {
      const stored = await getResponse(again, id);
      expect(stored.status).toBe("failed");
      expect(stored.error.code).toBe("shutdown");
      expectIncompleteOutput(stored, partial);
    } finally {
      await again.stop();
      await t.llm.close();
    }
  });
});
