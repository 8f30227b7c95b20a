import { expect, test } from "bun:test";
import { Pacer } from "../src/pacer";

test("a request alone starts at once", async () => {
  const pacer = new Pacer(2);
  expect(pacer.turn()).toBeUndefined();
  // the next turn of the event loop: alone again
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  expect(pacer.turn()).toBeUndefined();
});

test("a burst starts a batch per turn of the event loop, in arrival order", async () => {
  const pacer = new Pacer(2);
  // counts the turns of the event loop
  let turn = 0;
  const spin = () => void (++turn < 50 && setImmediate(spin));
  setImmediate(spin);
  const started: [number, number][] = [];
  await Promise.all(
    Array.from({ length: 5 }, async (_, i) => {
      await pacer.turn();
      started.push([i, turn]);
    }),
  );
  expect(started.map(([i]) => i)).toEqual([0, 1, 2, 3, 4]);
  const turns = started.map(([, t]) => t);
  // two at once, then two a turn later, then the last
  expect(turns[0]).toBe(0);
  expect(turns[1]).toBe(0);
  expect(turns[2]).toBeGreaterThan(0);
  expect(turns[3]).toBe(turns[2]!);
  expect(turns[4]).toBeGreaterThan(turns[3]!);
});
