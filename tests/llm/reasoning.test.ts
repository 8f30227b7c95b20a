import { describe, expect, test } from "bun:test";
import { contentParts, ThinkSplitter } from "../../src/llm/reasoning";

/** Feeds `deltas` through one splitter and adds up what came out. */
function split(deltas: string[]): { reasoning: string; text: string } {
  const s = new ThinkSplitter();
  const out = { reasoning: "", text: "" };
  for (const d of [...deltas.map((d) => s.push(d)), s.flush()]) {
    out.reasoning += d.reasoning;
    out.text += d.text;
  }
  return out;
}

describe("ThinkSplitter", () => {
  const whole = "<think>\nWeigh it up: 2 < 3.\n</think>\n\nThe answer is 3.";
  test("a leading block is reasoning, wherever the deltas cut the tags", () => {
    for (let i = 0; i <= whole.length; i++) {
      for (const j of [i, Math.min(whole.length, i + 1), Math.min(whole.length, i + 5)]) {
        const r = split([whole.slice(0, i), whole.slice(i, j), whole.slice(j)]);
        expect(r).toEqual({ reasoning: "\nWeigh it up: 2 < 3.\n", text: "The answer is 3." });
      }
    }
  });

  test("one character at a time", () => {
    expect(split([...whole])).toEqual({ reasoning: "\nWeigh it up: 2 < 3.\n", text: "The answer is 3." });
    expect(split([..."<thinking>hm</thinking>ok"])).toEqual({ reasoning: "hm", text: "ok" });
  });

  test("text that only looks like a tag is the answer, untouched", () => {
    expect(split(["<th", "is is html>"])).toEqual({ reasoning: "", text: "<this is html>" });
    expect(split(["  Hello <think>not leading</think>"])).toEqual({ reasoning: "", text: "  Hello <think>not leading</think>" });
    expect(split(["<thi"])).toEqual({ reasoning: "", text: "<thi" });
    expect(split(["   "])).toEqual({ reasoning: "", text: "   " });
  });

  test("a block never closed (the model was cut off while thinking) is all reasoning", () => {
    expect(split(["<think>still going", " and going</th"])).toEqual({ reasoning: "still going and going</th", text: "" });
  });

  test("after the answer begins, deltas pass straight through", () => {
    const s = new ThinkSplitter();
    expect(s.push("Hi")).toEqual({ reasoning: "", text: "Hi" });
    expect(s.push("<think>")).toEqual({ reasoning: "", text: "<think>" });
  });
});

test("contentParts reads Mistral's thinking parts as reasoning", () => {
  expect(contentParts([{ type: "thinking", thinking: [{ type: "text", text: "hmm" }] }, { type: "text", text: "Yes." }])).toEqual({ reasoning: "hmm", text: "Yes." });
  expect(contentParts("plain")).toEqual({ reasoning: "", text: "plain" });
  expect(contentParts(null)).toEqual({ reasoning: "", text: "" });
});
