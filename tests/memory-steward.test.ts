// The memory steward never holds the event loop with a full collection while the service
// works (a request came, or LLM streams are open): then it asks for a concurrent one, and
// the full collection and the shrink wait for the first quiet tick.
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

test("busy: concurrent collections only; the first quiet tick collects fully and shrinks", async () => {
  const { calls, collector, until } = recorder();
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
