/** The longest hold-ups of the event loop in the last few seconds, in ms. */
export interface LoopPauses {
  /** How late the timer fired: what a request arriving then waited, whatever the cause. */
  pauseMs: number;
  /** The part of that lateness this thread spent working (JavaScript, a collection), not waiting for a CPU that other processes held. */
  heldMs: number;
}

/** The thread is quiet when it used less than this share of a CPU over the last... */
const QUIET_SHARE = 0.05;
/** ...this long (judged over a second: the kernel counts a thread's CPU time in steps of a few ms). */
const QUIET_WINDOW_MS = 1_000;

/**
 * How long the event loop was held up: a timer due every `everyMs` notes how late it fires
 * (garbage collection, a long synchronous task, or a machine too busy to run the process)
 * and how much CPU time the thread used meanwhile (`process.threadCpuUsage`), which tells
 * the service's own work from other processes' turn. The worst of each second is kept for
 * `windowS` seconds.
 *
 * After a quiet second (the thread used under 5 % of a CPU, whatever the work that wakes it:
 * a request, a routine, a webhook's job), the timer is due every `quietEveryMs` instead: no
 * one waits on a quiet service, and an idle one woke 100 times a second for this alone
 * (docs/performance.md). A pause is still seen then if it spans the timer's due time. A
 * request brings the short period back at once (`touch`), and other work at the next tick that
 * finds it. The timer never keeps the process alive.
 */
export function watchLoopPauses(everyMs = 10, windowS = 5, quietEveryMs = 1_000): { max(): LoopPauses; touch(): void; periodMs(): number; stop(): void } {
  const late = new Float64Array(windowS);
  const held = new Float64Array(windowS);
  const second = new Float64Array(windowS).fill(-1);
  const threadCpuMs = () => {
    const u = process.threadCpuUsage?.() ?? process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let last = performance.now();
  let period = everyMs;
  let cpu = threadCpuMs();
  // the window over which the thread's share of a CPU is judged
  let windowStart = last;
  let windowCpu = cpu;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    timer = setTimeout(tick, period);
    timer.unref();
  };
  const tick = () => {
    const now = performance.now();
    const nowCpu = threadCpuMs();
    const lateness = Math.max(0, now - last - period);
    const used = nowCpu - cpu;
    const worked = Math.min(lateness, used);
    last = now;
    cpu = nowCpu;
    // judged each second, and at each tick while quiet (work ends the quiet at once)
    if (now - windowStart >= QUIET_WINDOW_MS || period === quietEveryMs) {
      period = nowCpu - windowCpu < (now - windowStart) * QUIET_SHARE ? quietEveryMs : everyMs;
      windowStart = now;
      windowCpu = nowCpu;
    }
    const s = Math.floor(now / 1000);
    const slot = s % windowS;
    if (second[slot] !== s) {
      second[slot] = s;
      late[slot] = 0;
      held[slot] = 0;
    }
    if (lateness > late[slot]!) late[slot] = lateness;
    if (worked > held[slot]!) held[slot] = worked;
    arm();
  };
  arm();
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
    /** Work arrived (a request): a quiet watcher looks every `everyMs` again from now on. */
    touch() {
      if (period === everyMs) return;
      clearTimeout(timer);
      period = everyMs;
      last = windowStart = performance.now();
      cpu = windowCpu = threadCpuMs();
      arm();
    },
    /** How often the timer is due now. */
    periodMs: () => period,
    stop: () => clearTimeout(timer),
  };
}
