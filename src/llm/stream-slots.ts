import type { Logger } from "../log";

/** The most `BUN_CONFIG_MAX_HTTP_REQUESTS` may be (https://bun.com/docs/runtime/networking/fetch). */
export const BUN_MAX_HTTP_REQUESTS = 65_535;

/** How many `fetch` requests this process runs at once: Bun reads it from the environment at start, else 256. */
export function bunFetchLimit(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.BUN_CONFIG_MAX_HTTP_REQUESTS);
  return Number.isInteger(n) && n > 0 ? Math.min(n, BUN_MAX_HTTP_REQUESTS) : 256;
}

/** What `GET /api/status` shows of the LLM streams: the limit, how many run and how many wait for a slot. */
export interface StreamCounts {
  limit: number;
  active: number;
  waiting: number;
}

/**
 * How many LLM streams run at once (`llm.maxConcurrent`): past the limit a step waits, in
 * arrival order, for a stream to end; a cancelled turn leaves the queue at once. A wait
 * episode (from the first step that waits to the moment none waits) is logged when it starts
 * and when it ends, never once per turn.
 */
export class StreamSlots {
  #active = 0;
  readonly #queue: { grant: () => void }[] = [];
  #episode: { since: number; waited: number; most: number } | undefined;

  constructor(
    readonly limit: number,
    private readonly log?: Logger,
  ) {}

  counts(): StreamCounts {
    return { limit: this.limit, active: this.#active, waiting: this.#queue.length };
  }

  /** Resolves with a slot once one is free (`release` it exactly once); rejects with the signal's reason if it aborts first. */
  async acquire(signal: AbortSignal): Promise<{ release(): void }> {
    if (signal.aborted) throw signal.reason;
    if (this.#active < this.limit && !this.#queue.length) {
      this.#active++;
      return this.#slot();
    }
    await new Promise<void>((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.#queue.indexOf(entry);
        if (at >= 0) this.#queue.splice(at, 1);
        this.#settleEpisode();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(entry);
      this.#waitStarted();
    });
    return this.#slot();
  }

  #slot(): { release(): void } {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const next = this.#queue.shift();
        // the slot passes straight to the next in line: the count of active streams stays
        if (next) next.grant();
        else this.#active--;
        this.#settleEpisode();
      },
    };
  }

  #waitStarted(): void {
    const waiting = this.#queue.length;
    if (!this.#episode) {
      this.#episode = { since: performance.now(), waited: 0, most: 0 };
      this.log?.warn("LLM streams at their limit: new model steps wait for a free slot", { limit: this.limit, setting: "llm.maxConcurrent (LLM_MAX_CONCURRENT)" });
    }
    this.#episode.waited++;
    this.#episode.most = Math.max(this.#episode.most, waiting);
  }

  #settleEpisode(): void {
    if (!this.#episode || this.#queue.length) return;
    const { since, waited, most } = this.#episode;
    this.#episode = undefined;
    this.log?.info("LLM streams below their limit again", { limit: this.limit, waited, most_waiting: most, duration_ms: Math.round(performance.now() - since) });
  }
}
