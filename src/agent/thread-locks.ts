/** One turn at a time per thread: later requests wait their turn, in arrival order. */
export class ThreadLocks {
  readonly #tails = new Map<string, Promise<void>>();

  async acquire(threadId: string): Promise<() => void> {
    const previous = this.#tails.get(threadId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#tails.set(threadId, tail);
    await previous;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      if (this.#tails.get(threadId) === tail) this.#tails.delete(threadId);
    };
  }
}
