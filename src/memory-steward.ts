/** The collector's controls: `Bun.gc` and `Bun.shrink` in the service, recorders in tests. */
export interface Collector {
  /** A full collection that holds the event loop until it is done (`Bun.gc(true)`: 50–170 ms with a heap of 100 MB). */
  full(): void;
  /** A collection that JavaScriptCore runs on its own thread, beside the event loop (`Bun.gc(false)`: about 1 ms on it). */
  concurrent(): void;
  /** Gives the freed heap and cold JIT code back to the system (`Bun.shrink`). */
  shrink(): void;
}

const bunCollector: Collector = {
  full: () => Bun.gc(true),
  concurrent: () => Bun.gc(false),
  shrink: () => Bun.shrink?.(),
};

/**
 * Keeps resident memory flat under load. JavaScriptCore collects lazily and the allocators
 * keep freed pages, so a busy service grows well past what it uses. Once a second, if the
 * service worked since the last tick or still works (`busy`: LLM streams open), it asks for a
 * concurrent collection, which does not hold up the turns in flight (a full one did, for
 * 50–130 ms once a second with 1,000 streams open). On the first quiet tick after work it
 * runs a full collection (which also has mimalloc return fragmented memory) and asks
 * JavaScriptCore to shrink its heap and drop cold JIT code (about 10 MB after a burst);
 * nothing waits on the event loop then. It costs nothing while the service stays idle.
 */
export function startMemorySteward(opts: { busy?: () => boolean; intervalMs?: number; collector?: Collector } = {}): { touch(): void; stop(): void } {
  const collector = opts.collector ?? bunCollector;
  let touched = false;
  // false at first: what starting up left behind goes back too
  let settled = false;
  const timer = setInterval(() => {
    const working = touched || (opts.busy?.() ?? false);
    touched = false;
    if (working) {
      settled = false;
      collector.concurrent();
      return;
    }
    // the first quiet tick after work: give the freed heap back to the system
    if (!settled) {
      settled = true;
      collector.full();
      collector.shrink();
    }
  }, opts.intervalMs ?? 1_000);
  timer.unref();
  return {
    touch: () => void (touched = true),
    stop: () => clearInterval(timer),
  };
}
