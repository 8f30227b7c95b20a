// toChatMessages: stored conversation items → chat-completions messages.
import { describe, expect, test } from "bun:test";
import { toChatMessages } from "../../src/conversation/history";
import type { ConversationItem } from "../../src/conversation/items";

const PLACEHOLDER = "(no result: the tool call did not finish)";

let n = 0;
const user = (content: string): ConversationItem => ({ type: "message", id: `item_${++n}`, role: "user", content });
const assistant = (content: string): ConversationItem => ({ type: "message", id: `item_${++n}`, role: "assistant", content });
const call = (call_id: string, name = "tool", args = "{}", external = false): ConversationItem => ({
  type: "function_call",
  id: `item_${++n}`,
  call_id,
  name,
  arguments: args,
  external,
});
const output = (call_id: string, out: string): ConversationItem => ({ type: "function_call_output", id: `item_${++n}`, call_id, output: out });
const tc = (id: string, name = "tool", args = "{}") => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("toChatMessages", () => {
  test("no items, no messages", () => {
    expect(toChatMessages([])).toEqual([]);
  });

  test("plain messages keep role, content and order", () => {
    expect(toChatMessages([user("hi"), assistant("hello"), user("bye")])).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "bye" },
    ]);
  });

  test("a call joins the assistant text right before it", () => {
    expect(toChatMessages([user("weather?"), assistant("Let me check."), call("c1", "get_weather", '{"city":"Paris"}'), output("c1", "sunny")])).toEqual([
      { role: "user", content: "weather?" },
      { role: "assistant", content: "Let me check.", tool_calls: [tc("c1", "get_weather", '{"city":"Paris"}')] },
      { role: "tool", tool_call_id: "c1", content: "sunny" },
    ]);
  });

  test("several calls of one step join the same assistant message, their results follow in order", () => {
    expect(toChatMessages([user("go"), assistant("Both."), call("a", "tool_a"), call("b", "tool_b"), output("a", "A"), output("b", "B"), assistant("Done.")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: "Both.", tool_calls: [tc("a", "tool_a"), tc("b", "tool_b")] },
      { role: "tool", tool_call_id: "a", content: "A" },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "assistant", content: "Done." },
    ]);
  });

  test("a call without assistant text before it gets an assistant message with null content", () => {
    expect(toChatMessages([user("go"), call("c1"), output("c1", "ok")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
  });

  test("a call after a tool result starts a new assistant message (a new model step)", () => {
    expect(toChatMessages([user("go"), call("c1"), output("c1", "one"), call("c2"), output("c2", "two")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: "one" },
      { role: "assistant", content: null, tool_calls: [tc("c2")] },
      { role: "tool", tool_call_id: "c2", content: "two" },
    ]);
  });

  test("the assistant text is not joined across a user message", () => {
    expect(toChatMessages([assistant("earlier"), user("now"), call("c1"), output("c1", "x")])).toEqual([
      { role: "assistant", content: "earlier" },
      { role: "user", content: "now" },
      { role: "assistant", content: null, tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: "x" },
    ]);
  });

  test("a dangling call at the end gets a placeholder result", () => {
    expect(toChatMessages([user("go"), assistant("Trying."), call("c1")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: "Trying.", tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: PLACEHOLDER },
    ]);
  });

  test("a dangling call before the next message gets its placeholder right after the call", () => {
    expect(toChatMessages([user("go"), call("c1"), user("are you there?"), assistant("yes")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: PLACEHOLDER },
      { role: "user", content: "are you there?" },
      { role: "assistant", content: "yes" },
    ]);
  });

  test("of two calls only one answered: the other gets a placeholder, the answered one keeps its result", () => {
    expect(toChatMessages([user("go"), call("a"), call("b"), output("a", "A"), user("next")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [tc("a"), tc("b")] },
      { role: "tool", tool_call_id: "a", content: "A" },
      { role: "tool", tool_call_id: "b", content: PLACEHOLDER },
      { role: "user", content: "next" },
    ]);
  });

  test("dangling calls of an earlier step are closed before a new step's call", () => {
    expect(toChatMessages([user("go"), assistant("one"), call("a"), assistant("two"), call("b"), output("b", "B")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: "one", tool_calls: [tc("a")] },
      { role: "tool", tool_call_id: "a", content: PLACEHOLDER },
      { role: "assistant", content: "two", tool_calls: [tc("b")] },
      { role: "tool", tool_call_id: "b", content: "B" },
    ]);
  });

  test("an output for an unknown call is dropped", () => {
    expect(toChatMessages([user("hi"), output("nobody", "stray"), assistant("hello")])).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
  });

  test("an output that comes before its call is dropped, and the call gets a placeholder", () => {
    expect(toChatMessages([user("hi"), output("c1", "early"), call("c1")])).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: PLACEHOLDER },
    ]);
  });

  test("a second output for the same call is dropped", () => {
    expect(toChatMessages([user("hi"), call("c1"), output("c1", "first"), output("c1", "second")])).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [tc("c1")] },
      { role: "tool", tool_call_id: "c1", content: "first" },
    ]);
  });

  test("caller (external) and built-in calls are rendered alike", () => {
    expect(toChatMessages([user("go"), call("x", "ext", '{"a":1}', true), call("y", "builtin", "{}", false), output("x", "1"), output("y", "2")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [tc("x", "ext", '{"a":1}'), tc("y", "builtin")] },
      { role: "tool", tool_call_id: "x", content: "1" },
      { role: "tool", tool_call_id: "y", content: "2" },
    ]);
  });

  test("the input items are not modified", () => {
    const items = [user("go"), assistant("text"), call("a"), call("b"), output("a", "A")];
    const copy = structuredClone(items);
    toChatMessages(items);
    toChatMessages(items);
    expect(items).toEqual(copy);
  });
});
