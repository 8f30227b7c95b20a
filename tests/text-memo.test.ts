import { expect, test } from "bun:test";
import { memoByText } from "../src/text-memo";

test("a text's result is worked out once, until more texts than kept have come", () => {
  const calls: string[] = [];
  const upper = memoByText((t) => (calls.push(t), t.toUpperCase()), 2);
  expect([upper("a"), upper("a"), upper("b"), upper("a")]).toEqual(["A", "A", "B", "A"]);
  expect(calls).toEqual(["a", "b"]);
  // a third text forgets the two kept: each is worked out again once
  expect([upper("c"), upper("a"), upper("c")]).toEqual(["C", "A", "C"]);
  expect(calls).toEqual(["a", "b", "c", "a"]);
});
