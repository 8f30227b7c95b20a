/**
 * Requests that arrive in a burst (a thousand turns posted at once) start a few at a time,
 * one batch per turn of the event loop: between batches Bun serves timers, the sockets and
 * the streams already running, where it would otherwise work through the whole burst first
 * (about half a millisecond a turn before its model request goes out). A request that
 * arrives alone starts at once.
 */
export class Pacer {
  readonly #queue: (() => void)[] = [];
  /** How many have started in this turn of the event loop. */
  #started = 0;

  /** @param perTurn how many start in one turn of the event loop: 10 turns take about 5 ms here. */
  constructor(private readonly perTurn = 10) {}

  /** Undefined when the caller may start now, else when it may. */
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
