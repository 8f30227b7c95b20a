/**
 * Keeps resident memory flat under load. JavaScriptCore collects lazily and the allocators
 * keep freed pages, so a busy service grows well past what it uses. Once a second, if work
 * was done since the last tick, this asks for a collection (which also has mimalloc return
 * fragmented memory). On the first quiet tick after work it collects once more and asks
 * JavaScriptCore to shrink its heap and drop cold JIT code (`Bun.shrink`, about 10 MB after
 * a burst); it costs nothing while the service stays idle.
 */
export function startMemorySteward(intervalMs = 1_000): { touch(): void; stop(): void } {
  let busy = false;
  // false at first: what starting up left behind goes back too
  let settled = false;
  const timer = setInterval(() => {
    if (!busy) {
      // the first quiet tick after work: give the freed heap back to the system
      if (!settled) {
        settled = true;
        Bun.gc(true);
        Bun.shrink?.();
      }
      return;
    }
    busy = false;
    settled = false;
    Bun.gc(true);
  }, intervalMs);
  timer.unref();
  return {
    touch: () => void (busy = true),
    stop: () => clearInterval(timer),
  };
}
