import { expect, test } from "bun:test";
import { memoByObject, memoByText } from "../src/memo";

test("a text's result is worked out once, until more texts than kept have come", () => {
  const calls: string[] = [];
  const upper = memoByText((t) => (calls.push(t), t.toUpperCase()), 2);
  expect([upper("a"), upper("a"), upper("b"), upper("a")]).toEqual(["A", "A", "B", "A"]);
  expect(calls).toEqual(["a", "b"]);
  // a third text forgets the two kept: each is worked out again once
  expect([upper("c"), upper("a"), upper("c")]).toEqual(["C", "A", "C"]);
  expect(calls).toEqual(["a", "b", "c", "a"]);
});

test("an object's result is worked out once for as long as the object is the same one", () => {
  const calls: object[] = [];
  const keys = memoByObject((o: { n: number }) => (calls.push(o), Object.keys(o).join()));
  const a = { n: 1 };
  const b = { n: 1 };
  expect([keys(a), keys(a), keys(b), keys(a)]).toEqual(["n", "n", "n", "n"]);
  expect(calls).toEqual([a, b]);
  expect(calls[0]).toBe(a);
});
