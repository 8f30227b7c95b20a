// The chat UIs' browser-free parts (src/client, shared by the web UI and the TUI): the
// SSE parser and the chat model that puts events and send replies together (the browser
// tests cover the rest).
import { describe, expect, test } from "bun:test";
import { ChatModel } from "../../src/client/chat-model";
import { SseParser } from "../../src/client/sse";
import type { ChatEvent as ServerEvent } from "../../src/gateway/events";
import type { ChatEvent as WebEvent } from "../../src/web/wire";

// The browser's copy of the event shapes must match the server's exactly (compile-time check).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const eventsMatch: Same<ServerEvent, WebEvent> = true;

const T = "11111111-1111-4111-8111-111111111111";
const R = "resp_1";
const ids = { thread_id: T, response_id: R };

describe("SseParser", () => {
  test("splits events across chunks, skips comments, joins data lines", () => {
    expect(eventsMatch).toBe(true);
    const p = new SseParser();
    expect(p.push(": connected\n\nevent: a\nda")).toEqual([]);
    expect(p.push('ta: {"x":1}\n\n: keepalive\n\n')).toEqual([{ event: "a", data: '{"x":1}' }]);
    expect(p.push("data: one\r\ndata: two\r")).toEqual([]);
    expect(p.push("\n\r\n")).toEqual([{ event: "message", data: "one\ntwo" }]);
    expect(p.push("event: b\ndata:no-space\n\n")).toEqual([{ event: "b", data: "no-space" }]);
  });
});

describe("ChatModel", () => {
  test("a new thread's events that arrive before the send reply are merged after the user's message", () => {
    const m = new ChatModel();
    const key = m.beginSend(null, "hello");
    m.apply({ type: "turn.started", ...ids });
    m.apply({ type: "message.started", ...ids, item_id: "m1" });
    m.apply({ type: "message.delta", ...ids, item_id: "m1", delta: "Hi " });
    expect(m.items(null).map((i) => i.kind)).toEqual(["user"]);
    const turn = m.accepted(null, key, R, T);
    expect(turn.running).toBe(true);
    m.apply({ type: "message.delta", ...ids, item_id: "m1", delta: "there" });
    m.apply({ type: "message.completed", ...ids, item_id: "m1", text: "Hi there" });
    m.apply({ type: "turn.completed", ...ids, status: "completed", error: null, waiting: null });
    expect(m.items(T)).toMatchObject([
      { kind: "user", text: "hello" },
      { kind: "assistant", text: "Hi there", streaming: false },
    ]);
    expect(m.items(null)).toEqual([]);
    expect(m.running(T)).toBeUndefined();
  });

  test("tool calls, approvals and a cancelled turn", () => {
    const m = new ChatModel();
    m.apply({ type: "tool.started", ...ids, call_id: "c1", name: "lookup", arguments: '{"q":"x"}' });
    m.apply({ type: "tool.completed", ...ids, call_id: "c1", output: "found", is_error: false });
    m.apply({ type: "approval.required", ...ids, call_id: "c2", tool: "guarded", arguments: "{}" });
    m.apply({ type: "turn.completed", ...ids, status: "completed", error: null, waiting: "approval" });
    expect(m.items(T)).toMatchObject([
      { kind: "tool", name: "lookup", output: "found" },
      { kind: "approval", tool: "guarded", decided: null },
    ]);
    m.updateApproval(T, "c2", { decided: "approve" });
    expect(m.approval(T, "c2")?.decided).toBe("approve");

    const r2 = { thread_id: T, response_id: "resp_2" };
    m.apply({ type: "turn.started", ...r2 });
    expect(m.running(T)?.responseId).toBe("resp_2");
    m.apply({ type: "turn.completed", ...r2, status: "failed", error: { code: "cancelled", message: "x" }, waiting: null });
    expect(m.items(T).at(-1)).toMatchObject({ kind: "notice", tone: "info", text: "Stopped." });
  });

  test("an extension that must be connected first shows a connect prompt, live and from history", () => {
    const m = new ChatModel();
    const auth = { call_id: "c3", tool: "gmail_send", extension: "gmail", connect_url: "http://127.0.0.1:1/extensions/gmail/connect" };
    m.apply({ type: "auth.required", ...ids, ...auth });
    m.apply({ type: "turn.completed", ...ids, status: "completed", error: null, waiting: "oauth" });
    expect(m.items(T)).toMatchObject([{ kind: "connect", tool: "gmail_send", extension: "gmail", url: auth.connect_url }]);
    m.loadHistory(T, { thread_id: T, title: null, items: [], waiting: { kind: "oauth", call_id: "c3", tool: "gmail_send", arguments: "{}", extension: "gmail", connect_url: auth.connect_url } });
    expect(m.items(T)).toMatchObject([{ kind: "connect", extension: "gmail", url: auth.connect_url }]);
  });

  test("loading history keeps only the turns still running", () => {
    const m = new ChatModel();
    m.apply({ type: "turn.started", ...ids });
    m.apply({ type: "turn.completed", ...ids, status: "completed", error: null, waiting: null });
    m.apply({ type: "turn.started", thread_id: T, response_id: "resp_live" });
    m.loadHistory(T, {
      thread_id: T,
      title: "t",
      items: [
        { type: "message", id: "i1", role: "user", content: "q" },
        { type: "tool_call", id: "i2", call_id: "c", name: "n", arguments: "{}", output: "o", is_error: false, external: false },
      ],
      waiting: { kind: "approval", call_id: "c9", tool: "guarded", arguments: "{}" },
    });
    expect(m.items(T).map((i) => i.kind)).toEqual(["user", "tool", "approval"]);
    expect(m.thread(T).live.map((t) => t.responseId)).toEqual(["resp_live"]);
  });

  test("a compaction in the history becomes a mark; the live event leaves the turn as it is", () => {
    const m = new ChatModel();
    m.apply({ type: "turn.started", ...ids });
    const compaction = { type: "compaction" as const, id: "k1", summary: "They talked.", summarised_items: 4, trigger: "auto" as const, memory_notes: 1, created_at: 0 };
    m.apply({ type: "thread.compacted", ...ids, compaction });
    expect(m.items(T)).toEqual([]);
    m.loadHistory(T, { thread_id: T, title: null, items: [compaction, { type: "message", id: "i1", role: "user", content: "q" }], waiting: null });
    expect(m.items(T)[0]).toEqual({ kind: "compaction", id: "k1", summary: "They talked.", summarisedItems: 4, memoryNotes: 1 });
    expect(m.running(T)).toBeDefined();
  });

  test("a failed send keeps the message and says why", () => {
    const m = new ChatModel();
    const key = m.beginSend(T, "hi");
    m.sendFailed(T, key, "Too many requests");
    expect(m.items(T)).toMatchObject([{ kind: "user" }, { kind: "notice", tone: "error", text: "Too many requests" }]);
    expect(m.running(T)).toBeUndefined();
  });
});
