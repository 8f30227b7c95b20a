import { TurnError, type TurnErrorCode } from "../errors";
import { threadOfResponse } from "../conversation/ids";
import type { TurnResult } from "./turn-types";

interface Running {
  controller: AbortController;
  userId: string;
  /** Settles once the turn has stored its result. */
  finished: Promise<TurnResult | undefined>;
}

/** The turns running now, by response id: what cancel, shutdown and deletion cut short. */
export class RunningTurns {
  readonly #turns = new Map<string, Running>();

  /**
   * Runs `fn` as the turn `id`, with a signal that aborts on cancel, shutdown or after
   * `timeoutMs`; the turn counts as running until `fn` settles.
   */
  async run<T extends TurnResult>(id: string, userId: string, timeoutMs: number | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = timeoutMs
      ? setTimeout(() => controller.abort(new TurnError("turn_timeout", `The turn took longer than ${timeoutMs / 1000} s. Use stream: true for long work.`)), timeoutMs)
      : undefined;
    const finished = fn(controller.signal);
    this.#turns.set(id, { controller, userId, finished: finished.catch(() => undefined) });
    try {
      return await finished;
    } finally {
      clearTimeout(timer);
      this.#turns.delete(id);
    }
  }

  /** Cancels a running turn of this user's; resolves to its stored result, or undefined if none runs. */
  cancel(id: string, userId: string): Promise<TurnResult | undefined> | undefined {
    const turn = this.#turns.get(id);
    if (!turn || turn.userId !== userId) return undefined;
    turn.controller.abort(new TurnError("cancelled", "The response was cancelled."));
    return turn.finished;
  }

  /** Cuts short the running turns that `which` picks, and waits until each has stored its result. */
  async stop(which: (t: { id: string; userId: string; threadId: string }) => boolean, code: TurnErrorCode, message: string): Promise<void> {
    const picked = [...this.#turns.entries()].filter(([id, t]) => which({ id, userId: t.userId, threadId: threadOfResponse(id) ?? "" }));
    for (const [, t] of picked) t.controller.abort(new TurnError(code, message));
    await Promise.allSettled(picked.map(([, t]) => t.finished));
  }

  /** Resolves when the turns running now have all finished. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#turns.values()].map((t) => t.finished));
  }
}
