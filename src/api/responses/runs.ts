import type { AgentEvent } from "../../agent/loop";
import type { TurnHandle, TurnResult } from "../../agent/turn-types";
import type { ExternalTool } from "../../conversation/items";
import { buildResponse, type ResponseObject } from "./objects";
import type { RequestEcho } from "./request";
import { ResponseEventMapper, type EventSource, type SequencedEvent } from "./stream";

export interface RunFacts {
  userId: string;
  model: string;
  echo: RequestEcho;
  tools: ExternalTool[];
}

/**
 * A response being produced: its events are kept for anyone who streams it (from any
 * sequence number), and `current` is what a GET sees meanwhile. The stored response takes
 * over once it is done. A failure that is not the turn's (the store is down) ends the
 * stream with an `error` event and makes `done` reject.
 */
export class Run implements EventSource {
  readonly events: SequencedEvent[] = [];
  readonly #listeners = new Set<{ on: (e: SequencedEvent) => void; end: () => void }>();
  readonly #mapper: ResponseEventMapper;
  readonly #base;
  readonly #done = Promise.withResolvers<ResponseObject>();
  #ended = false;
  current: ResponseObject;

  constructor(
    readonly turn: TurnHandle,
    readonly facts: RunFacts,
  ) {
    this.#base = { id: turn.id, createdAt: turn.createdAt, model: facts.model, echo: facts.echo, tools: facts.tools };
    this.current = buildResponse({ ...this.#base, status: "in_progress", output: [], usage: null, error: null });
    this.#mapper = new ResponseEventMapper((e) => {
      this.events.push(e);
      if (e.type === "response.output_item.done") this.current = { ...this.current, output: [...this.current.output, e.item] };
      for (const l of this.#listeners) l.on(e);
    });
    this.#mapper.start(this.current);
    this.#done.promise.catch(() => {});
  }

  /** The response as it will be, once the turn has been stored (or failed to be). */
  get done(): Promise<ResponseObject> {
    return this.#done.promise;
  }

  event(e: AgentEvent): void {
    this.#mapper.agentEvent(e);
  }

  /** Follows the turn's result to the end of the response. */
  follow(result: Promise<TurnResult>): void {
    result.then(
      (r) => {
        this.current = buildResponse({ ...this.#base, model: r.model, status: r.status, output: r.output, usage: r.usage, error: r.error, tools: r.tools });
        this.#mapper.finish(this.current);
        this.#end();
        this.#done.resolve(this.current);
      },
      (e) => {
        this.#mapper.error((e as Error).message ?? String(e));
        this.#end();
        this.#done.reject(e);
      },
    );
  }

  #end(): void {
    this.#ended = true;
    for (const l of this.#listeners) l.end();
    this.#listeners.clear();
  }

  subscribe(after: number, on: (e: SequencedEvent) => void, end: () => void): () => void {
    for (const e of this.events) if (e.sequence_number > after) on(e);
    if (this.#ended) {
      end();
      return () => {};
    }
    const listener = { on, end };
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The responses being produced now, by id, until each is stored. */
export class ResponseRuns {
  readonly #runs = new Map<string, Run>();

  start(turn: TurnHandle, facts: RunFacts): Run {
    const run = new Run(turn, facts);
    this.#runs.set(turn.id, run);
    void run.done.finally(() => this.#runs.delete(turn.id)).catch(() => {});
    return run;
  }

  /** A run of this user's; a `store: false` one only to cancel it, never to read it. */
  get(id: string, userId: string, purpose: "read" | "cancel" = "read"): Run | undefined {
    const run = this.#runs.get(id);
    if (!run || run.facts.userId !== userId) return undefined;
    return purpose === "read" && !run.facts.echo.store ? undefined : run;
  }
}
