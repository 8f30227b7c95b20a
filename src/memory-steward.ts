/**
 * Keeps resident memory flat under load. JavaScriptCore collects lazily and the allocators
 * keep freed pages, so a busy service grows well past what it uses. Once a second, if work
 * was done since the last tick, this asks for a collection (which also has mimalloc return
 * fragmented memory); it costs nothing when the service is idle.
 */
export function startMemorySteward(intervalMs = 1_000): { touch(): void; stop(): void } {
  let busy = false;
  const timer = setInterval(() => {
    if (!busy) return;
    busy = false;
    Bun.gc(true);
  }, intervalMs);
  timer.unref();
  return {
    touch: () => void (busy = true),
    stop: () => clearInterval(timer),
  };
}
