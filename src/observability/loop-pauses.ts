/**
 * How long the event loop was held up: a timer due every `everyMs` notes how late it fires
 * (garbage collection, a long synchronous task), and the worst lateness of each second is
 * kept for `windowS` seconds. Costs a timer callback every 10 ms; the timer never keeps the
 * process alive.
 */
export function watchLoopPauses(everyMs = 10, windowS = 5): { maxMs(): number; stop(): void } {
  const worst = new Float64Array(windowS);
  const second = new Float64Array(windowS).fill(-1);
  let due = performance.now() + everyMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - due);
    due = now + everyMs;
    const s = Math.floor(now / 1000);
    const slot = s % windowS;
    if (second[slot] !== s) {
      second[slot] = s;
      worst[slot] = 0;
    }
    if (late > worst[slot]!) worst[slot] = late;
  }, everyMs);
  timer.unref();
  return {
    maxMs() {
      const s = Math.floor(performance.now() / 1000);
      let max = 0;
      for (let i = 0; i < windowS; i++) if (s - second[i]! < windowS && worst[i]! > max) max = worst[i]!;
      return Math.round(max * 10) / 10;
    },
    stop: () => clearInterval(timer),
  };
}
