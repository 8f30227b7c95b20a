/**
 * One holder at a time per key (a thread, a user): later callers wait their turn, in
 * arrival order. The lock is released when `fn` settles, whatever it does.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  async hold<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
