import type OpenAI from "openai";
import type { Stream } from "openai/streaming";
import { chatRequestBody } from "./request-body";
import { contentParts, ThinkSplitter } from "./reasoning";
import { ToolCallAssembler } from "./tool-calls";
import type { LlmEvent, LlmRequest } from "./types";

/** One model step's stream failed after its output began: no retry, the turn fails. */
export class StreamBroken extends Error {}

/** The fields of a chunk's delta (or of a whole message) that this client reads. */
interface Delta {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: unknown;
}

interface Chunk {
  choices?: { delta?: Delta | null; message?: Delta | null; finish_reason?: string | null }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
    completion_tokens_details?: { reasoning_tokens?: number } | null;
    /** What the request cost in USD, as OpenRouter reports it (https://openrouter.ai/docs/use-cases/usage-accounting). */
    cost?: number;
  } | null;
  error?: { message?: string } | string;
}

/**
 * One streamed chat completion. It ends in one of three ways, decided here: the model
 * finished (a finish reason came), the request was cancelled (the signal's reason is
 * thrown: the SDK itself ends an aborted stream quietly), or the stream broke.
 */
export async function* step(client: OpenAI, model: string, req: LlmRequest): AsyncGenerator<LlmEvent> {
  // the SDK's own `chat.completions.create`, with the body serialised here (request-body.ts)
  const { data: chunks, response } = await client
    .post<Stream<OpenAI.ChatCompletionChunk>>("/chat/completions", {
      body: chatRequestBody(model, req),
      headers: { "content-type": "application/json" },
      stream: true,
      signal: req.signal,
    })
    .withResponse();
  const reader = new StepReader(model);
  try {
    if (/json/i.test(response.headers.get("content-type") ?? "")) {
      // a streamed request answered with one whole completion: Ollama did so whenever tools
      // were offered (https://github.com/ollama/ollama/issues/9092)
      yield* reader.completion((await response.json()) as Chunk);
    } else {
      // events come back as a small array per chunk: a generator per delta would cost more than the rest of the reading
      for await (const chunk of chunks as AsyncIterable<unknown>) for (const ev of reader.chunk(chunk as Chunk)) yield ev;
    }
  } catch (e) {
    if (req.signal.aborted) throw req.signal.reason;
    if (reader.output) throw new StreamBroken("stream broken", { cause: e });
    throw e;
  }
  if (req.signal.aborted) throw req.signal.reason;
  if (!reader.finished) {
    const e = new Error("the connection closed before the answer was complete");
    if (reader.output) throw new StreamBroken("stream broken", { cause: e });
    throw e;
  }
  yield* reader.end();
}

/** A chunk's `usage` as an event: the counts OpenAI-compatible servers send, and a cost where the provider says it. */
function usageEvent(u: NonNullable<Chunk["usage"]>, model: string): LlmEvent {
  const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);
  return {
    type: "usage",
    inputTokens: count(u.prompt_tokens),
    outputTokens: count(u.completion_tokens),
    cachedTokens: count(u.prompt_tokens_details?.cached_tokens),
    reasoningTokens: count(u.completion_tokens_details?.reasoning_tokens),
    ...(typeof u.cost === "number" && Number.isFinite(u.cost) && u.cost >= 0 ? { costUsd: u.cost } : {}),
    model,
  };
}

/**
 * What one step's chunks add up to: answer and reasoning as they come, the calls at the end.
 * Each chunk's events come back as a small array: a generator per delta would cost more than
 * the rest of the reading.
 */
class StepReader {
  readonly #think = new ThinkSplitter();
  readonly #calls = new ToolCallAssembler();
  #truncated = false;
  finished = false;
  /** Something of the answer arrived: the step can no longer be retried. */
  output = false;

  constructor(readonly model: string) {}

  chunk(chunk: Chunk): LlmEvent[] {
    if (chunk.error) throw new Error(typeof chunk.error === "string" ? chunk.error : (chunk.error.message ?? "the provider reported an error"));
    const out: LlmEvent[] = [];
    if (chunk.usage) out.push(usageEvent(chunk.usage, this.model));
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    if (choice.finish_reason) {
      this.finished = true;
      if (choice.finish_reason === "length") this.#truncated = true;
    }
    const delta = choice.delta ?? choice.message;
    if (!delta) return out;
    // reasoning in a field of its own: `reasoning_content` (DeepSeek, vLLM, llama.cpp:
    // https://api-docs.deepseek.com/guides/reasoning_model), `reasoning` (OpenRouter, Ollama:
    // https://openrouter.ai/docs/use-cases/reasoning-tokens)
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : typeof delta.reasoning === "string" ? delta.reasoning : "";
    const parts = contentParts(delta.content);
    const think = parts.text ? this.#think.push(parts.text) : parts;
    this.#said(out, reasoning + parts.reasoning + think.reasoning, think.text);
    if (delta.tool_calls) {
      this.output = true;
      this.#calls.add(delta.tool_calls);
    }
    return out;
  }

  /** A whole completion (`choices[0].message`): one chunk that also finishes the step. */
  completion(body: Chunk): LlmEvent[] {
    const out = this.chunk(body);
    this.finished = true;
    return out;
  }

  end(): LlmEvent[] {
    const out: LlmEvent[] = [];
    const rest = this.#think.flush();
    this.#said(out, rest.reasoning, rest.text);
    if (this.#truncated) out.push({ type: "truncated" });
    if (this.#calls.size) out.push({ type: "tool_calls", calls: this.#calls.calls() });
    return out;
  }

  #said(out: LlmEvent[], reasoning: string, text: string): void {
    if (reasoning) {
      this.output = true;
      out.push({ type: "reasoning", delta: reasoning });
    }
    if (text) {
      this.output = true;
      out.push({ type: "text", delta: text });
    }
  }
}
