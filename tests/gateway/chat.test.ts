import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { KEEPALIVE_MS } from "../../src/http/sse";
import { Type } from "@sinclair/typebox";
import { defineTool } from "../../src/tools/tool";
import { getResponse } from "../../src/store/conversations";
import { chatEvents } from "../support/chat-events";
import { startTestService, type TestService } from "../support/harness";

const events = chatEvents;

const post = async (t: TestService, path: string, json: unknown, token = t.token) => {
  const res = await t.api(path, { method: "POST", json, token });
  return { status: res.status, body: (await res.json()) as any };
};

describe("local chat endpoints", () => {
  let t: TestService;
  let ran = 0;
  beforeAll(async () => {
    t = await startTestService({ env: { TOOLS_ASK: "guarded_tool" } });
    const params = Type.Object({ q: Type.String() });
    t.service.services.tools.register(defineTool({ name: "lookup_tool", description: "looks up", parameters: params, execute: async (a) => `found ${a.q}` }));
    t.service.services.tools.register(
      defineTool({ name: "guarded_tool", description: "needs approval", parameters: params, execute: async () => `ran ${++ran}` }),
    );
  });
  afterAll(() => t.stop());

  test("POST /api/chat waits for the answer and continues threads", async () => {
    t.llm.enqueue({ text: "First answer." }, { text: "Second answer." });
    const a = await post(t, "/api/chat", { message: "hello" });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ response: "First answer.", status: "completed", error: null });
    expect(a.body.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.body.response_id.slice(37)).toBe(a.body.thread_id.replaceAll("-", ""));
    const b = await post(t, "/api/chat", { message: "again", thread_id: a.body.thread_id });
    expect(b.body.response).toBe("Second answer.");
    expect(b.body.thread_id).toBe(a.body.thread_id);
    expect(t.llm.lastChat().messages.map((m: any) => m.content)).toContain("First answer.");
  });

  test("POST /api/chat/send answers 202 and the answer streams on /api/chat/events", async () => {
    const stream = await events(t);
    t.llm.enqueue({ text: "Streamed **answer** here.", chunks: 4 });
    const sent = await post(t, "/api/chat/send", { content: "stream please" });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ status: "accepted" });
    const done = await stream.until((e) => e.type === "turn.completed" && e.response_id === sent.body.response_id);
    expect(done).toMatchObject({ status: "completed", error: null, waiting: null, thread_id: sent.body.thread_id });
    const mine = stream.seen.filter((e) => e.response_id === sent.body.response_id);
    // the deltas that come within 50 ms of each other arrive together (the first at once)
    const kinds = mine.map((e) => e.type).filter((type, i, all) => type !== "message.delta" || all[i - 1] !== "message.delta");
    expect(kinds).toEqual(["turn.started", "message.started", "message.delta", "message.completed", "turn.completed"]);
    expect(mine[0]).toMatchObject({ type: "turn.started", channel: "chat" });
    expect(mine.filter((e) => e.type === "message.delta").map((e) => e.delta).join("")).toBe("Streamed **answer** here.");
    await stream.close();
    const history = (await (await t.api(`/api/chat/history?thread_id=${sent.body.thread_id}`)).json() as any);
    expect(history.items.map((i: any) => [i.role, i.content])).toEqual([
      ["user", "stream please"],
      ["assistant", "Streamed **answer** here."],
    ]);
  });

  test("POST /api/chat/send stores the thread, the message and the response before its 202", async () => {
    const stream = await events(t);
    t.llm.enqueue({ text: "one two three four five six seven eight", chunkDelayMs: 30 });
    const sent = await post(t, "/api/chat/send", { content: "keep this safe" });
    expect(sent.status).toBe(202);
    await t.llm.waitForTextChunks(t.llm.textChunksSent() + 2);
    // while the model streams, the store holds what a kill would leave: the message, and the response failed/shutdown
    const history = (await (await t.api(`/api/chat/history?thread_id=${sent.body.thread_id}`)).json()) as any;
    expect(history.items.map((i: any) => [i.role, i.content])).toEqual([["user", "keep this safe"]]);
    const stored = await getResponse(t.service.services.db, sent.body.response_id);
    expect(stored).toMatchObject({ status: "failed", error: { code: "shutdown" } });
    // then the answer replaces it
    await stream.until((e) => e.type === "turn.completed" && e.response_id === sent.body.response_id);
    await stream.close();
    expect((await getResponse(t.service.services.db, sent.body.response_id))?.status).toBe("completed");
    const after = (await (await t.api(`/api/chat/history?thread_id=${sent.body.thread_id}`)).json()) as any;
    expect(after.items.map((i: any) => [i.role, i.content])).toEqual([
      ["user", "keep this safe"],
      ["assistant", "one two three four five six seven eight"],
    ]);
  });

  test("tool calls appear as events and in the history with their output", async () => {
    const stream = await events(t);
    t.llm.enqueue({ toolCalls: [{ name: "lookup_tool", arguments: { q: "tomatoes" } }] }, { text: "Done looking." });
    const sent = await post(t, "/api/chat/send", { content: "look it up" });
    await stream.until((e) => e.type === "turn.completed" && e.response_id === sent.body.response_id);
    const started = stream.seen.find((e) => e.type === "tool.started");
    const completed = stream.seen.find((e) => e.type === "tool.completed");
    expect(started).toMatchObject({ name: "lookup_tool", arguments: '{"q":"tomatoes"}' });
    expect(completed.call_id).toBe(started.call_id);
    // people get the tool's output itself, not the <tool_output> wrapper the model sees
    expect(completed.output).toBe("found tomatoes");
    expect(completed.is_error).toBe(false);
    await stream.close();
    const history = (await (await t.api(`/api/chat/history?thread_id=${sent.body.thread_id}`)).json() as any);
    const call = history.items.find((i: any) => i.type === "tool_call");
    expect(call).toMatchObject({ name: "lookup_tool", external: false });
    expect(call.output).toBe("found tomatoes");
    // while the model got it wrapped as untrusted data
    const toModel = t.llm.lastChat().messages.find((m: any) => m.role === "tool");
    expect(toModel.content).toContain('<tool_output tool="lookup_tool" trust="untrusted">');
  });

  test("threads carry their channel and ISO 8601 times", async () => {
    t.llm.enqueue({ text: "chat" }, { text: "api" });
    const before = Date.now() - 1000;
    const chat = await post(t, "/api/chat", { message: "from the chat" });
    const api = await t.respond({ model: "m", input: "from the API" });
    const threads = ((await (await t.api("/api/chat/threads")).json()) as any).threads;
    const byId = (id: string) => threads.find((x: any) => x.id === id);
    expect(byId(chat.body.thread_id).channel).toBe("chat");
    expect(byId(api.body.id.slice(37).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-")).channel).toBe("responses");
    for (const th of threads) {
      for (const time of [th.created_at, th.updated_at]) {
        expect(new Date(time).toISOString()).toBe(time);
        expect(Date.parse(time)).toBeGreaterThan(before - 86_400_000);
      }
    }
    expect(Date.parse(byId(chat.body.thread_id).created_at)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
  });

  test("a tool that needs approval pauses the turn: event, thread list and history say so", async () => {
    const stream = await events(t);
    t.llm.enqueue({ toolCalls: [{ name: "guarded_tool", arguments: { q: "x" } }] });
    const sent = await post(t, "/api/chat/send", { content: "do the guarded thing" });
    const approval = await stream.until((e) => e.type === "approval.required");
    expect(approval).toMatchObject({ tool: "guarded_tool", thread_id: sent.body.thread_id });
    const done = await stream.until((e) => e.type === "turn.completed" && e.response_id === sent.body.response_id);
    expect(done).toMatchObject({ status: "completed", waiting: "approval" });
    await stream.close();
    expect(ran).toBe(0);
    const threads = ((await (await t.api("/api/chat/threads")).json() as any)).threads;
    expect(threads.find((x: any) => x.id === sent.body.thread_id).waiting).toBe("approval");
    const history = (await (await t.api(`/api/chat/history?thread_id=${sent.body.thread_id}`)).json() as any);
    expect(history.waiting).toMatchObject({ kind: "approval", tool: "guarded_tool", call_id: approval.call_id });
    // a new message on the waiting thread is refused until the approval is resolved
    const blocked = await post(t, "/api/chat", { message: "hello?", thread_id: sent.body.thread_id });
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.message).toContain("approval");
  });

  test("the history keeps decided approvals and refused calls as they were shown live", async () => {
    const history = async (id: string) => ((await (await t.api(`/api/chat/history?thread_id=${id}`)).json()) as any).items;
    for (const decision of ["deny", "approve"] as const) {
      t.llm.enqueue({ toolCalls: [{ name: "guarded_tool", arguments: { q: decision } }] }, { text: `after ${decision}` });
      const sent = await post(t, "/api/chat", { message: `guarded ${decision}` });
      const before = ran;
      const d = await post(t, `/api/chat/approvals/${sent.body.thread_id}`, { decision });
      expect(d.status).toBe(200);
      expect(ran).toBe(decision === "approve" ? before + 1 : before);
      const items = await history(sent.body.thread_id);
      expect(items.map((i: any) => i.type)).toEqual(["message", "approval", "tool_call", "message"]);
      const [, approval, call] = items;
      expect(approval).toMatchObject({ call_id: call.call_id, tool: "guarded_tool", arguments: `{"q":"${decision}"}`, decision });
      expect(Date.parse(approval.decided_at)).toBeGreaterThan(Date.now() - 60_000);
      expect(call.is_error).toBe(decision === "deny");
    }
  });

  test("the history ends a failed turn with its error, but not a turn still running", async () => {
    const stream = await events(t);
    t.llm.enqueue({ error: { status: 400, message: "The model refused" } });
    const failed = await post(t, "/api/chat", { message: "this fails" });
    const items = ((await (await t.api(`/api/chat/history?thread_id=${failed.body.thread_id}`)).json()) as any).items;
    expect(items.at(-1)).toEqual({ type: "turn_error", id: `end-${failed.body.response_id}`, response_id: failed.body.response_id, code: "llm_error", message: expect.stringContaining("The model refused") });
    t.llm.enqueue({ text: "slow", delayMs: 1_000 });
    const running = await post(t, "/api/chat/send", { content: "still going", thread_id: failed.body.thread_id });
    // stored as a kill would leave it (failed, shutdown) while it runs: not an ending yet
    const during = ((await (await t.api(`/api/chat/history?thread_id=${failed.body.thread_id}`)).json()) as any).items;
    expect(during.filter((i: any) => i.type === "turn_error")).toHaveLength(1);
    await stream.until((e) => e.type === "turn.completed" && e.response_id === running.body.response_id);
    await stream.close();
  });

  test("a /compact whose caller goes away ends quietly: no 'unexpected error' in the log", async () => {
    t.llm.enqueue({ text: "A1" }, { text: "A2" });
    const a = await post(t, "/api/chat", { message: "Q1" });
    await post(t, "/api/chat", { message: "Q2", thread_id: a.body.thread_id });
    t.llm.enqueue({ text: "nothing to save" }, { text: "Summary.", delayMs: 5_000 });
    const before = t.llm.chatRequests().length;
    const caller = new AbortController();
    const compacting = t.api(`/api/chat/threads/${a.body.thread_id}/compact`, { method: "POST", signal: caller.signal }).catch(() => undefined);
    await t.llm.waitForRequests(before + 2); // the summary is being written
    caller.abort();
    await compacting;
    // the compaction holds the thread until it has ended
    await t.service.services.agent.withThread(a.body.thread_id, async () => {});
    expect(t.logs.filter((m) => m.startsWith("unexpected error"))).toEqual([]);
  });

  test("threads can be renamed and searched by title or message", async () => {
    t.llm.enqueue({ text: "The capital is **Lisbon**." });
    const a = await post(t, "/api/chat", { message: "what is the capital of Portugal?" });
    const renamed = await t.api(`/api/chat/threads/${a.body.thread_id}`, { method: "PATCH", json: { title: "  Portugal   trivia " } });
    expect(renamed.status).toBe(200);
    expect(((await renamed.json()) as any).title).toBe("Portugal trivia");
    const find = async (q: string) => ((await (await t.api(`/api/chat/threads?q=${encodeURIComponent(q)}`)).json()) as any).threads.map((x: any) => x.id);
    expect(await find("portugal TRIVIA")).toEqual([a.body.thread_id]);
    expect(await find("LISBON")).toEqual([a.body.thread_id]); // in an answer
    expect(await find("no such words anywhere")).toEqual([]);
    for (const [json, status] of [[{ title: "   " }, 400], [{}, 400], [{ title: "x".repeat(201) }, 400]] as const) {
      expect((await t.api(`/api/chat/threads/${a.body.thread_id}`, { method: "PATCH", json })).status).toBe(status);
    }
    const other = await t.createUser();
    expect((await t.api(`/api/chat/threads/${a.body.thread_id}`, { method: "PATCH", json: { title: "mine" }, token: other.token })).status).toBe(404);
    expect(await find("Portugal")).toEqual([a.body.thread_id]);
  });

  test("threads are listed newest first with titles", async () => {
    const x = await post(t, "/api/chat", { message: "an older thread" });
    const y = await post(t, "/api/chat", { message: "the newest thread" });
    const threads = ((await (await t.api("/api/chat/threads")).json() as any)).threads;
    const ids = threads.map((th: any) => th.id);
    expect(ids.indexOf(y.body.thread_id)).toBeLessThan(ids.indexOf(x.body.thread_id));
    expect(threads.find((th: any) => th.id === y.body.thread_id).title).toBe("the newest thread");
  });

  test("bad requests are 400 and change nothing", async () => {
    const before = ((await (await t.api("/api/chat/threads")).json() as any)).threads.length;
    const requests = t.llm.chatRequests().length;
    for (const [path, body] of [
      ["/api/chat", {}],
      ["/api/chat", { message: "" }],
      ["/api/chat", { message: 5 }],
      ["/api/chat", { message: "x", thread_id: "not-a-uuid" }],
      ["/api/chat/send", {}],
      ["/api/chat/send", { content: "" }],
      ["/api/chat/send", { content: "x", thread_id: "nope" }],
    ] as const) {
      const r = await post(t, path, body);
      expect(r.status).toBe(400);
      expect(r.body.error.type).toBe("invalid_request_error");
    }
    const bad = await t.api("/api/chat", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(((await (await t.api("/api/chat/history?thread_id=zzz")).json() as any)).error.type).toBe("invalid_request_error");
    expect(((await (await t.api("/api/chat/threads")).json() as any)).threads.length).toBe(before);
    expect(t.llm.chatRequests().length).toBe(requests);
  });

  test("a malformed thread id is the same 400 on every route that names one, and changes nothing", async () => {
    const requests = t.llm.chatRequests().length;
    const envelope = { error: { message: "`thread_id` must be a thread UUID.", type: "invalid_request_error", code: null } };
    const BAD = "NOT-A-UUID";
    for (const [method, path, json] of [
      ["POST", `/api/chat/approvals/${BAD}`, { decision: "approve" }],
      ["POST", `/api/chat/threads/${BAD}/compact`, undefined],
      ["POST", `/api/chat/threads/${BAD}/regenerate`, undefined],
      ["POST", `/api/chat/threads/${BAD}/edit`, { content: "x" }],
      ["POST", `/api/chat/threads/${BAD}/branches`, { item_id: "item_x", branch: 1 }],
      ["PATCH", `/api/chat/threads/${BAD}`, { title: "x" }],
      ["DELETE", `/api/chat/threads/${BAD}`, undefined],
      ["GET", `/api/chat/history?thread_id=${BAD}`, undefined],
      ["POST", "/api/chat", { message: "x", thread_id: BAD }],
      ["POST", "/api/chat/send", { content: "x", thread_id: BAD }],
    ] as const) {
      const r = await t.api(path, { method, json });
      expect({ route: `${method} ${path}`, status: r.status, body: await r.json() }).toEqual({ route: `${method} ${path}`, status: 400, body: envelope });
    }
    expect(t.llm.chatRequests().length).toBe(requests);
  });

  test("users see only their own threads, history and events", async () => {
    const other = await t.createUser("member");
    const mine = await post(t, "/api/chat", { message: "owner's secret thread" });
    const theirStream = await events(t, other.token);
    expect((await post(t, "/api/chat", { message: "hi", thread_id: mine.body.thread_id }, other.token)).status).toBe(404);
    expect((await t.api(`/api/chat/history?thread_id=${mine.body.thread_id}`, { token: other.token })).status).toBe(404);
    expect(((await (await t.api("/api/chat/threads", { token: other.token })).json() as any)).threads).toEqual([]);
    const theirs = await post(t, "/api/chat/send", { content: "member's own" }, other.token);
    await post(t, "/api/chat", { message: "owner again" });
    await theirStream.until((e) => e.type === "turn.completed");
    expect(theirStream.seen.every((e) => e.thread_id === theirs.body.thread_id)).toBe(true);
    await theirStream.close();
  });

  test("every chat route needs a token", async () => {
    for (const [method, path] of [
      ["POST", "/api/chat"],
      ["POST", "/api/chat/send"],
      ["GET", "/api/chat/events"],
      ["GET", "/api/chat/threads"],
      ["GET", "/api/chat/history?thread_id=x"],
      ["GET", "/api/jobs"],
    ]) {
      const res = await t.api(path!, { method, token: null });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe("Invalid or missing auth token");
    }
  });
});

describe("/api/chat/send shares the Responses rate limit", () => {
  let t: TestService;
  beforeAll(async () => (t = await startTestService({ env: { RESPONSES_RATE_LIMIT: "2" } })));
  afterAll(() => t.stop());

  test("the third turn in a minute is refused whichever route starts it", async () => {
    expect((await t.respond({ model: "m", input: "one" })).status).toBe(200);
    expect((await post(t, "/api/chat/send", { content: "two" })).status).toBe(202);
    const third = await post(t, "/api/chat/send", { content: "three" });
    expect(third.status).toBe(429);
    expect(third.body.error.type).toBe("rate_limit_error");
    expect((await t.respond({ model: "m", input: "four" })).status).toBe(429);
  });
});

describe("thread titles", () => {
  let t: TestService;
  beforeAll(async () => (t = await startTestService()));
  afterAll(() => t.stop());

  test("leave out the instruction and context blocks in front of the message", async () => {
    const r = await t.respond({ model: "m", input: "Plan my garden beds", instructions: "Be brief.", x_context: { place: { city: "Oslo" } } });
    const threads = ((await (await t.api("/api/chat/threads")).json()) as any).threads;
    expect(threads.find((x: any) => r.body.id.endsWith(x.id.replaceAll("-", ""))).title).toBe("Plan my garden beds");
  });
});

describe("the event stream of a user who lost access", () => {
  test("ends at its next keepalive once the user is suspended; the owner's stream goes on", async () => {
    const t = await startTestService();
    // the keepalive timers of the streams opened below, run by hand instead of after 15 s
    const realSetInterval = globalThis.setInterval;
    const ticks: (() => void)[] = [];
    const spy = spyOn(globalThis, "setInterval").mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
      if (ms !== KEEPALIVE_MS) return realSetInterval(fn, ms, ...rest);
      ticks.push(fn);
      return { unref() {} };
    }) as typeof setInterval);
    try {
      const member = await t.createUser("member");
      const theirs = await t.api("/api/chat/events", { token: member.token });
      const mine = await t.api("/api/chat/events");
      const read = async (res: Response) => {
        const reader = res.body!.getReader();
        let text = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return { text, ended: true };
          text += new TextDecoder().decode(value);
          if (text.includes(": keepalive")) return { text, ended: false };
        }
      };
      const suspended = await t.api(`/api/webchat/v2/admin/users/${member.user.user_id}`, { method: "PATCH", json: { status: "suspended" } });
      expect(suspended.status).toBe(200);
      expect(ticks).toHaveLength(2);
      for (const tick of ticks) tick();
      expect((await read(theirs)).ended).toBe(true);
      expect(await read(mine)).toEqual({ text: ": connected\n\n: keepalive\n\n", ended: false });
    } finally {
      spy.mockRestore();
      await t.stop();
    }
  });
});
