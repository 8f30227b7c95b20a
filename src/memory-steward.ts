/** The collector's controls: `Bun.gc` and `Bun.shrink` in the service, recorders in tests. */
export interface Collector {
  /** A full collection that holds the event loop until it is done (`Bun.gc(true)`: 50–170 ms with a heap of 100 MB). */
  full(): void;
  /** A collection that JavaScriptCore runs on its own thread, beside the event loop (`Bun.gc(false)`: about 1 ms on it). */
  concurrent(): void;
  /** Gives the freed heap and cold JIT code back to the system (`Bun.shrink`). */
  shrink(): void;
  /** The JavaScript heap in use now, garbage included, in MB. */
  heapMb(): number;
}

const bunCollector: Collector = {
  full: () => Bun.gc(true),
  concurrent: () => Bun.gc(false),
  shrink: () => Bun.shrink?.(),
  heapMb: () => process.memoryUsage().heapUsed / 1_048_576,
};

/**
 * While busy, a full collection is run only on a heap up to this size: marking costs the
 * thread about 0.4 ms a MB of live heap here, so it holds the event loop 20 ms at most.
 * Ordinary load (turns that end in milliseconds) stays below it; hundreds of open streams
 * do not.
 */
const FULL_WHILE_BUSY_MAX_MB = 48;

/**
 * Keeps resident memory flat under load. JavaScriptCore collects lazily and the allocators
 * keep freed pages, so a busy service grows well past what it uses. Once a second, if the
 * service worked since the last tick or still works (`busy`: LLM streams open), it asks for
 * a collection (which also has mimalloc return fragmented memory): a full one while the heap
 * is small enough for it to be quick, else a concurrent one, which does not hold up the turns
 * in flight (a full one held them 50–130 ms once a second with 1,000 streams open). On the
 * first quiet tick after work it runs a full collection and asks JavaScriptCore to shrink its
 * heap and drop cold JIT code (about 10 MB after a burst); nothing waits on the event loop
 * then. It costs nothing while the service stays idle.
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
      if (collector.heapMb() <= FULL_WHILE_BUSY_MAX_MB) collector.full();
      else collector.concurrent();
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
