import type { AgentEvent } from "../../agent/loop";
import type { Turn, TurnResult } from "../../agent/turns";
import { buildResponse, functionCallItem, messageItem, type OutputItem, type ResponseFacts, type ResponseObject } from "./objects";

export const KEEPALIVE_MS = 15_000;

/** One SSE frame payload of the Responses streaming format (the `type` is also the SSE event). */
type StreamEvent =
  | { type: "response.created" | "response.in_progress" | "response.completed" | "response.failed"; response: ResponseObject }
  | { type: "response.output_item.added" | "response.output_item.done"; output_index: number; item: OutputItem }
  | {
      type: "response.content_part.added" | "response.content_part.done";
      item_id: string;
      output_index: number;
      content_index: number;
      part: { type: "output_text"; text: string; annotations: unknown[] };
    }
  | { type: "response.output_text.delta"; item_id: string; output_index: number; content_index: number; delta: string; logprobs: unknown[] }
  | { type: "response.output_text.done"; item_id: string; output_index: number; content_index: number; text: string; logprobs: unknown[] }
  | { type: "response.function_call_arguments.delta"; item_id: string; output_index: number; delta: string }
  | { type: "response.function_call_arguments.done"; item_id: string; output_index: number; name: string; arguments: string };

/** Translates agent events into Responses stream events, numbering them. */
export class ResponseEventMapper {
  #seq = 0;
  readonly #index = new Map<string, number>();

  constructor(private readonly send: (event: StreamEvent & { sequence_number: number }) => void) {}

  emit(event: StreamEvent): void {
    this.send({ ...event, sequence_number: this.#seq++ });
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
        const part = { type: "output_text" as const, text: "", annotations: [] };
        this.emit({ type: "response.content_part.added", item_id: ev.itemId, output_index, content_index: 0, part });
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
        const part = { type: "output_text" as const, text, annotations: [] };
        this.emit({ type: "response.content_part.done", item_id: id, output_index, content_index: 0, part });
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
}

/**
 * Runs the turn and streams it as Server-Sent Events. The turn runs to its end even when the
 * client goes away, so what it did is stored either way.
 */
export function streamTurn(turn: Turn, facts: Omit<ResponseFacts, "status" | "items" | "usage" | "error" | "createdAt" | "id">, log: (m: string) => void): Response {
  const encoder = new TextEncoder();
  let open = true;
  let keepalive: ReturnType<typeof setInterval> | undefined;
  const base = { ...facts, id: turn.id, createdAt: turn.createdAt };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          open = false;
        }
      };
      const mapper = new ResponseEventMapper((e) => write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`));
      keepalive = setInterval(() => write(": keepalive\n\n"), KEEPALIVE_MS);
      void (async () => {
        mapper.start(buildResponse({ ...base, status: "in_progress", items: [], usage: null, error: null }));
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
          log(`stream turn ${turn.id} failed: ${failure}`);
        }
        mapper.finish(
          result
            ? buildResponse({ ...base, model: result.model, status: result.status, items: result.items, usage: result.usage, error: result.error, tools: result.tools })
            : buildResponse({ ...base, status: "failed", items: [], usage: null, error: { code: "server_error", message: failure ?? "unknown" } }),
        );
        clearInterval(keepalive);
        if (open) controller.close();
        open = false;
      })();
    },
    cancel() {
      open = false;
      clearInterval(keepalive);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
