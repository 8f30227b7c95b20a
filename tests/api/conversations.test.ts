// The Conversations API (a conversation is a thread), responses.create({conversation}), and
// deleting a thread through either API.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { gates, items, responses } from "../support/tables";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());
beforeEach(() => t.llm.reset());

const MODEL = "m";
const json = async (res: Response | Promise<Response>) => {
  const r = await res;
  return { status: r.status, body: (await r.json()) as any };
};
const post = (path: string, body: unknown, token?: string) => json(t.api(path, { method: "POST", json: body, token }));
const get = (path: string, token?: string) => json(t.api(path, { token }));
const uuidOf = (conv: string) => conv.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
const sent = () => (t.llm.lastChat().messages as any[]).slice(1);

describe("conversations", () => {
  test("DELETE an item: gone from the list and from what the model sees; the conversation comes back", async () => {
    const conv = (
      await post("/api/v1/conversations", {
        items: [
          { role: "user", content: "My secret word is plum." },
          { role: "user", content: "I like tea." },
        ],
      })
    ).body;
    const listed = (await get(`/api/v1/conversations/${conv.id}/items?order=asc`)).body.data;
    for (const prefix of ["/api/v1", "/v1"]) {
      const res = await json(t.api(`${prefix}/conversations/${conv.id}/items/${listed[0].id}`, { method: "DELETE" }));
      expect(res.status).toBe(prefix === "/api/v1" ? 200 : 404); // the second time it is gone
      if (res.status === 200) expect(res.body).toEqual({ ...conv, metadata: {} });
    }
    expect((await get(`/api/v1/conversations/${conv.id}/items`)).body.data.map((i: any) => i.content[0].text)).toEqual(["I like tea."]);
    t.llm.enqueue({ text: "ok" });
    await post("/api/v1/responses", { model: MODEL, conversation: conv.id, input: "What do you know?" });
    expect(JSON.stringify(sent())).not.toContain("plum");
    // unknown item, another user's conversation: 404
    expect((await json(t.api(`/api/v1/conversations/${conv.id}/items/item_nope`, { method: "DELETE" }))).status).toBe(404);
    const other = await t.createUser();
    expect((await json(t.api(`/api/v1/conversations/${conv.id}/items/${listed[1].id}`, { method: "DELETE", token: other.token }))).status).toBe(404);
  });

  test("DELETE the call a conversation waits on is a 400; its answer comes first", async () => {
    const tools = [{ type: "function", name: "lookup", description: "l", parameters: { type: "object", properties: {} } }];
    t.llm.enqueue({ toolCalls: [{ name: "lookup", arguments: {} }] });
    const r = await post("/api/v1/responses", { model: MODEL, input: "look it up", tools });
    const conv = `conv_${r.body.id.slice(37)}`;
    const call = r.body.output.find((o: any) => o.type === "function_call");
    const res = await json(t.api(`/api/v1/conversations/${conv}/items/${call.id}`, { method: "DELETE" }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(call.call_id);
  });

  test("create with items and metadata, retrieve, update, list items", async () => {
    const created = await post("/api/v1/conversations", {
      metadata: { topic: "travel" },
      items: [
        { type: "message", role: "user", content: "I am going to Lisbon." },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Nice!" }] },
      ],
    });
    expect(created.status).toBe(200);
    const conv = created.body;
    expect(conv).toEqual({ id: expect.stringMatching(/^conv_[0-9a-f]{32}$/), object: "conversation", created_at: expect.any(Number), metadata: { topic: "travel" } });
    expect((await get(`/api/v1/conversations/${conv.id}`)).body).toEqual(conv);
    const updated = await post(`/api/v1/conversations/${conv.id}`, { metadata: { topic: "work" } });
    expect(updated.body).toEqual({ ...conv, metadata: { topic: "work" } });

    const list = (await get(`/api/v1/conversations/${conv.id}/items`)).body;
    expect(list).toMatchObject({ object: "list", has_more: false });
    expect(list.data.map((i: any) => [i.role, i.content[0].text])).toEqual([
      ["assistant", "Nice!"],
      ["user", "I am going to Lisbon."],
    ]);
    const asc = (await get(`/api/v1/conversations/${conv.id}/items?order=asc&limit=1`)).body;
    expect(asc.data[0].content[0].text).toBe("I am going to Lisbon.");
    expect(asc.has_more).toBe(true);
    const one = await get(`/api/v1/conversations/${conv.id}/items/${asc.data[0].id}`);
    expect(one.body).toEqual(asc.data[0]);
    expect((await get(`/api/v1/conversations/${conv.id}/items/item_nope`)).status).toBe(404);
  });

  test("responses.create({conversation}) continues the thread; output is this turn's; items grow", async () => {
    const conv = (await post("/api/v1/conversations", { items: [{ role: "user", content: "My name is Ada." }] })).body;
    t.llm.enqueue({ text: "Hello Ada." });
    const first = await post("/api/v1/responses", { model: MODEL, conversation: conv.id, input: "What is my name?" });
    expect(first.body).toMatchObject({ status: "completed", conversation: { id: conv.id } });
    expect(first.body.output).toHaveLength(1);
    expect(sent()).toEqual([
      { role: "user", content: "My name is Ada." },
      { role: "user", content: "What is my name?" },
    ]);
    expect(first.body.id.slice(37)).toBe(conv.id.slice(5)); // the response id embeds the thread
    const second = await post("/api/v1/responses", { model: MODEL, conversation: { id: conv.id }, input: "And again?" });
    expect(second.body.status).toBe("completed");
    expect(sent().map((m) => m.content)).toEqual(["My name is Ada.", "What is my name?", "Hello Ada.", "And again?"]);
    const added = await post(`/api/v1/conversations/${conv.id}/items`, { items: [{ role: "user", content: "a note" }] });
    expect(added.body.data.map((i: any) => i.content[0].text)).toEqual(["a note"]);
    const list = (await get(`/api/v1/conversations/${conv.id}/items?order=asc`)).body;
    expect(list.data.map((i: any) => i.content[0].text)).toEqual(["My name is Ada.", "What is my name?", "Hello Ada.", "And again?", expect.any(String), "a note"]);
  });

  test("the web UI's threads are conversations too", async () => {
    const chat = await post("/api/chat", { message: "from the web UI" });
    const conv = `conv_${chat.body.thread_id.replaceAll("-", "")}`;
    const got = await get(`/api/v1/conversations/${conv}`);
    expect(got.body).toMatchObject({ id: conv, object: "conversation", metadata: {} });
    const list = (await get(`/api/v1/conversations/${conv}/items?order=asc`)).body;
    expect(list.data[0].content[0].text).toBe("from the web UI");
  });

  test("unknown, malformed and other users' conversations", async () => {
    const conv = (await post("/api/v1/conversations", {})).body;
    const other = await t.createUser();
    for (const path of [`/api/v1/conversations/${conv.id}`, `/api/v1/conversations/conv_${"0".repeat(32)}`, "/api/v1/conversations/conv_x"]) {
      const r = await get(path, other.token);
      expect(r.status).toBe(404);
      expect(r.body.error.type).toBe("not_found_error");
    }
    expect((await post(`/api/v1/conversations/${conv.id}/items`, { items: [{ role: "user", content: "x" }] }, other.token)).status).toBe(404);
    // a turn on someone else's conversation fails like a cross-user previous_response_id, revealing nothing
    const turn = await post("/api/v1/responses", { model: MODEL, conversation: conv.id, input: "hi" }, other.token);
    expect(turn.body).toMatchObject({ status: "failed", error: { code: "not_found", type: "not_found_error" } });
    expect((await get(`/api/v1/conversations/${conv.id}/items`)).body.data).toEqual([]);
  });

  test("bad bodies are 400 envelopes and change nothing", async () => {
    const conv = (await post("/api/v1/conversations", { metadata: { a: "b" } })).body;
    const cases: [string, unknown][] = [
      ["/api/v1/conversations", { items: "hi" }],
      ["/api/v1/conversations", { items: [{ type: "web_search_call" }] }],
      ["/api/v1/conversations", { items: Array.from({ length: 21 }, () => ({ role: "user", content: "x" })) }],
      ["/api/v1/conversations", { metadata: { k: 1 } }],
      [`/api/v1/conversations/${conv.id}`, { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }],
      [`/api/v1/conversations/${conv.id}`, {}],
      [`/api/v1/conversations/${conv.id}/items`, { items: [] }],
      [`/api/v1/conversations/${conv.id}/items`, {}],
    ];
    const threads = async () => ((await get("/api/chat/threads")).body.threads as unknown[]).length;
    const before = await threads();
    for (const [path, body] of cases) {
      const r = await post(path, body);
      expect({ path, status: r.status, type: r.body.error?.type }).toEqual({ path, status: 400, type: "invalid_request_error" });
    }
    expect(await threads()).toBe(before);
    expect((await get(`/api/v1/conversations/${conv.id}`)).body.metadata).toEqual({ a: "b" });
    expect((await get(`/api/v1/conversations/${conv.id}/items`)).body.data).toEqual([]);
  });

  test("items cannot be added while the conversation waits for a tool's output", async () => {
    const tools = [{ type: "function", name: "lookup", description: "l", parameters: { type: "object", properties: {} } }];
    t.llm.enqueue({ toolCalls: [{ name: "lookup", arguments: {} }] });
    const waiting = await post("/api/v1/responses", { model: MODEL, input: "look it up", tools });
    const conv = `conv_${waiting.body.id.slice(37)}`;
    const r = await post(`/api/v1/conversations/${conv}/items`, { items: [{ role: "user", content: "x" }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain(waiting.body.output[0].call_id);
  });
});

describe("deleting a thread", () => {
  test("DELETE /api/v1/conversations/{id}: its responses, items and gate go; then 404", async () => {
    const tools = [{ type: "function", name: "lookup", description: "l", parameters: { type: "object", properties: {} } }];
    t.llm.enqueue({ toolCalls: [{ name: "lookup", arguments: {} }] });
    const r = await post("/api/v1/responses", { model: MODEL, input: "look it up", tools });
    const conv = `conv_${r.body.id.slice(37)}`;
    const db = t.service.services.db;
    expect(await db.select().from(gates).where(eq(gates.threadId, uuidOf(conv)))).toHaveLength(1);
    const del = await json(t.api(`/api/v1/conversations/${conv}`, { method: "DELETE" }));
    expect(del).toEqual({ status: 200, body: { id: conv, object: "conversation.deleted", deleted: true } });
    expect((await get(`/api/v1/conversations/${conv}`)).status).toBe(404);
    expect((await get(`/api/v1/responses/${r.body.id}`)).status).toBe(404);
    expect(await db.select().from(gates).where(eq(gates.threadId, uuidOf(conv)))).toEqual([]);
    expect(await db.select().from(items).where(eq(items.threadId, uuidOf(conv)))).toEqual([]);
    expect(await db.select().from(responses).where(eq(responses.threadId, uuidOf(conv)))).toEqual([]);
    expect((await t.api(`/api/v1/conversations/${conv}`, { method: "DELETE" })).status).toBe(404);
  });

  test("DELETE /api/chat/threads/{id}: 204, the thread's responses are 404 after; not another user's", async () => {
    const chat = await post("/api/chat", { message: "delete this thread" });
    const other = await t.createUser();
    const theirs = await t.api(`/api/chat/threads/${chat.body.thread_id}`, { method: "DELETE", token: other.token });
    expect(theirs.status).toBe(404);
    const res = await t.api(`/api/chat/threads/${chat.body.thread_id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await get(`/api/v1/responses/${chat.body.response_id}`)).status).toBe(404);
    expect((await get(`/api/chat/history?thread_id=${chat.body.thread_id}`)).status).toBe(404);
    expect(((await get("/api/chat/threads")).body.threads as any[]).some((th) => th.id === chat.body.thread_id)).toBe(false);
    expect((await t.api(`/api/chat/threads/${chat.body.thread_id}`, { method: "DELETE" })).status).toBe(404);
    expect((await t.api("/api/chat/threads/not-a-uuid", { method: "DELETE" })).status).toBe(400);
  });

  test("a running turn on the thread ends first, failed with not_found, and the thread is gone after", async () => {
    const first = await post("/api/v1/responses", { model: MODEL, input: "start" });
    t.llm.enqueue({ hang: true });
    const n = t.llm.chatRequests().length;
    const running = post("/api/v1/responses", { model: MODEL, input: "hang", previous_response_id: first.body.id });
    await t.llm.waitForRequests(n + 1);
    const conv = `conv_${first.body.id.slice(37)}`;
    expect((await t.api(`/api/v1/conversations/${conv}`, { method: "DELETE" })).status).toBe(200);
    expect((await running).body).toMatchObject({ status: "failed", error: { code: "not_found" } });
    expect((await get(`/api/v1/responses/${first.body.id}`)).status).toBe(404);
    expect((await get(`/api/v1/conversations/${conv}`)).status).toBe(404);
  });
});
