import { expect, test } from "bun:test";
import { ToolCallAssembler } from "../../src/llm/tool-calls";

const assemble = (...deltas: unknown[][]) => {
  const a = new ToolCallAssembler();
  for (const d of deltas) a.add(d);
  return a.calls().map(({ name, arguments: args }) => ({ name, args }));
};

test("a repeated name is set, not appended", () => {
  expect(assemble([{ index: 0, id: "a", function: { name: "f", arguments: '{"x"' } }], [{ index: 0, id: "a", function: { name: "f", arguments: ":1}" } }])).toEqual([{ name: "f", args: '{"x":1}' }]);
});

test("a new id starts a new call, even at the same index", () => {
  expect(assemble([{ index: 0, id: "a", function: { name: "f", arguments: "{}" } }], [{ index: 0, id: "b", function: { name: "g", arguments: "{}" } }])).toEqual([
    { name: "f", args: "{}" },
    { name: "g", args: "{}" },
  ]);
});

test("index-less deltas continue the call with their id, or the last one", () => {
  expect(
    assemble(
      [{ id: "a", function: { name: "f", arguments: '{"x":' } }],
      [{ function: { arguments: "1}" } }],
      [{ id: "b", function: { name: "g", arguments: "" } }],
      [{ id: "a", function: { arguments: "" } }],
      [{ function: { arguments: '{"y":2}' } }],
    ),
  ).toEqual([
    { name: "f", args: '{"x":1}' },
    { name: "g", args: '{"y":2}' },
  ]);
});

test("several id-less, index-less calls in one delta are several calls; another tool's name starts a new one", () => {
  expect(assemble([{ function: { name: "f", arguments: "{}" } }, { function: { name: "f", arguments: '{"n":2}' } }])).toHaveLength(2);
  expect(assemble([{ function: { name: "f", arguments: "{}" } }], [{ function: { name: "g", arguments: "{}" } }])).toHaveLength(2);
  expect(assemble([{ function: { name: "f", arguments: "{" } }], [{ function: { name: "f", arguments: "}" } }])).toEqual([{ name: "f", args: "{}" }]);
});

test("arguments as an object are that object; none at all are {}; a call without an id gets one", () => {
  const a = new ToolCallAssembler();
  a.add([{ index: 0, function: { name: "f", arguments: { q: "x" } } }, { index: 1, function: { name: "g" } }]);
  const calls = a.calls();
  expect(calls.map((c) => c.arguments)).toEqual(['{"q":"x"}', "{}"]);
  expect(calls.every((c) => /^call_[0-9a-f]{32}$/.test(c.call_id))).toBe(true);
  a.add(null);
  a.add([null, "junk"]);
  expect(a.size).toBe(2);
});
