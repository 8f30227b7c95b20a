// The memory steward never holds the event loop with a full collection while many LLM
// streams are open: then it asks for a concurrent one, and the full collection and the
// shrink wait for the first quiet tick. Under ordinary load (a request came, a few streams)
// it collects fully, which is quick there and keeps RSS down. The quiet tick's shrink is a
// full collection of its own (mimalloc's too) before it gives memory back.
import { expect, test } from "bun:test";
import { startMemorySteward, type Collector } from "../src/memory-steward";

function recorder() {
  const calls: string[] = [];
  const waiters: { check: () => boolean; done: () => void }[] = [];
  const note = (name: string) => () => {
    calls.push(name);
    for (const w of [...waiters]) if (w.check()) (waiters.splice(waiters.indexOf(w), 1), w.done());
  };
  const collector: Collector = { full: note("full"), concurrent: note("concurrent"), shrink: note("shrink") };
  const until = (check: () => boolean) => (check() ? Promise.resolve() : new Promise<void>((done) => waiters.push({ check, done })));
  return { calls, collector, until };
}

test("many streams open: concurrent collections only; the first quiet tick shrinks, once", async () => {
  const { calls, collector, until } = recorder();
  let open = 400;
  const steward = startMemorySteward({ openStreams: () => open, intervalMs: 2, collector });
  try {
    await until(() => calls.length >= 5);
    expect(calls.slice(0, 5)).toEqual(["concurrent", "concurrent", "concurrent", "concurrent", "concurrent"]);
    open = 0;
    await until(() => calls.includes("shrink"));
    await Bun.sleep(20); // quiet ticks after it do nothing
    expect(calls.slice(calls.indexOf("shrink") - 1)).toEqual(["concurrent", "shrink"]);
    expect(calls.filter((c) => c === "full")).toHaveLength(0);
  } finally {
    steward.stop();
  }
});

test("ordinary load (a request since the last tick, a few streams): a full collection, then the quiet tick's shrink", async () => {
  const { calls, collector, until } = recorder();
  let open = 0;
  const steward = startMemorySteward({ openStreams: () => open, intervalMs: 2, collector });
  try {
    await until(() => calls.includes("shrink")); // what starting up left behind
    let before = calls.length;
    steward.touch();
    await until(() => calls.filter((c) => c === "shrink").length === 2);
    expect(calls.slice(before)).toEqual(["full", "shrink"]);
    before = calls.length;
    open = 8;
    await until(() => calls.length >= before + 2);
    expect(calls.slice(before, before + 2)).toEqual(["full", "full"]);
  } finally {
    steward.stop();
  }
});
