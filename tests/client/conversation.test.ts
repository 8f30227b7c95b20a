// The reducer both chat UIs render from: events and history in, view items out.
import { describe, expect, test } from "bun:test";
import {
  applyEvent,
  cleared,
  EMPTY_THREAD,
  historyItems,
  itemsOf,
  pendingApproval,
  withApproval,
  withHistory,
  type ThreadView,
  type ViewItem,
} from "../../src/client/conversation";
import type { ChatEvent, History } from "../../src/gateway/chat-wire";

const T = "thread-1";
const ids = { thread_id: T, response_id: "r1" };
const words = { cancelled: "Stopped." };
const run = (events: ChatEvent[], from: ThreadView = EMPTY_THREAD) => events.reduce((t, e) => applyEvent(t, e, words), from);
const history = (h: Partial<History>): History => ({ thread_id: T, title: null, items: [], waiting: null, ...h });

describe("applyEvent", () => {
  test("a turn another channel started is labelled with it while it runs; a chat turn is not", () => {
    const webhook = run([{ type: "turn.started", ...ids, channel: "webhook", job_id: "j1" }, { type: "message.delta", ...ids, item_id: "m", delta: "Hi" }]);
    expect(itemsOf(webhook)).toMatchObject([{ kind: "notice", tone: "info", text: "Started by a webhook job." }, { kind: "assistant", text: "Hi" }]);
    const routine = run([{ type: "turn.started", ...ids, channel: "webhook", routine_id: "rt" }]);
    expect(itemsOf(routine)).toMatchObject([{ kind: "notice", text: "Started by a routine." }]);
    const api = run([{ type: "turn.started", ...ids, channel: "responses" }, { type: "turn.started", ...ids, channel: "responses" }]);
    expect(itemsOf(api)).toMatchObject([{ kind: "notice", text: "Started by the Responses API." }]);
    expect(itemsOf(run([{ type: "turn.started", ...ids, channel: "chat" }]))).toEqual([]);
  });

  test("a budget warning is shown in its turn, once", () => {
    const warned = run([
      { type: "turn.started", ...ids, channel: "chat" },
      { type: "budget.warning", ...ids, message: "Your daily budget is 85 % spent." },
      { type: "budget.warning", ...ids, message: "Your daily budget is 85 % spent." },
    ]);
    expect(itemsOf(warned)).toEqual([{ kind: "notice", id: "budget-r1", tone: "info", text: "Your daily budget is 85 % spent." }]);
  });

  test("leaves the view it was given as it was", () => {
    const before = run([{ type: "message.delta", ...ids, item_id: "m1", delta: "Hel" }]);
    const copy = structuredClone(before);
    const after = applyEvent(before, { type: "message.delta", ...ids, item_id: "m1", delta: "lo" }, words);
    expect(before).toEqual(copy);
    expect(itemsOf(after)).toMatchObject([{ kind: "assistant", text: "Hello", streaming: true }]);
  });

  test("reasoning grows in its own item, stops streaming when the answer begins; a cut answer says so even when empty", () => {
    const t = run([
      { type: "turn.started", ...ids },
      { type: "reasoning.delta", ...ids, item_id: "th1", delta: "Let me " },
      { type: "reasoning.delta", ...ids, item_id: "th1", delta: "think." },
    ]);
    expect(itemsOf(t)).toEqual([{ kind: "reasoning", id: "th1", text: "Let me think.", streaming: true }]);
    const answered = run(
      [
        { type: "message.started", ...ids, item_id: "m1" },
        { type: "message.completed", ...ids, item_id: "m1", text: "", status: "incomplete" },
      ],
      t,
    );
    expect(itemsOf(answered)).toEqual([
      { kind: "reasoning", id: "th1", text: "Let me think.", streaming: false },
      { kind: "assistant", id: "m1", text: "", streaming: false, cutShort: true },
    ]);
  });

  test("streams a message, drops an empty one (a step with tool calls only), and settles when the turn ends", () => {
    const t = run([
      { type: "turn.started", ...ids },
      { type: "message.started", ...ids, item_id: "m0" },
      { type: "message.completed", ...ids, item_id: "m0", text: "" },
      { type: "message.started", ...ids, item_id: "m1" },
      { type: "message.delta", ...ids, item_id: "m1", delta: "Hi " },
      { type: "message.delta", ...ids, item_id: "m1", delta: "there" },
    ]);
    expect(itemsOf(t)).toEqual([{ kind: "assistant", id: "m1", text: "Hi there", streaming: true, cutShort: false }]);
    expect(t.live[0]!.running).toBe(true);
    const done = run([{ type: "turn.completed", ...ids, status: "completed", error: null, waiting: null }], t);
    expect(itemsOf(done)).toMatchObject([{ kind: "assistant", streaming: false }]);
    expect(done.live[0]!.running).toBe(false);
  });

  test("a failed turn ends with its error once; a cancelled one in the UI's words; no error at all still says so", () => {
    const failed = { type: "turn.completed", ...ids, status: "failed", error: { code: "llm_error", message: "boom" }, waiting: null } as const;
    expect(itemsOf(run([failed, failed]))).toEqual([{ kind: "notice", id: "end-r1", tone: "error", text: "boom" }]);
    const cancelled = { ...failed, error: { code: "cancelled", message: "x" } };
    expect(itemsOf(applyEvent(EMPTY_THREAD, cancelled, { cancelled: "Cancelled." }))).toMatchObject([{ tone: "info", text: "Cancelled." }]);
    expect(itemsOf(run([{ ...failed, error: null }]))).toMatchObject([{ tone: "error", text: "The reply failed." }]);
  });

  test("tool calls get their output; an output whose call was not seen still shows", () => {
    const t = run([
      { type: "tool.started", ...ids, call_id: "c1", name: "lookup", arguments: "{}" },
      { type: "tool.started", ...ids, call_id: "c1", name: "lookup", arguments: "{}" },
      { type: "tool.completed", ...ids, call_id: "c1", output: "found", is_error: false },
      { type: "tool.completed", ...ids, call_id: "c2", output: "nope", is_error: true },
    ]);
    expect(itemsOf(t)).toEqual([
      { kind: "tool", id: "c1", callId: "c1", name: "lookup", arguments: "{}", output: "found", isError: false, refused: false },
      { kind: "tool", id: "c2", callId: "c2", name: "tool", arguments: "", output: "nope", isError: true, refused: false },
    ]);
  });

  test("events of another response make a turn of their own, in order", () => {
    const t = run([
      { type: "message.delta", ...ids, item_id: "m1", delta: "one" },
      { type: "message.delta", thread_id: T, response_id: "r2", item_id: "m2", delta: "two" },
    ]);
    expect(t.live.map((turn) => turn.responseId)).toEqual(["r1", "r2"]);
  });

  test("a connect prompt is shown once, and goes once its tool runs", () => {
    const auth = { call_id: "c3", tool: "gmail_send", extension: "gmail", connect_url: "/extensions/connect/gmail" };
    const stored = withHistory(EMPTY_THREAD, T, history({ waiting: { kind: "oauth", call_id: "c3", tool: "gmail_send", arguments: "{}", extension: "gmail", connect_url: auth.connect_url } }));
    const t = run([{ type: "auth.required", ...ids, ...auth }], stored);
    expect(itemsOf(t)).toEqual([{ kind: "connect", id: "connect-c3", callId: "c3", tool: "gmail_send", extension: "gmail", url: auth.connect_url }]);
    const running = run([{ type: "tool.started", ...ids, call_id: "c3", name: "gmail_send", arguments: "{}" }], t);
    expect(itemsOf(running).map((i) => i.kind)).toEqual(["tool"]);
  });

  test("a compaction event leaves the view as it is: the history places the mark", () => {
    const compaction = { type: "compaction" as const, id: "k1", summary: "s", summarised_items: 2, trigger: "auto" as const, memory_notes: 0, created_at: 0 };
    expect(itemsOf(run([{ type: "thread.compacted", ...ids, compaction }]))).toEqual([]);
  });
});

describe("history", () => {
  test("messages, tool calls, a mark, an answer cut short, and the approval waited on last", () => {
    const items = historyItems(
      T,
      history({
        items: [
          { type: "compaction", id: "k1", summary: "Earlier.", summarised_items: 3, trigger: "manual", memory_notes: 2, created_at: 0 },
          { type: "message", id: "1", role: "user", content: "hi" },
          { type: "tool_call", id: "2", call_id: "c", name: "file_read", arguments: "{}", output: null, is_error: false, external: false },
          { type: "message", id: "3", role: "assistant", content: "part", status: "incomplete" },
        ],
        waiting: { kind: "approval", call_id: "c9", tool: null, arguments: null },
      }),
    );
    expect(items).toEqual([
      { kind: "compaction", id: "k1", summary: "Earlier.", summarisedItems: 3, memoryNotes: 2 },
      { kind: "user", id: "1", text: "hi" },
      { kind: "tool", id: "2", callId: "c", name: "file_read", arguments: "{}", output: null, isError: false, refused: false },
      { kind: "assistant", id: "3", text: "part", streaming: false, cutShort: true },
      { kind: "approval", id: "approval-c9", threadId: T, callId: "c9", tool: "a tool", arguments: "", decided: null, busy: false, error: null },
    ]);
    expect(pendingApproval(items)?.callId).toBe("c9");
  });

  test("a decided approval and the call it refused read back as they were shown live", () => {
    const approval = { call_id: "c4", tool: "web_fetch", arguments: '{"url":"https://x.example"}', destination: "x.example" };
    const live = run([
      { type: "approval.required", ...ids, ...approval },
    ]);
    const decided = withApproval(live, "c4", { decided: "deny" });
    const after = run([
      { type: "tool.started", thread_id: T, response_id: "r2", call_id: "c4", name: "web_fetch", arguments: approval.arguments },
      { type: "tool.completed", thread_id: T, response_id: "r2", call_id: "c4", output: "Error: the user denied this call of web_fetch.", is_error: true },
    ], decided);
    const stored = historyItems(
      T,
      history({
        items: [
          { type: "approval", id: "approval-c4", ...approval, decision: "deny", decided_at: "2026-01-01T00:00:00Z" },
          { type: "tool_call", id: "c4", ...approval, name: "web_fetch", output: "Error: the user denied this call of web_fetch.", is_error: true, external: false },
        ],
      }),
    );
    const shape = (items: ViewItem[]) => items.map((i) => (i.kind === "tool" ? { kind: i.kind, isError: i.isError, refused: i.refused } : i.kind === "approval" ? { kind: i.kind, decided: i.decided, destination: i.destination } : i));
    expect(shape(itemsOf(after))).toEqual([
      { kind: "approval", decided: "deny", destination: "x.example" },
      { kind: "tool", isError: true, refused: true },
    ]);
    expect(shape(stored)).toEqual(shape(itemsOf(after)));
  });

  test("a user message where the conversation forks carries which alternative it is", () => {
    const items = historyItems(T, history({ items: [{ type: "message", id: "u2", role: "user", content: "again", branch: { current: 2, count: 3 } }] }));
    expect(items).toEqual([{ kind: "user", id: "u2", text: "again", branch: { current: 2, count: 3 } }]);
  });

  test("a turn that ended while the history was being read is kept, without what the history holds already", () => {
    const live = run([
      { type: "message.started", ...ids, item_id: "m1" },
      { type: "message.completed", ...ids, item_id: "m1", text: "answer" },
      { type: "turn.completed", ...ids, status: "completed", error: null, waiting: null },
    ]);
    const ended = { ...live, live: live.live.map((turn) => ({ ...turn, endedAt: 5 })) };
    // read before the turn was stored: the answer stays
    expect(itemsOf(withHistory(ended, T, history({ items: [{ type: "message", id: "u1", role: "user", content: "q" }] }), undefined, 4)).map((i) => i.id)).toEqual(["u1", "m1"]);
    // read after: it is the history's, once
    const stored = history({ items: [{ type: "message", id: "u1", role: "user", content: "q" }, { type: "message", id: "m1", role: "assistant", content: "answer" }] });
    expect(itemsOf(withHistory(ended, T, stored, undefined, 4)).map((i) => i.id)).toEqual(["u1", "m1"]);
    // a turn that ended before the read began is the history's alone
    expect(itemsOf(withHistory(ended, T, history({}), undefined, 5))).toEqual([]);
  });

  test("a failed or stopped turn reads back as the notice it ended with live", () => {
    const live = run([{ type: "turn.completed", ...ids, status: "failed", error: { code: "cancelled", message: "The response was cancelled." }, waiting: null }]);
    const stored = historyItems(T, history({ items: [{ type: "turn_error", id: "end-r1", response_id: "r1", code: "cancelled", message: "The response was cancelled." }] }), words);
    expect(stored).toEqual(itemsOf(live));
    expect(stored).toEqual([{ kind: "notice", id: "end-r1", tone: "info", text: "Stopped." }]);
  });

  test("loading keeps the running turns; clearing keeps them too, with the prompts still open", () => {
    const t = run([
      { type: "approval.required", ...ids, call_id: "c1", tool: "guarded", arguments: "{}" },
      { type: "turn.completed", ...ids, status: "completed", error: null, waiting: "approval" },
      { type: "message.delta", thread_id: T, response_id: "r2", item_id: "m2", delta: "live" },
    ]);
    const loaded = withHistory(t, T, history({ items: [{ type: "message", id: "1", role: "user", content: "q" }] }));
    expect(loaded.live.map((turn) => turn.responseId)).toEqual(["r2"]);
    expect(itemsOf(loaded).map((i) => i.kind)).toEqual(["user", "assistant"]);

    expect(itemsOf(cleared(t))).toMatchObject([{ kind: "approval", callId: "c1" }]);
    expect(cleared(t).live.map((turn) => turn.responseId)).toEqual(["r1", "r2"]);
    const decided = withApproval(t, "c1", { decided: "approve" });
    expect(itemsOf(cleared(decided))).toEqual([]);
    expect(cleared(decided).live.map((turn) => turn.responseId)).toEqual(["r2"]);
  });

  test("a decision changes the prompt wherever it is", () => {
    const t = run([{ type: "approval.required", ...ids, call_id: "c1", tool: "guarded", arguments: "{}" }]);
    const decided = withApproval(t, "c1", { decided: "deny", busy: true });
    expect(itemsOf(decided)).toMatchObject([{ kind: "approval", decided: "deny", busy: true }]);
    expect(pendingApproval(itemsOf(decided))).toBeUndefined();
    expect(itemsOf(t)).toMatchObject([{ decided: null }]);
  });
});
