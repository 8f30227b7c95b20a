import type { AgentEvent } from "./events";
import type { TurnHandle, TurnRequest, TurnResult } from "./turn-types";
import type { LlmRequestEnded } from "../usage/meter";

/** A turn as the bus names it: whose, where it came from, and when it started. */
export interface TurnInfo {
  id: string;
  threadId: string;
  userId: string;
  channel: TurnRequest["channel"];
  /** The job or routine the turn runs for, and when it was queued. */
  origin?: TurnRequest["origin"];
  /** Whether a person can answer its gates (web UI, TUI): other channels' prompts are not shown. */
  surfacesGates: boolean;
  /** ms since the epoch. */
  startedAt: number;
}

/** What the bus carries of a turn, from `turn.started` to `turn.completed`. */
export type TurnEvent =
  /** The turn was accepted; `request` is what its channel asked for. */
  | { type: "turn.started"; turn: TurnHandle; request: TurnRequest }
  | AgentEvent
  | LlmRequestEnded
  /** The turn's result, or `error` when the service itself failed to finish it (the store is down). */
  | { type: "turn.completed"; result?: TurnResult; error?: Error; waiting: "approval" | "oauth" | null }
  /** The user's spending passed 80 % of a budget with this turn. */
  | { type: "budget.warning"; message: string };

export type TurnListener = (turn: TurnInfo, event: TurnEvent) => void;

/**
 * Every turn's events, whatever started it (Responses API, chat, webhook job, routine): the
 * agent publishes, channels and observers subscribe, to all turns or to one user's.
 * Publishing is synchronous and never waits on a listener; a listener that throws is told to
 * `onListenerError` and the turn goes on.
 */
export class TurnBus {
  readonly #all = new Set<TurnListener>();
  readonly #byUser = new Map<string, Set<TurnListener>>();
  #onError: (e: unknown) => void = () => {};

  /** Hears every event; returns what ends the subscription. */
  subscribe(listener: TurnListener, only?: { userId: string }): () => void {
    if (!only) {
      this.#all.add(listener);
      return () => void this.#all.delete(listener);
    }
    let set = this.#byUser.get(only.userId);
    if (!set) this.#byUser.set(only.userId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size && this.#byUser.get(only.userId) === set) this.#byUser.delete(only.userId);
    };
  }

  /** Where a listener's failure is told (the log). */
  onListenerError(fn: (e: unknown) => void): void {
    this.#onError = fn;
  }

  publish(turn: TurnInfo, event: TurnEvent): void {
    for (const l of this.#all) this.#deliver(l, turn, event);
    const mine = this.#byUser.get(turn.userId);
    if (mine) for (const l of mine) this.#deliver(l, turn, event);
  }

  #deliver(l: TurnListener, turn: TurnInfo, event: TurnEvent): void {
    try {
      l(turn, event);
    } catch (e) {
      this.#onError(e);
    }
  }
}
