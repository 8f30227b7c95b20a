// The memory steward never holds the event loop with a full collection while many LLM
// streams are open: then it asks for a concurrent one, and the quiet-time collection waits
// for the first quiet tick. Under ordinary load (a request came, a few streams) it collects
// fully, which is quick there and keeps RSS down. The first quiet tick settles (a full
// collection, mimalloc's too, and the binary's pages); the compiled code is dropped (the
// shrink) only after a run of quiet ticks, so that work coming back soon finds it compiled.
import { expect, test } from "bun:test";
import { startMemorySteward, type Collector } from "../src/memory-steward";

function recorder() {
  const calls: string[] = [];
  const waiters: { check: () => boolean; done: () => void }[] = [];
  const note = (name: string) => () => {
    calls.push(name);
    for (const w of [...waiters]) if (w.check()) (waiters.splice(waiters.indexOf(w), 1), w.done());
  };
  const collector: Collector = { full: note("full"), concurrent: note("concurrent"), settle: note("settle"), shrink: note("shrink") };
  const until = (check: () => boolean) => (check() ? Promise.resolve() : new Promise<void>((done) => waiters.push({ check, done })));
  return { calls, collector, until };
}

test("many streams open: concurrent collections only; the first quiet tick settles, the shrink comes after the quiet run, once", async () => {
  const { calls, collector, until } = recorder();
  let open = 400;
  const steward = startMemorySteward({ openStreams: () => open, intervalMs: 2, shrinkAfterQuietTicks: 5, collector });
  try {
    await until(() => calls.length >= 5);
    expect(calls.slice(0, 5)).toEqual(["concurrent", "concurrent", "concurrent", "concurrent", "concurrent"]);
    open = 0;
    await until(() => calls.includes("shrink"));
    await Bun.sleep(30); // quiet ticks after it do nothing
    expect(calls.slice(calls.indexOf("settle") - 1)).toEqual(["concurrent", "settle", "shrink"]);
    expect(calls.filter((c) => c === "full")).toHaveLength(0);
  } finally {
    steward.stop();
  }
});

test("work within the quiet run keeps the compiled code: no shrink until a whole run of quiet ticks", async () => {
  const { calls, collector, until } = recorder();
  const steward = startMemorySteward({ intervalMs: 2, shrinkAfterQuietTicks: 30, collector });
  try {
    await until(() => calls.includes("settle")); // what starting up left behind
    // work every few ticks, for longer than the quiet run: the code is never dropped
    const end = Date.now() + 100;
    while (Date.now() < end) {
      steward.touch();
      await Bun.sleep(8);
    }
    expect(calls).not.toContain("shrink");
    expect(calls.filter((c) => c === "settle").length).toBeGreaterThan(1);
    await until(() => calls.includes("shrink"));
    expect(calls.at(-1)).toBe("shrink");
    expect(calls.at(-2)).toBe("settle");
  } finally {
    steward.stop();
  }
});

test("ordinary load (a request since the last tick, a few streams): a full collection, then the quiet tick's settle", async () => {
  const { calls, collector, until } = recorder();
  let open = 0;
  const steward = startMemorySteward({ openStreams: () => open, intervalMs: 2, shrinkAfterQuietTicks: 1_000, collector });
  try {
    await until(() => calls.includes("settle")); // what starting up left behind
    let before = calls.length;
    steward.touch();
    await until(() => calls.filter((c) => c === "settle").length === 2);
    expect(calls.slice(before)).toEqual(["full", "settle"]);
    before = calls.length;
    open = 8;
    await until(() => calls.length >= before + 2);
    expect(calls.slice(before, before + 2)).toEqual(["full", "full"]);
  } finally {
    steward.stop();
  }
});
