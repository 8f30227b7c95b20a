import { fullGC } from "bun:jsc";
import { releaseEmbeddedPages } from "./embedded-pages";

/** The collector's controls: `bun:jsc` and `Bun` in the service, recorders in tests. */
export interface Collector {
  /**
   * A full collection of JavaScriptCore's heap, holding the event loop until it is done
   * (`fullGC`: 9–22 ms under load here, where `Bun.gc(true)`, which also has mimalloc give
   * back its free pages, held it 11–43 ms: docs/performance.md).
   */
  full(): void;
  /** A collection that JavaScriptCore runs on its own thread, beside the event loop (`Bun.gc(false)`: about 1 ms on it). */
  concurrent(): void;
  /**
   * Everything given back once the service is quiet: a full collection with mimalloc's
   * (`Bun.gc(true)`), then the freed heap, cold JIT code and the binary's pages read already
   * (`Bun.shrink`, src/embedded-pages.ts).
   */
  shrink(): void;
}

const bunCollector: Collector = {
  full: () => void fullGC(),
  concurrent: () => Bun.gc(false),
  shrink: () => (Bun.gc(true), Bun.shrink?.(), releaseEmbeddedPages()),
};

/**
 * From this many open LLM streams on, a collection while busy is a concurrent one: a full one
 * would hold the event loop (and every stream) for tens of ms once a second, marking the
 * streams' objects and finalizing their native ones.
 */
const MANY_STREAMS = 64;

/**
 * Keeps resident memory flat under load. JavaScriptCore collects lazily and the allocators
 * keep freed pages, so a busy service grows well past what it uses. Once a second, if the
 * service worked since the last tick or still works (LLM streams open), it asks for a
 * collection: a full one under ordinary load, where it is quick; a concurrent one, which
 * does not hold up the turns in flight, while many streams are open (a full one held them
 * 50–130 ms once a second with 1,000 streams). On the first quiet tick after work it collects
 * fully with mimalloc's collection too, asks JavaScriptCore to shrink its heap and drop cold
 * JIT code (about 10 MB after a burst), and hands back the binary's own pages read since
 * (about 17 MB after start: src/embedded-pages.ts); nothing waits on the event loop then.
 * It costs nothing while the service stays idle.
 */
export function startMemorySteward(opts: { openStreams?: () => number; intervalMs?: number; collector?: Collector } = {}): { touch(): void; stop(): void } {
  const collector = opts.collector ?? bunCollector;
  let touched = false;
  // false at first: what starting up left behind goes back too
  let settled = false;
  const timer = setInterval(() => {
    const streams = opts.openStreams?.() ?? 0;
    const working = touched || streams > 0;
    touched = false;
    if (working) {
      settled = false;
      if (streams < MANY_STREAMS) collector.full();
      else collector.concurrent();
      return;
    }
    // the first quiet tick after work: give the freed heap back to the system
    if (!settled) {
      settled = true;
      collector.shrink();
    }
  }, opts.intervalMs ?? 1_000);
  timer.unref();
  return {
    touch: () => void (touched = true),
    stop: () => clearInterval(timer),
  };
}
