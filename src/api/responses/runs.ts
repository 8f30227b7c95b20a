import type { Turn, TurnResult } from "../../agent/turns";
import type { ExternalTool } from "../../tools/tool";
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
 * A response being produced: its turn runs to the end whoever listens, its events are kept
 * for anyone who streams it (from any sequence number), and `current` is what a GET sees
 * meanwhile. The stored response takes over once it is done.
 */
export class Run implements EventSource {
  readonly events: SequencedEvent[] = [];
  readonly #listeners = new Set<{ on: (e: SequencedEvent) => void; end: () => void }>();
  #ended = false;
  current: ResponseObject;
  readonly done: Promise<ResponseObject>;

  constructor(
    readonly turn: Turn,
    readonly facts: RunFacts,
    log: (m: string) => void,
  ) {
    const base = { id: turn.id, createdAt: turn.createdAt, model: facts.model, echo: facts.echo, tools: facts.tools };
    this.current = buildResponse({ ...base, status: "in_progress", output: [], usage: null, error: null });
    const mapper = new ResponseEventMapper((e) => {
      this.events.push(e);
      if (e.type === "response.output_item.done") this.current = { ...this.current, output: [...this.current.output, e.item] };
      for (const l of this.#listeners) l.on(e);
    });
    mapper.start(this.current);
    this.done = (async () => {
      let result: TurnResult | undefined;
      let failure: string | undefined;
      try {
        const run = turn.run();
        for (let next = await run.next(); ; next = await run.next()) {
          if (next.done) {
            result = next.value;
            break;
          }
          mapper.agentEvent(next.value);
        }
      } catch (e) {
        failure = (e as Error).message ?? String(e);
        log(`response ${turn.id} failed: ${failure}`);
      }
      const final = result
        ? buildResponse({ ...base, model: result.model, status: result.status, output: result.output, usage: result.usage, error: result.error, tools: result.tools })
        : buildResponse({ ...base, status: "failed", output: [], usage: null, error: { code: "server_error", message: failure ?? "unknown" } });
      this.current = final;
      mapper.finish(final);
      this.#ended = true;
      for (const l of this.#listeners) l.end();
      this.#listeners.clear();
      return final;
    })();
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

  constructor(private readonly log: (m: string) => void) {}

  start(turn: Turn, facts: RunFacts): Run {
    const run = new Run(turn, facts, this.log);
    this.#runs.set(turn.id, run);
    void run.done.finally(() => this.#runs.delete(turn.id));
    return run;
  }

  /** A run of this user's; a `store: false` one only to cancel it, never to read it. */
  get(id: string, userId: string, purpose: "read" | "cancel" = "read"): Run | undefined {
    const run = this.#runs.get(id);
    if (!run || run.facts.userId !== userId) return undefined;
    return purpose === "read" && !run.facts.echo.store ? undefined : run;
  }
}
