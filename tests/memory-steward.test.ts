// The memory steward never holds the event loop with a long full collection while the
// service works (a request came, or LLM streams are open): on a large heap it asks for a
// concurrent one, and the full collection and the shrink wait for the first quiet tick.
import { expect, test } from "bun:test";
import { startMemorySteward, type Collector } from "../src/memory-steward";

function recorder(heapMb: () => number) {
  const calls: string[] = [];
  const waiters: { check: () => boolean; done: () => void }[] = [];
  const note = (name: string) => () => {
    calls.push(name);
    for (const w of [...waiters]) if (w.check()) (waiters.splice(waiters.indexOf(w), 1), w.done());
  };
  const collector: Collector = { full: note("full"), concurrent: note("concurrent"), shrink: note("shrink"), heapMb };
  const until = (check: () => boolean) => (check() ? Promise.resolve() : new Promise<void>((done) => waiters.push({ check, done })));
  return { calls, collector, until };
}

test("busy with a large heap: concurrent collections only; the first quiet tick collects fully and shrinks", async () => {
  const { calls, collector, until } = recorder(() => 300);
  let busy = true;
  const steward = startMemorySteward({ busy: () => busy, intervalMs: 2, collector });
  try {
    await until(() => calls.length >= 5);
    expect(calls.slice(0, 5)).toEqual(["concurrent", "concurrent", "concurrent", "concurrent", "concurrent"]);
    busy = false;
    await until(() => calls.includes("shrink"));
    expect(calls.slice(calls.indexOf("full"))).toEqual(["full", "shrink"]);
    expect(calls.filter((c) => c === "full")).toHaveLength(1);

    // a request since the last tick counts as work too, and the quiet tick after it collects again
    const before = calls.length;
    steward.touch();
    await until(() => calls.filter((c) => c === "shrink").length === 2);
    expect(calls.slice(before)).toEqual(["concurrent", "full", "shrink"]);
  } finally {
    steward.stop();
  }
});

test("busy with a small heap: a full collection each tick, which is quick there", async () => {
  let heap = 20;
  const { calls, collector, until } = recorder(() => heap);
  const steward = startMemorySteward({ busy: () => true, intervalMs: 2, collector });
  try {
    await until(() => calls.length >= 3);
    expect(calls.slice(0, 3)).toEqual(["full", "full", "full"]);
    heap = 200; // hundreds of streams open
    const before = calls.length;
    await until(() => calls.length >= before + 3);
    expect(calls.slice(before, before + 3)).toEqual(["concurrent", "concurrent", "concurrent"]);
  } finally {
    steward.stop();
  }
});
