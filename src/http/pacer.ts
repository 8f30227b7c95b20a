/**
 * Requests that arrive in a burst (a thousand turns posted at once) start one per turn of the
 * event loop: between them Bun serves timers, the sockets and the streams already running,
 * where it would otherwise work through the whole burst first (about half a millisecond a
 * turn before its model request goes out). A request that arrives alone starts at once.
 */
export class Pacer {
  readonly #queue: (() => void)[] = [];
  /** Nothing has started in this turn of the event loop. */
  #open = true;

  /** Undefined when the caller may start now, else when it may. */
  turn(): Promise<void> | undefined {
    if (this.#open && !this.#queue.length) {
      this.#open = false;
      setImmediate(this.#next);
      return undefined;
    }
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#queue.push(resolve);
    return promise;
  }

  readonly #next = () => {
    const start = this.#queue.shift();
    if (!start) {
      this.#open = true;
      return;
    }
    start();
    setImmediate(this.#next);
  };
}
