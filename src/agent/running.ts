import { TurnError, type TurnErrorCode } from "../errors";
import { threadOfResponse } from "../conversation/ids";
import type { TurnResult } from "./turn-types";

interface Running {
  controller: AbortController;
  userId: string;
  /** Settles once the turn has stored its result. */
  finished: Promise<TurnResult | undefined>;
}

type Which = (t: { userId: string; threadId?: string }) => boolean;

/**
 * The turns of the agent, from the moment a channel starts one (it may still wait for its
 * thread) until it is stored: what cancel, shutdown and a user's deletion cut short. A
 * barrier (shutdown, a deleted user) also cuts short the turns that reach the model later.
 */
export class RunningTurns {
  readonly #running = new Map<string, Running>();
  readonly #started = new Set<{ userId: string; done: Promise<unknown> }>();
  readonly #barriers: { which: Which; error: TurnError }[] = [];

  /** Counts a started turn (queued or running) until `done` settles. */
  track(userId: string, done: Promise<unknown>): void {
    const entry = { userId, done: done.catch(() => {}) };
    this.#started.add(entry);
    void entry.done.then(() => this.#started.delete(entry));
  }

  /**
   * Runs `fn` as the turn `id`, with a signal that aborts on cancel, shutdown, or once
   * `timeoutMs` have passed since `since` (when the request came: waiting for the thread
   * counts); the turn counts as running until `fn` settles.
   */
  async run<T extends TurnResult>(
    id: string,
    userId: string,
    timing: { timeoutMs?: number; since: number },
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const { timeoutMs, since } = timing;
    const timer = timeoutMs
      ? setTimeout(
          () => controller.abort(new TurnError("turn_timeout", `The turn took longer than ${timeoutMs / 1000} s. Use stream: true for long work.`)),
          Math.max(0, since + timeoutMs - Date.now()),
        )
      : undefined;
    const barrier = this.#barriers.find((b) => b.which({ userId, threadId: threadOfResponse(id) }));
    if (barrier) controller.abort(barrier.error);
    const finished = fn(controller.signal);
    this.#running.set(id, { controller, userId, finished: finished.catch(() => undefined) });
    try {
      return await finished;
    } finally {
      clearTimeout(timer);
      this.#running.delete(id);
    }
  }

  /** Cancels a running turn of this user's; resolves to its stored result, or undefined if none runs. */
  cancel(id: string, userId: string): Promise<TurnResult | undefined> | undefined {
    const turn = this.#running.get(id);
    if (!turn || turn.userId !== userId) return undefined;
    turn.controller.abort(new TurnError("cancelled", "The response was cancelled."));
    return turn.finished;
  }

  /**
   * Cuts short the running turns that `which` picks and waits until each has stored its
   * result. With `later`, the turns it picks that are still waiting, or that start from now
   * on, are cut short as soon as they run, and they are waited for too.
   */
  async stop(which: Which, code: TurnErrorCode, message: string, later = false): Promise<void> {
    const error = new TurnError(code, message);
    if (later) this.#barriers.push({ which, error });
    const picked = [...this.#running.entries()].filter(([id, t]) => which({ userId: t.userId, threadId: threadOfResponse(id) }));
    for (const [, t] of picked) t.controller.abort(error);
    await Promise.allSettled(picked.map(([, t]) => t.finished));
    if (later) await Promise.allSettled([...this.#started].filter((t) => which({ userId: t.userId })).map((t) => t.done));
  }

  /**
   * Cuts short the running turns that `which` picks and, while `fn` runs, those that start
   * (turns waiting for a thread that `fn` holds): each ends with `code` as its error.
   */
  async stopWhile<T>(which: Which, code: TurnErrorCode, message: string, fn: () => Promise<T>): Promise<T> {
    const barrier = { which, error: new TurnError(code, message) };
    this.#barriers.push(barrier);
    try {
      await this.stop(which, code, message);
      return await fn();
    } finally {
      this.#barriers.splice(this.#barriers.indexOf(barrier), 1);
    }
  }

  /** Resolves when the turns started by now, waiting ones included, have all finished. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#started].map((t) => t.done));
  }
}
