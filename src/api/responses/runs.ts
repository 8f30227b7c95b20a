import type { AgentEvent } from "../../agent/events";
import type { TurnBus } from "../../agent/bus";
import type { TurnHandle, TurnResult } from "../../agent/turn-types";
import { newUuid, responseId } from "../../conversation/ids";
import type { ExternalTool } from "../../conversation/items";
import { sseFrame } from "../../http/sse";
import { noUsage } from "../../usage/prices";
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
  /**
   * Every event so far, by its sequence number. A text delta of the message being written
   * is kept as its text alone: they are most of the events, and an object each held about
   * 150 bytes more (1,000 streams of 200 deltas: 30 MB).
   */
  readonly #events: (SequencedEvent | string)[] = [];
  /** The text part the deltas go to now. */
  #part: { item_id: string; output_index: number } | undefined;
  readonly #listeners = new Set<{ on: (frame: Uint8Array) => void; end: () => void }>();
  readonly #mapper: ResponseEventMapper;
  readonly #base;
  readonly #done = Promise.withResolvers<ResponseObject>();
  #ended = false;
  current: ResponseObject;

  /** The turn has ended (and the stored response answers for it). */
  get ended(): boolean {
    return this.#ended;
  }

  constructor(
    readonly turn: TurnHandle,
    readonly facts: RunFacts,
  ) {
    this.#base = { id: turn.id, createdAt: turn.createdAt, model: facts.model, echo: facts.echo, tools: facts.tools };
    this.current = buildResponse({ ...this.#base, status: "in_progress", output: [], usage: null, error: null });
    this.#mapper = new ResponseEventMapper((e) => {
      this.#keep(e);
      if (e.type === "response.output_item.done") this.current = { ...this.current, output: [...this.current.output, e.item] };
      if (!this.#listeners.size) return;
      // one frame for all who listen, made now and not kept: a run keeps its events, not their bytes
      const frame = sseFrame(e);
      for (const l of this.#listeners) l.on(frame);
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

  /** The turn's end: the response as it is stored. */
  finish(r: TurnResult): void {
    this.current = buildResponse({ ...this.#base, model: r.model, status: r.status, output: r.output, usage: r.usage, error: r.error, tools: r.tools });
    this.#mapper.finish(this.current);
    this.#end();
    this.#done.resolve(this.current);
  }

  /** The service failed to finish the turn (the store is down). */
  fail(e: Error): void {
    this.#mapper.error(e.message ?? String(e));
    this.#end();
    this.#done.reject(e);
  }

  #end(): void {
    this.#ended = true;
    for (const l of this.#listeners) l.end();
    this.#listeners.clear();
  }

  #keep(e: SequencedEvent): void {
    if (e.type === "response.content_part.added") this.#part = { item_id: e.item_id, output_index: e.output_index };
    const part = this.#part;
    const compact = e.type === "response.output_text.delta" && part?.item_id === e.item_id && part.output_index === e.output_index;
    this.#events.push(compact ? e.delta : e);
  }

  subscribe(after: number, on: (frame: Uint8Array) => void, end: () => void): () => void {
    let part: { item_id: string; output_index: number } | undefined;
    this.#events.forEach((e, sequence_number) => {
      if (typeof e !== "string") {
        if (e.type === "response.content_part.added") part = { item_id: e.item_id, output_index: e.output_index };
        if (sequence_number > after) on(sseFrame(e));
      } else if (sequence_number > after) {
        const delta: SequencedEvent = { type: "response.output_text.delta", ...part!, content_index: 0, delta: e, logprobs: [], sequence_number };
        on(sseFrame(delta));
      }
    });
    if (this.#ended) {
      end();
      return () => {};
    }
    const listener = { on, end };
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/**
 * The responses being produced now, by id, until each is stored: the turns the Responses API
 * started, as the agent's bus tells them (a run exists from the turn's acceptance on).
 */
export class ResponseRuns {
  readonly #runs = new Map<string, Run>();
  /** Runs the bus started whose request has not taken them yet (`started`). */
  readonly #unclaimed = new Set<string>();

  constructor(bus: TurnBus) {
    bus.subscribe((turn, e) => {
      if (turn.channel !== "responses") return;
      if (e.type === "turn.started") {
        const req = e.request;
        // the echo is what the route stored with the response as its facts (`meta`)
        this.start(e.turn, { userId: req.userId, model: req.model, echo: req.meta as RequestEcho, tools: req.externalTools ?? [] }, false);
        return;
      }
      const run = this.#runs.get(turn.id);
      if (!run) return;
      if (e.type === "turn.completed") {
        if (e.result) run.finish(e.result);
        else run.fail(e.error ?? new Error("The turn was lost."));
      } else if (e.type !== "llm.request" && e.type !== "budget.warning") run.event(e);
    });
  }

  start(turn: TurnHandle, facts: RunFacts, claimed = true): Run {
    const run = new Run(turn, facts);
    this.#runs.set(turn.id, run);
    if (!claimed) this.#unclaimed.add(turn.id);
    // an ended run is forgotten (the stored response answers for it), unless the request that
    // started it has not taken it yet: then it is forgotten once taken
    const forget = () => void (this.#unclaimed.has(turn.id) || this.#runs.delete(turn.id));
    void run.done.then(forget, forget);
    return run;
  }

  /**
   * What a request naming a previous response or conversation that is not the caller's gets:
   * a run failed `not_found` at once, with the request's facts and nothing of the thread.
   * Nothing is stored, and nothing runs on, even in the background.
   */
  refused(threadId: string, facts: RunFacts): Run {
    const turn = { id: responseId(newUuid(), threadId), threadId, createdAt: Math.floor(Date.now() / 1000), input: [] };
    const error = { code: "not_found" as const, message: "The previous_response_id or conversation does not name one of yours." };
    const run = this.start(turn, facts);
    run.finish({ ...turn, model: facts.model, status: "failed", error, items: [], output: [], tools: [], usage: noUsage() });
    return run;
  }

  /** The run of a turn the Responses API just started (ended already, perhaps), taken by its request. */
  started(id: string): Run {
    const run = this.#runs.get(id);
    if (!run) throw new Error(`no run for the response ${id}`);
    this.#unclaimed.delete(id);
    if (run.ended) this.#runs.delete(id);
    return run;
  }

  /** A running response of this user's; a `store: false` one only to cancel it, never to read it. */
  get(id: string, userId: string, purpose: "read" | "cancel" = "read"): Run | undefined {
    const run = this.#runs.get(id);
    if (!run || run.ended || run.facts.userId !== userId) return undefined;
    return purpose === "read" && !run.facts.echo.store ? undefined : run;
  }
}
