import type { AgentEvent } from "../../agent/events";
import { sseResponse } from "../../http/sse";
import { Type, type Static } from "@sinclair/typebox";
import { functionCallItem, messageItem, OutputItem, OutputText, outputText, ResponseObject } from "./objects";

const Located = { item_id: Type.String(), output_index: Type.Integer(), content_index: Type.Integer() };
const Logprobs = Type.Array(Type.Unknown());
const lit = <T extends string>(t: T) => Type.Literal(t);

/** One SSE frame payload of the Responses streaming format (the `type` is also the SSE event). */
export const StreamEvent = Type.Union([
  Type.Object({ type: Type.Union([lit("response.created"), lit("response.in_progress"), lit("response.completed"), lit("response.failed")]), response: ResponseObject }),
  Type.Object({ type: Type.Union([lit("response.output_item.added"), lit("response.output_item.done")]), output_index: Type.Integer(), item: OutputItem }),
  Type.Object({ type: Type.Union([lit("response.content_part.added"), lit("response.content_part.done")]), ...Located, part: OutputText }),
  Type.Object({ type: lit("response.output_text.delta"), ...Located, delta: Type.String(), logprobs: Logprobs }),
  Type.Object({ type: lit("response.output_text.done"), ...Located, text: Type.String(), logprobs: Logprobs }),
  Type.Object({ type: lit("response.function_call_arguments.delta"), item_id: Type.String(), output_index: Type.Integer(), delta: Type.String() }),
  Type.Object({ type: lit("response.function_call_arguments.done"), item_id: Type.String(), output_index: Type.Integer(), name: Type.String(), arguments: Type.String() }),
  /** A failure that is not the turn's (the store is down): the stream ends after it. */
  Type.Object({ type: lit("error"), code: Type.Null(), message: Type.String(), param: Type.Null() }),
]);
export type StreamEvent = Static<typeof StreamEvent>;

export type SequencedEvent = StreamEvent & { sequence_number: number };

/** Translates agent events into Responses stream events, numbering them. */
export class ResponseEventMapper {
  #seq = 0;
  readonly #index = new Map<string, number>();

  constructor(private readonly send: (event: SequencedEvent) => void) {}

  /** Numbers `event` (made for this call, so it is numbered where it is) and sends it. */
  emit(event: StreamEvent): void {
    (event as SequencedEvent).sequence_number = this.#seq++;
    this.send(event as SequencedEvent);
  }

  start(shell: ResponseObject): void {
    this.emit({ type: "response.created", response: shell });
    this.emit({ type: "response.in_progress", response: shell });
  }

  agentEvent(ev: AgentEvent): void {
    switch (ev.type) {
      case "message.started": {
        const output_index = this.#index.size;
        this.#index.set(ev.itemId, output_index);
        this.emit({ type: "response.output_item.added", output_index, item: messageItem(ev.itemId, null, "in_progress") });
        this.emit({ type: "response.content_part.added", item_id: ev.itemId, output_index, content_index: 0, part: outputText("") });
        return;
      }
      case "text.delta": {
        const output_index = this.#index.get(ev.itemId)!;
        this.emit({ type: "response.output_text.delta", item_id: ev.itemId, output_index, content_index: 0, delta: ev.delta, logprobs: [] });
        return;
      }
      case "message.completed": {
        const { id, content: text } = ev.item;
        const output_index = this.#index.get(id)!;
        this.emit({ type: "response.output_text.done", item_id: id, output_index, content_index: 0, text, logprobs: [] });
        this.emit({ type: "response.content_part.done", item_id: id, output_index, content_index: 0, part: outputText(text) });
        this.emit({ type: "response.output_item.done", output_index, item: messageItem(id, text, ev.item.status ?? "completed") });
        return;
      }
      case "function_call": {
        const output_index = this.#index.size;
        const { item } = ev;
        this.#index.set(item.id, output_index);
        this.emit({ type: "response.output_item.added", output_index, item: functionCallItem({ ...item, arguments: "" }, "in_progress") });
        this.emit({ type: "response.function_call_arguments.delta", item_id: item.id, output_index, delta: item.arguments });
        this.emit({ type: "response.function_call_arguments.done", item_id: item.id, output_index, name: item.name, arguments: item.arguments });
        this.emit({ type: "response.output_item.done", output_index, item: functionCallItem(item, "completed") });
        return;
      }
      default:
        return; // built-in tool activity and usage are not part of the Responses stream
    }
  }

  finish(response: ResponseObject): void {
    this.emit({ type: response.status === "failed" ? "response.failed" : "response.completed", response });
  }

  error(message: string): void {
    this.emit({ type: "error", code: null, message, param: null });
  }
}

/** The standard event sequence of a finished response, as it would have streamed. */
export function replayEvents(response: ResponseObject): SequencedEvent[] {
  const events: SequencedEvent[] = [];
  const mapper = new ResponseEventMapper((e) => events.push(e));
  mapper.start({ ...response, status: "in_progress", output: [], usage: null, error: null });
  for (const item of response.output) {
    if (item.type === "function_call") {
      mapper.agentEvent({ type: "function_call", item: { ...item, external: true } });
      continue;
    }
    const text = item.content.map((c) => c.text).join("");
    const status = item.status === "incomplete" ? ("incomplete" as const) : undefined;
    mapper.agentEvent({ type: "message.started", itemId: item.id });
    if (text) mapper.agentEvent({ type: "text.delta", itemId: item.id, delta: text });
    mapper.agentEvent({ type: "message.completed", item: { type: "message", id: item.id, role: "assistant", content: text, ...(status ? { status } : {}) } });
  }
  mapper.finish(response);
  return events;
}

/** Where a stream's events come from: those so far, and a way to hear the rest. */
export interface EventSource {
  /** Calls `on` for each event (or its SSE frame) after `after` (past ones at once), and `end` when the source ends. */
  subscribe(after: number, on: (e: SequencedEvent | Uint8Array) => void, end: () => void): () => void;
}

/** Server-Sent Events of a response: every event after `after`. The turn runs on whoever listens. */
export function responseStream(source: EventSource, after = -1): Response {
  return sseResponse((send, end) => source.subscribe(after, send, end), "waiting");
}

/** A finished response's events as a source that ends at once. */
export function replaySource(response: ResponseObject): EventSource {
  return {
    subscribe(after, on, end) {
      for (const e of replayEvents(response)) if (e.sequence_number > after) on(e);
      end();
      return () => {};
    },
  };
}
