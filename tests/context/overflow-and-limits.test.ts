// What happens at the edges of the context window, end to end: a provider whose window is
// smaller than configured (overflow → harder compaction → one retry), one that overflows
// whatever it gets (a clear failure), an input that could never fit (400, nothing stored),
// and manual compaction over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";
import { charTokens, echoStep, startScriptedLLM, type ScriptedLLM, type Step } from "../support/scripted-llm";

const FILLER = "Notes about the shed roof, the gutters, and which tiles to order next spring. ";
type Body = { messages: { role: string; content: string | null }[]; tools?: unknown[] };
const isSummary = (b: Body) => !b.tools?.length;
const summariser = (body: Body): Step => (isSummary(body) ? { text: "Summary: roof, gutters, tiles." } : echoStep(body));
const threadOf = (responseId: string) => {
  const h = responseId.slice(37);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

describe("a provider whose window is smaller than configured", () => {
  let llm: ScriptedLLM;
  let t: TestService;
  beforeAll(async () => {
    // the service believes 16k; the model takes 5,000 tokens
    llm = await startScriptedLLM({ contextWindow: 5000, countTokens: charTokens });
    llm.respondWith(summariser);
    t = await startTestService({ llm, env: { LLM_CONTEXT_WINDOW: "16384", LLM_MAX_OUTPUT_TOKENS: "1024", LLM_MEMORY_FLUSH: "false" } });
  });
  afterAll(async () => {
    await t.stop();
    await llm.close();
  });

  test("the refused step is fitted harder and asked once more; the turn completes", async () => {
    let prev: string | undefined;
    let overflowedAt = -1;
    for (let i = 0; i < 80 && overflowedAt < 0; i++) {
      const before = llm.chatRequests().length;
      const r = await t.respond({ model: "m", input: `Turn ${i}: ${FILLER}`, previous_response_id: prev });
      expect(r.body.status).toBe("completed");
      expect(r.body.output[0].content[0].text).toBe(`You said: Turn ${i}: ${FILLER}`);
      prev = r.body.id;
      const mine = llm.chatRequests().slice(before).map((q) => q.body as Body);
      if (mine.some((b) => charTokens(b) > 5000)) overflowedAt = i;
    }
    expect(overflowedAt).toBeGreaterThan(0);
    const bodies = llm.chatRequests().map((q) => q.body as Body);
    const refused = bodies.findIndex((b) => charTokens(b) > 5000);
    // after the refusal: the summary, then the same step again, smaller
    expect(isSummary(bodies[refused + 1]!)).toBe(true);
    const retried = bodies[refused + 2]!;
    expect(charTokens(retried)).toBeLessThanOrEqual(5000);
    expect(retried.messages.at(-1)).toEqual(bodies[refused]!.messages.at(-1)!);
    expect(retried.messages[0]!.content).toContain("Summary: roof, gutters, tiles.");
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadOf(prev!)}`)).json()) as { items: { type: string; trigger?: string }[] };
    expect(history.items.find((i) => i.type === "compaction")).toMatchObject({ trigger: "overflow" });
  });
});

/** llama.cpp's answer to a prompt longer than its context. */
const refuse = (body: Body): Step =>
  isSummary(body) ? { text: "Summary." } : { error: { status: 400, message: "the request exceeds the available context size, try increasing the context size", type: "exceed_context_size_error" } };

describe("a provider that refuses every step as too long", () => {
  let llm: ScriptedLLM;
  let t: TestService;
  beforeAll(async () => {
    llm = await startScriptedLLM();
    t = await startTestService({ llm, env: { LLM_MEMORY_FLUSH: "false" } });
  });
  afterAll(async () => {
    await t.stop();
    await llm.close();
  });

  test("the turn fails with llm_error after one harder retry, saying why; the thread goes on", async () => {
    llm.respondWith(echoStep);
    let prev: string | undefined;
    for (let i = 0; i < 20; i++) prev = (await t.respond({ model: "m", input: `Turn ${i}: ${FILLER.repeat(8)}`, previous_response_id: prev })).body.id;
    llm.reset();
    llm.respondWith(refuse);
    const r = await t.respond({ model: "m", input: "hello", previous_response_id: prev });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("failed");
    expect(r.body.error.code).toBe("llm_error");
    expect(r.body.error.message).toContain("exceeds the available context size");
    const bodies = llm.chatRequests().map((q) => q.body as Body);
    expect(bodies.map((b) => (isSummary(b) ? "summary" : "step"))).toEqual(["step", "summary", "step"]);
    expect(charTokens(bodies[2])).toBeLessThan(charTokens(bodies[0]) * 0.8);
    llm.respondWith(echoStep);
    const next = await t.respond({ model: "m", input: "again", previous_response_id: r.body.id });
    expect(next.body.status).toBe("completed");
  });

  test("with nothing to summarise it is not retried", async () => {
    llm.reset();
    llm.respondWith(refuse);
    const r = await t.respond({ model: "m", input: "hello" });
    expect(r.body.error.message).toContain("exceeds the available context size");
    expect(llm.chatRequests()).toHaveLength(1);
  });
});

describe("an input larger than the window", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { LLM_CONTEXT_WINDOW: "4096", LLM_MAX_OUTPUT_TOKENS: "512" } });
  });
  afterAll(() => t.stop());

  test("is a 400 envelope before anything is stored or sent, on every channel", async () => {
    const huge = "word ".repeat(6000);
    const r = await t.respond({ model: "m", input: huge });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: "invalid_request_error", code: "context_length_exceeded" });
    expect(r.body.error.message).toContain("LLM_CONTEXT_WINDOW 4096");
    const streamed = await t.respond({ model: "m", input: huge, stream: true });
    expect(streamed.status).toBe(400);
    const chat = await t.api("/api/chat", { method: "POST", json: { message: huge } });
    expect(chat.status).toBe(400);
    const ok = await t.respond({ model: "m", input: "short" });
    const onThread = await t.respond({ model: "m", input: huge, previous_response_id: ok.body.id });
    expect(onThread.status).toBe(400);
    expect(t.llm.chatRequests()).toHaveLength(1);
    const threads = (await (await t.api("/api/chat/threads")).json()) as { threads: unknown[] };
    expect(threads.threads).toHaveLength(1);
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadOf(ok.body.id)}`)).json()) as { items: unknown[] };
    expect(history.items).toHaveLength(2);
  });
});

describe("manual compaction: POST /api/chat/threads/{id}/compact", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    t.llm.respondWith((body: Body) => (isSummary(body) ? { text: "Summary: three turns about the roof." } : body.tools?.length === 1 ? { text: "nothing to save" } : echoStep(body)));
  });
  afterAll(() => t.stop());

  test("summarises all turns but the latest; history marks the place; the next turn carries the summary", async () => {
    let threadId: string | undefined;
    for (const m of ["one", "two", "three"]) {
      const r = (await (await t.api("/api/chat", { method: "POST", json: { message: m, thread_id: threadId } })).json()) as { thread_id: string };
      threadId = r.thread_id;
    }
    const res = await t.api(`/api/chat/threads/${threadId}/compact`, { method: "POST" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { thread_id: string; compacted: boolean; compaction: Record<string, unknown> };
    expect(body).toMatchObject({ thread_id: threadId, compacted: true, compaction: { type: "compaction", summary: "Summary: three turns about the roof.", summarised_items: 4, trigger: "manual", memory_notes: 0 } });
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as { items: { type: string; content?: string }[] };
    expect(history.items.map((i) => i.content ?? i.type)).toEqual(["one", "You said: one", "two", "You said: two", "compaction", "three", "You said: three"]);
    await t.api("/api/chat", { method: "POST", json: { message: "four", thread_id: threadId } });
    const last = t.llm.lastChat() as Body;
    expect(last.messages[0]!.content).toContain("Summary: three turns about the roof.");
    expect(last.messages.slice(1).map((m) => m.content)).toEqual(["three", "You said: three", "four"]);
    // the memory step ran first (it had nothing to save)
    const flushes = t.llm.chatRequests().filter((r) => (r.body as Body).tools?.length === 1);
    expect(flushes).toHaveLength(1);
  });

  test("a summary the model fails to write is a 502 naming the compaction model, and nothing is stored", async () => {
    const threadId = ((await (await t.api("/api/chat", { method: "POST", json: { message: "five" } })).json()) as { thread_id: string }).thread_id;
    await t.api("/api/chat", { method: "POST", json: { message: "six", thread_id: threadId } });
    t.llm.respondWith((body: Body) => (isSummary(body) ? { error: { status: 404, message: "model 'cheap' not found" } } : body.tools?.length === 1 ? { text: "nothing to save" } : echoStep(body)));
    const res = await t.api(`/api/chat/threads/${threadId}/compact`, { method: "POST" });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ type: "server_error", code: "llm_error" });
    expect(body.error.message).toContain("the summary failed");
    expect(body.error.message).toContain("model 'cheap' not found");
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as { items: { type: string }[] };
    expect(history.items.some((i) => i.type === "compaction")).toBe(false);
  });

  test("a thread of one turn has nothing to compact; bad ids are 400, others' threads 404", async () => {
    const r = (await (await t.api("/api/chat", { method: "POST", json: { message: "only" } })).json()) as { thread_id: string };
    const res = await t.api(`/api/chat/threads/${r.thread_id}/compact`, { method: "POST" });
    expect(await res.json()).toEqual({ thread_id: r.thread_id, compacted: false, compaction: null });
    expect((await t.api("/api/chat/threads/nope/compact", { method: "POST" })).status).toBe(400);
    const other = await t.createUser();
    const forbidden = await t.api(`/api/chat/threads/${r.thread_id}/compact`, { method: "POST", token: other.token });
    expect(forbidden.status).toBe(404);
    expect((await t.api(`/api/chat/threads/${r.thread_id}/compact`, { method: "POST", token: null })).status).toBe(401);
  });
});
