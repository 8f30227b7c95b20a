/**
 * Long polls of `GET /jobs/{id}?wait=N`: a request waits here until its job ends, its time
 * runs out, or the channel stops (then every poll is answered at once with what it has).
 */
export class JobWatch {
  readonly #waiters = new Map<string, Set<() => void>>();
  #closed = false;

  /**
   * Starts waiting for the job: `done` resolves when it ends, after `ms`, or when the watch
   * closes, whichever comes first; `cancel` lets go early. Started before the job is read,
   * so an end in between is not missed.
   */
  wait(id: string, ms: number): { done: Promise<void>; cancel: () => void } {
    if (this.#closed || ms <= 0) return { done: Promise.resolve(), cancel: () => {} };
    const { promise, resolve } = Promise.withResolvers<void>();
    let set = this.#waiters.get(id);
    if (!set) this.#waiters.set(id, (set = new Set()));
    const done = () => {
      clearTimeout(timer);
      set.delete(done);
      if (!set.size && this.#waiters.get(id) === set) this.#waiters.delete(id);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
    return { done: promise, cancel: done };
  }

  /** The job ended (or waits on a person): its polls are answered. */
  ended(id: string): void {
    for (const done of [...(this.#waiters.get(id) ?? [])]) done();
  }

  /** Answers every poll now, and every later one at once (the channel is stopping). */
  close(): void {
    this.#closed = true;
    for (const set of [...this.#waiters.values()]) for (const done of [...set]) done();
  }
}
