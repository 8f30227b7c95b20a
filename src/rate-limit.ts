/** A sliding window per key: at most `limit` events in any `windowMs`. A limit of 0 is off. */
export class RateLimiter {
  readonly #hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts one event; returns 0 when allowed, else the seconds until one is. */
  take(key: string, now = Date.now()): number {
    if (this.limit <= 0) return 0;
    let hits = this.#hits.get(key);
    if (!hits) this.#hits.set(key, (hits = []));
    while (hits.length && hits[0]! <= now - this.windowMs) hits.shift();
    if (hits.length >= this.limit) return Math.max(1, Math.ceil((hits[0]! + this.windowMs - now) / 1000));
    hits.push(now);
    if (this.#hits.size > 10_000) this.#sweep(now);
    return 0;
  }

  #sweep(now: number): void {
    for (const [key, hits] of this.#hits) if (!hits.length || hits.at(-1)! <= now - this.windowMs) this.#hits.delete(key);
  }
}
