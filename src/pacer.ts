/**
 * Work that arrives in a flood goes on a batch per turn of the event loop: between batches
 * Bun serves timers, new requests and everything else, where it would otherwise work
 * through the whole flood first. Bun runs the tasks other threads hand it (a fetch body's
 * chunks, from its HTTP client thread) for as long as more keep coming, so without a limit
 * one turn of the loop lasted as long as the arrivals outpaced it. Work that arrives alone
 * goes on at once; a batch's turn comes in the loop's `setImmediate` phase.
 *
 * Used for a burst of turns posted at once (each about half a millisecond before its model
 * request goes out) and for the LLM streams' reads (about 30 µs each, twenty thousand a
 * second with 1,000 streams).
 */
export class Pacer {
  readonly #queue: (() => void)[] = [];
  /** How many went on in this turn of the event loop. */
  #started = 0;

  /** @param perTurn how many go on in one turn of the event loop. */
  constructor(private readonly perTurn: number) {}

  /** Undefined when the caller may go on now, else when it may. */
  turn(): Promise<void> | undefined {
    if (this.#started < this.perTurn && !this.#queue.length) {
      if (this.#started++ === 0) setImmediate(this.#next);
      return undefined;
    }
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#queue.push(resolve);
    return promise;
  }

  readonly #next = () => {
    this.#started = 0;
    if (!this.#queue.length) return;
    for (const start of this.#queue.splice(0, this.perTurn)) start();
    this.#started = this.perTurn;
    setImmediate(this.#next);
  };
}
