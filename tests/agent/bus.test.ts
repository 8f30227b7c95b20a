// The agent's bus: every turn's events, to all listeners or to one user's; a listener that
// throws is reported and the rest still hear; 500 listeners each hear every event once.
import { expect, test } from "bun:test";
import { TurnBus, type TurnEvent, type TurnInfo } from "../../src/agent/bus";

const turn = (userId: string): TurnInfo => ({ id: `resp_${userId}`, threadId: "t", userId, channel: "responses", surfacesGates: false, startedAt: Date.now() });
const delta = (d: string): TurnEvent => ({ type: "text.delta", itemId: "i", delta: d });

test("listeners of all turns and of one user's", () => {
  const bus = new TurnBus();
  const all: string[] = [];
  const alice: string[] = [];
  bus.subscribe((t, e) => all.push(`${t.userId}:${e.type}`));
  const stop = bus.subscribe((t, e) => alice.push(`${t.userId}:${e.type}`), { userId: "alice" });
  bus.publish(turn("alice"), delta("a"));
  bus.publish(turn("bob"), delta("b"));
  stop();
  bus.publish(turn("alice"), delta("c"));
  expect(all).toEqual(["alice:text.delta", "bob:text.delta", "alice:text.delta"]);
  expect(alice).toEqual(["alice:text.delta"]);
});

test("a listener that throws is reported; the others and the publisher go on", () => {
  const bus = new TurnBus();
  const errors: unknown[] = [];
  bus.onListenerError((e) => errors.push(e));
  const heard: string[] = [];
  bus.subscribe(() => {
    throw new Error("broken listener");
  });
  bus.subscribe((_, e) => heard.push(e.type));
  expect(() => bus.publish(turn("u"), delta("x"))).not.toThrow();
  bus.publish(turn("u"), delta("y"));
  expect(heard).toEqual(["text.delta", "text.delta"]);
  expect(errors).toHaveLength(2);
});

test("500 listeners each hear every event, in order, and publishing stays cheap", () => {
  const bus = new TurnBus();
  const counts = new Array(500).fill(0);
  const last = new Array(500).fill("");
  for (let i = 0; i < counts.length; i++) {
    bus.subscribe((_, e) => {
      counts[i]++;
      if (e.type === "text.delta") last[i] = e.delta;
    }, i % 2 ? { userId: "u" } : undefined);
  }
  const t0 = performance.now();
  for (let n = 0; n < 1000; n++) bus.publish(turn("u"), delta(String(n)));
  const perEvent = (performance.now() - t0) / 1000;
  expect(counts.every((c) => c === 1000)).toBe(true);
  expect(last.every((d) => d === "999")).toBe(true);
  // a call per listener: well under a millisecond for 500 of them (generous, shared machines)
  expect(perEvent).toBeLessThan(2);
});
