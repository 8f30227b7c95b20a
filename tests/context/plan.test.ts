import { describe, expect, test } from "bun:test";
import type { ConversationItem } from "../../src/conversation/items";
import { identifiers } from "../../src/context/identifiers";
import { chooseCut, safeCuts, trimArguments, trimOutput, trimOutputs, trimToFit, type Sized } from "../../src/context/plan";

const user = (content: string): ConversationItem => ({ type: "message", id: `u-${content}`, role: "user", content });
const said = (content: string): ConversationItem => ({ type: "message", id: `a-${content}`, role: "assistant", content });
const call = (id: string, external = false): ConversationItem => ({ type: "function_call", id: `f-${id}`, call_id: id, name: "file_read", arguments: "{}", external });
const out = (id: string, output = "ok"): ConversationItem => ({ type: "function_call_output", id: `o-${id}`, call_id: id, output });
const sized = (items: ConversationItem[], tokens = 10): Sized[] => items.map((item) => ({ item, tokens }));

describe("safe cuts", () => {
  // turn 1: user, call c1, output c1, answer; turn 2: user, two calls, two outputs, answer
  const thread = [user("1"), call("c1"), out("c1"), said("1"), user("2"), call("c2"), call("c3"), out("c2"), out("c3"), said("2")];

  test("never between a call and its output; turn starts marked", () => {
    const cuts = safeCuts(thread);
    expect(cuts.map((c) => c.index)).toEqual([0, 1, 3, 4, 5, 9, 10]);
    expect(cuts.filter((c) => c.turnStart).map((c) => c.index)).toEqual([0, 4]);
  });

  test("a call whose output never came (a turn that died) does not block cuts", () => {
    expect(safeCuts([user("1"), call("dead"), user("2"), said("2")]).map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
  });

  test("the call a gate waits on keeps everything after it", () => {
    expect(safeCuts([user("1"), said("1"), user("2"), call("wait", true)], "wait").map((c) => c.index)).toEqual([0, 1, 2, 3]);
  });

  test("a call in the history whose output this turn brings is not cut from it", () => {
    const history = sized([user("1"), said("1"), user("2"), call("x", true)]);
    // keep nothing: the latest cut still leaves the call with its output
    expect(chooseCut(history, [out("x")], 0)).toBe(3);
  });
});

describe("where to compact", () => {
  const thread = [user("1"), said("1"), user("2"), call("c"), out("c"), said("2"), user("3"), said("3")];

  test("the earliest turn start that leaves at most `keep` tokens", () => {
    expect(chooseCut(sized(thread), [], 20)).toBe(6);
    expect(chooseCut(sized(thread), [], 60)).toBe(2);
    expect(chooseCut(sized(thread), [], 1000)).toBe(2);
  });

  test("inside a turn when its last turn alone is too big, at a step boundary", () => {
    const big = [user("1"), said("1"), user("2"), call("a"), out("a"), call("b"), out("b"), said("2")];
    expect(chooseCut(sized(big), [], 35)).toBe(5);
    expect(chooseCut(sized(big), [], 25)).toBe(7);
  });

  test("nothing to summarise in a thread of one step", () => {
    expect(chooseCut([], [user("new")], 0)).toBe(0);
  });
});

describe("trimming tool outputs", () => {
  test("keeps head and tail, so the tags around an output stay, and says how much was cut", () => {
    const text = `<tool_output tool="file_read">${"x".repeat(5000)}</tool_output>`;
    const trimmed = trimOutput(text, 600);
    expect(trimmed.length).toBeLessThan(800);
    expect(trimmed.startsWith('<tool_output tool="file_read">')).toBe(true);
    expect(trimmed.endsWith("</tool_output>")).toBe(true);
    expect(trimmed).toContain(`of ${text.length} characters shown`);
    expect(trimOutput("short", 600)).toBe("short");
  });

  test("oldest first, and only until the items fit", () => {
    const items = [out("1", "a".repeat(4000)), out("2", "b".repeat(4000)), user("x")];
    const size = (it: ConversationItem) => Math.ceil((it.type === "function_call_output" ? it.output.length : 10) / 4);
    const res = trimOutputs(items.map((item) => ({ item, tokens: size(item) })), 1500, 100, size);
    expect((res[0]!.item as { output: string }).output.length).toBeLessThan(400);
    expect((res[1]!.item as { output: string }).output.length).toBe(4000);
  });
});

describe("trimming call arguments", () => {
  test("long strings inside are cut and the arguments stay valid JSON", () => {
    const args = JSON.stringify({ path: "notes/big.md", content: "z".repeat(50_000) });
    const trimmed = trimArguments(args, 2000);
    expect(trimmed.length).toBeLessThanOrEqual(2000);
    const parsed = JSON.parse(trimmed);
    expect(parsed.path).toBe("notes/big.md");
    expect(parsed.content).toContain("more characters trimmed]");
    expect(trimArguments('{"a":1}', 2000)).toBe('{"a":1}');
    expect(trimArguments("not json ".repeat(500), 600).length).toBeLessThan(800);
  });

  test("this turn's items are trimmed just enough, oldest first, calls and outputs alike", () => {
    const size = (it: ConversationItem) => Math.ceil(JSON.stringify(it).length / 4);
    const items: ConversationItem[] = [
      { type: "function_call", id: "c", call_id: "c", name: "file_write", arguments: JSON.stringify({ content: "w".repeat(20_000) }), external: false },
      out("c", "written"),
      out("d", "r".repeat(20_000)),
    ];
    const res = trimToFit(items.map((item) => ({ item, tokens: size(item) })), 3000, 50, size);
    expect(res.reduce((n, s) => n + s.tokens, 0)).toBeLessThanOrEqual(3000);
    expect((res[0]!.item as { arguments: string }).arguments.length).toBeLessThan(1000);
    expect((res[2]!.item as { output: string }).output.length).toBeGreaterThan(9000);
  });
});

describe("identifiers", () => {
  test("ids, paths, URLs, mails, versions, dates and addresses, not plain words or small numbers", () => {
    const ids = identifiers(
      "Ticket ZX-4471-QQ at https://wiki.lan/x/y?z=1. See src/agent/loop.ts and /etc/hosts, v1.2.3, on 2026-11-23 at 192.168.1.10; mail bob@example.org. Message 17 says hello; resp_0a9f3c.",
    );
    expect(ids).toEqual(["ZX-4471-QQ", "https://wiki.lan/x/y?z=1", "src/agent/loop.ts", "/etc/hosts", "v1.2.3", "2026-11-23", "192.168.1.10", "bob@example.org", "resp_0a9f3c"]);
  });

  test("each once, in the order of its last appearance", () => {
    expect(identifiers("A-100 then B-200 then A-100")).toEqual(["B-200", "A-100"]);
  });
});
