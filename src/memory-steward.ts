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
   * What the last work left behind given back, on the first quiet second: a full collection
   * with mimalloc's (`Bun.gc(true)`), then the binary's pages read already
   * (src/embedded-pages.ts). The compiled code stays.
   */
  settle(): void;
  /**
   * Everything given back once the service has been quiet a while: JavaScriptCore's heap
   * shrunk and all its compiled code dropped (`Bun.shrink`), then the binary's pages again.
   */
  shrink(): void;
}

const bunCollector: Collector = {
  full: () => void fullGC(),
  concurrent: () => Bun.gc(false),
  settle: () => (Bun.gc(true), releaseEmbeddedPages()),
  shrink: () => (Bun.shrink?.(), releaseEmbeddedPages()),
};

/**
 * From this many open LLM streams on, a collection while busy is a concurrent one: a full one
 * would hold the event loop (and every stream) for tens of ms once a second, marking the
 * streams' objects and finalizing their native ones.
 */
const MANY_STREAMS = 64;

/**
 * Quiet ticks before the compiled code is dropped. Dropped, it is compiled anew as turns come:
 * a burst of 1,000 streamed turns a few seconds after others took about twice the CPU a turn
 * to start (0.34–0.48 ms against 0.18–0.25 ms), and the first turn after a pause 7 ms instead
 * of 3 (docs/performance.md). Kept, RSS at rest is 12–16 MB higher after many turns, for
 * this minute. JavaScriptCore's own code ageing lets the optimised code go at about the same
 * time without it (after 45–65 s of quiet, measured), so keeping the code longer would take
 * one of its options too (docs/performance.md).
 */
const SHRINK_AFTER_QUIET_TICKS = 60;

/**
 * Keeps resident memory flat under load. JavaScriptCore collects lazily and the allocators
 * keep freed pages, so a busy service grows well past what it uses. Once a second, if the
 * service worked since the last tick or still works (LLM streams open), it asks for a
 * collection: a full one under ordinary load, where it is quick; a concurrent one, which
 * does not hold up the turns in flight, while many streams are open (a full one held them
 * 50–130 ms once a second with 1,000 streams). On the first quiet tick after work it collects
 * fully with mimalloc's collection too and hands back the binary's own pages read since
 * (about 17 MB after start: src/embedded-pages.ts); after a minute of quiet it asks
 * JavaScriptCore to shrink its heap and drop its compiled code (12–16 MB after many turns).
 * Nothing waits on the event loop then. It costs nothing while the service stays idle.
 */
export function startMemorySteward(
  opts: { openStreams?: () => number; intervalMs?: number; shrinkAfterQuietTicks?: number; collector?: Collector } = {},
): { touch(): void; stop(): void } {
  const collector = opts.collector ?? bunCollector;
  const shrinkAfter = opts.shrinkAfterQuietTicks ?? SHRINK_AFTER_QUIET_TICKS;
  let touched = false;
  // quiet ticks since the last work; 0 at first: what starting up left behind goes back too
  let quiet = 0;
  const timer = setInterval(() => {
    const streams = opts.openStreams?.() ?? 0;
    const working = touched || streams > 0;
    touched = false;
    if (working) {
      quiet = 0;
      if (streams < MANY_STREAMS) collector.full();
      else collector.concurrent();
      return;
    }
    if (quiet > shrinkAfter) return;
    quiet++;
    if (quiet === 1) collector.settle();
    if (quiet === shrinkAfter) collector.shrink();
  }, opts.intervalMs ?? 1_000);
  timer.unref();
  return {
    touch: () => void (touched = true),
    stop: () => clearInterval(timer),
  };
}
