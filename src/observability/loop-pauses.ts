/** The longest hold-ups of the event loop in the last few seconds, in ms. */
export interface LoopPauses {
  /** How late the timer fired: what a request arriving then waited, whatever the cause. */
  pauseMs: number;
  /** The part of that lateness this thread spent working (JavaScript, a collection), not waiting for a CPU that other processes held. */
  heldMs: number;
}

/**
 * How long the event loop was held up: a timer due every `everyMs` notes how late it fires
 * (garbage collection, a long synchronous task, or a machine too busy to run the process)
 * and how much CPU time the thread used meanwhile (`process.threadCpuUsage`), which tells
 * the service's own work from other processes' turn. The worst of each second is kept for
 * `windowS` seconds. Costs a timer callback every 10 ms; the timer never keeps the process
 * alive.
 */
export function watchLoopPauses(everyMs = 10, windowS = 5): { max(): LoopPauses; stop(): void } {
  const late = new Float64Array(windowS);
  const held = new Float64Array(windowS);
  const second = new Float64Array(windowS).fill(-1);
  const threadCpuMs = () => {
    const u = process.threadCpuUsage?.() ?? process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let due = performance.now() + everyMs;
  let cpu = threadCpuMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const nowCpu = threadCpuMs();
    const lateness = Math.max(0, now - due);
    const worked = Math.min(lateness, nowCpu - cpu);
    due = now + everyMs;
    cpu = nowCpu;
    const s = Math.floor(now / 1000);
    const slot = s % windowS;
    if (second[slot] !== s) {
      second[slot] = s;
      late[slot] = 0;
      held[slot] = 0;
    }
    if (lateness > late[slot]!) late[slot] = lateness;
    if (worked > held[slot]!) held[slot] = worked;
  }, everyMs);
  timer.unref();
  return {
    max() {
      const s = Math.floor(performance.now() / 1000);
      const out = { pauseMs: 0, heldMs: 0 };
      for (let i = 0; i < windowS; i++) {
        if (s - second[i]! >= windowS) continue;
        out.pauseMs = Math.max(out.pauseMs, late[i]!);
        out.heldMs = Math.max(out.heldMs, held[i]!);
      }
      return { pauseMs: Math.round(out.pauseMs * 10) / 10, heldMs: Math.round(out.heldMs * 10) / 10 };
    },
    stop: () => clearInterval(timer),
  };
}
