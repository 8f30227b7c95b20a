// The event-loop pause sampler: a thread busy for 80 ms is a pause held by the service's own
// work; a thread blocked for 80 ms without using the CPU (as when other processes hold it)
// is a pause, but not one the service held.
import { expect, test } from "bun:test";
import { watchLoopPauses } from "../../src/observability/loop-pauses";

/** Resolves after the sampler's timer has fired a few more times. */
const ticks = () => new Promise((resolve) => setTimeout(resolve, 50));

/** Keeps the thread busy for `ms` of its own CPU time (JavaScript, or a full collection), however long other processes make it take. */
function busyFor(ms: number): void {
  const cpu = () => process.threadCpuUsage().user / 1000 + process.threadCpuUsage().system / 1000;
  const start = cpu();
  while (cpu() - start < ms);
}

test("work on the thread counts as held; a blocked, idle thread only as late", async () => {
  const w = watchLoopPauses(5, 5);
  try {
    await ticks();
    busyFor(80);
    await ticks();
    const busy = w.max();
    expect(busy.pauseMs).toBeGreaterThanOrEqual(70);
    expect(busy.heldMs).toBeGreaterThanOrEqual(60);
    w.stop();

    const idle = watchLoopPauses(5, 5);
    await ticks();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 80); // blocked, using no CPU
    await ticks();
    const blocked = idle.max();
    idle.stop();
    expect(blocked.pauseMs).toBeGreaterThanOrEqual(70);
    expect(blocked.heldMs).toBeLessThan(30);
  } finally {
    w.stop();
  }
});

test("a quiet thread is looked at less often, and work brings the short period back", async () => {
  const w = watchLoopPauses(5, 5, 200);
  try {
    expect(w.periodMs()).toBe(5);
    await Bun.sleep(1_300);
    expect(w.periodMs()).toBe(200);

    // a pause while quiet is still seen when it spans the timer's due time, and ends the quiet
    busyFor(300);
    await Bun.sleep(50);
    expect(w.max().pauseMs).toBeGreaterThanOrEqual(90);
    expect(w.max().heldMs).toBeGreaterThanOrEqual(90);
    expect(w.periodMs()).toBe(5);
  } finally {
    w.stop();
  }
});

test("a request wakes a quiet watcher at once", async () => {
  const w = watchLoopPauses(5, 5, 60_000);
  try {
    await Bun.sleep(1_100);
    expect(w.periodMs()).toBe(60_000);
    w.touch();
    expect(w.periodMs()).toBe(5);
    // ticking again: a pause now is seen without waiting for the quiet period's tick
    busyFor(60);
    await Bun.sleep(30);
    expect(w.max().pauseMs).toBeGreaterThanOrEqual(40);
  } finally {
    w.stop();
  }
});
