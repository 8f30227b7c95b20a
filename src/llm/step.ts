import { createParser, type EventSourceMessage, type EventSourceParser } from "eventsource-parser";
import OpenAI from "openai";
import { Pacer } from "../pacer";
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
 * One streamed chat completion, read a socket read at a time: `next` gives the events of the
 * chunks that arrived together (each chunk's own: a client sees the model's pieces as they
 * were sent), `undefined` at the end. It ends in one of three ways, decided here: the model
 * finished (a finish reason came), the request was cancelled (the signal's reason is
 * thrown), or the stream broke. `cancel` lets go of a stream left unread.
 *
 * The SDK builds the request (its URL and headers, once per client); `transport` sends it (the
 * client's `fetch`), with the client's timeout for the answer's head and the caller's signal
 * linked for the body's reads too, as the SDK's own `fetchWithTimeout` does, but without its
 * weak references (`Link` below). A refused request fails with the SDK's error for its
 * status. The body is read here, with one parser call per read, where the SDK's own reader
 * runs each chunk through five async generators, a race with the abort signal and a line
 * decoder (docs/performance.md, "Many turns at once").
 */
export async function step(client: OpenAI, model: string, req: LlmRequest, transport: (url: string, init: RequestInit) => Promise<Response> = fetch): Promise<StepStream> {
  const { url, init, timeout } = await chatRequest(client);
  const link = new Link(req.signal, timeout);
  let response: Response;
  try {
    response = await transport(url, { ...init, body: chatRequestBody(model, req), signal: link.signal });
  } catch (e) {
    link.release();
    throw requestFailure(e, req.signal, link.signal);
  }
  link.answered();
  if (!response.ok) {
    try {
      throw await statusError(response);
    } finally {
      link.release();
    }
  }
  return new StepStream(response, new StepReader(model), req.signal, link.release);
}

/**
 * A request's own signal: the caller's signal aborts it, body reads included, and so does the
 * deadline for the answer's head, as in the SDK's `fetchWithTimeout`. The SDK links the
 * caller's signal through weak references, a finalization registry and weak maps, so that a
 * request left unread does not hold on to its listener; each young-generation collection
 * under turns then took 0.4–0.6 ms longer (docs/performance.md). Here the listener is removed
 * when the step's stream ends (`release`): read to its end, failed, or cancelled, as
 * openai.ts always leaves it.
 */
class Link {
  readonly #controller = new AbortController();
  readonly #onAbort = () => this.#controller.abort(this.caller.reason);
  readonly #deadline: ReturnType<typeof setTimeout>;

  constructor(
    private readonly caller: AbortSignal,
    timeoutMs: number,
  ) {
    if (caller.aborted) this.#controller.abort(caller.reason);
    else caller.addEventListener("abort", this.#onAbort, { once: true });
    this.#deadline = setTimeout(() => this.#controller.abort(), timeoutMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The answer's head is in: the deadline no longer holds. */
  answered(): void {
    clearTimeout(this.#deadline);
  }

  readonly release = (): void => {
    clearTimeout(this.#deadline);
    this.caller.removeEventListener("abort", this.#onAbort);
  };
}

/**
 * The request the SDK makes of `chat.completions.create` with a streamed body, built by the SDK
 * once per client: its URL, headers (the key, the SDK's own) and timeout never change, and
 * building them anew took about a tenth of a turn's CPU (docs/performance.md).
 */
const chatRequests = new WeakMap<OpenAI, Promise<{ url: string; init: RequestInit; timeout: number }>>();
function chatRequest(client: OpenAI) {
  let built = chatRequests.get(client);
  if (!built) {
    built = client
      .buildRequest({ method: "post", path: "/chat/completions", body: "{}", headers: { "content-type": "application/json" }, stream: true })
      .then(({ url, req: { body: _, ...init }, timeout }) => ({ url, init, timeout: timeout ?? client.timeout }));
    built.catch(() => chatRequests.delete(client));
    chatRequests.set(client, built);
  }
  return built;
}

/** A request that got no answer, as the SDK's `post` reports it: cancelled, timed out, or not connected. */
function requestFailure(e: unknown, signal: AbortSignal, transport: AbortSignal): Error {
  if (signal.aborted) return new OpenAI.APIUserAbortError();
  if (transport.aborted || /timed? ?out/i.test(String(e))) return Object.assign(new OpenAI.APIConnectionTimeoutError(), { cause: e });
  return new OpenAI.APIConnectionError({ cause: e as Error });
}

/** A refused request's error, as the SDK's `post` makes it: the class for its status, the provider's body. */
async function statusError(response: Response): Promise<Error> {
  const text = await response.text().catch((e: Error) => e.message);
  let body: object | undefined;
  try {
    body = JSON.parse(text);
  } catch {}
  return OpenAI.APIError.generate(response.status, body, body ? undefined : text, response.headers);
}

/** A completion's response, read as one step's events. */
export const readStep = (response: Response, model: string, signal: AbortSignal) => new StepStream(response, new StepReader(model), signal, () => {});

export class StepStream {
  readonly #chunks: SseChunks | undefined;
  #whole: Promise<Chunk> | undefined;
  #ended = false;

  constructor(
    response: Response,
    private readonly reader: StepReader,
    private readonly signal: AbortSignal,
    /** Called once the stream has ended, however it ended. */
    private readonly release: () => void,
  ) {
    // a streamed request answered with one whole completion: Ollama did so whenever tools
    // were offered (https://github.com/ollama/ollama/issues/9092)
    if (/json/i.test(response.headers.get("content-type") ?? "")) {
      this.#whole = response.json() as Promise<Chunk>;
      this.#whole.catch(() => {}); // told by `next`, or never if the stream is let go first
    } else this.#chunks = new SseChunks(response);
  }

  async next(): Promise<LlmEvent[] | undefined> {
    if (this.#ended) return undefined;
    const { reader, signal } = this;
    try {
      if (this.#whole) {
        const body = await this.#whole;
        this.#whole = undefined;
        return reader.completion(body);
      }
      const chunks = await this.#chunks?.next();
      if (chunks) {
        const out: LlmEvent[] = [];
        for (const chunk of chunks) for (const ev of reader.chunk(chunk)) out.push(ev);
        return out;
      }
    } catch (e) {
      this.#end();
      if (signal.aborted) throw signal.reason;
      if (reader.output) throw new StreamBroken("stream broken", { cause: e });
      throw e;
    }
    this.#end();
    if (signal.aborted) throw signal.reason;
    if (!reader.finished) {
      const e = new Error("the connection closed before the answer was complete");
      if (reader.output) throw new StreamBroken("stream broken", { cause: e });
      throw e;
    }
    const rest = reader.end();
    return rest.length ? rest : undefined;
  }

  /** Stops reading a stream that was not read to its end. */
  cancel(): void {
    if (this.#ended) return;
    this.#end();
    this.#chunks?.cancel();
  }

  #end(): void {
    this.#ended = true;
    this.release();
  }
}

/**
 * The reads of every LLM stream in the process go on this many per turn of the event loop. A
 * read costs about 30 µs to its SSE frames; with 1,000 streams twenty thousand arrive a
 * second, and unbounded they held the loop 88–180 ms at a time (6–15 ms now:
 * docs/performance.md, "Many turns at once").
 */
export const READS_PER_LOOP = 32;
const reads = new Pacer(READS_PER_LOOP);

/**
 * A chat completion's Server-Sent Events as the JSON chunks of each socket read, as the SDK
 * reads them: up to `[DONE]`, an `error` event or a chunk with `error` thrown as the SDK's
 * `APIError`.
 */
class SseChunks {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #parser: EventSourceParser;
  #batch: Chunk[] = [];
  #failure: unknown;
  #done = false;

  constructor(private readonly response: Response) {
    if (!response.body) throw new OpenAI.OpenAIError("Attempted to iterate over a response with no body");
    this.#reader = response.body.getReader() as unknown as ReadableStreamDefaultReader<Uint8Array>;
    this.#parser = createParser({ onEvent: (m) => this.#message(m) });
  }

  async next(): Promise<Chunk[] | undefined> {
    for (;;) {
      // what came before a failure is the model's output still: it goes first
      if (this.#batch.length) {
        const batch = this.#batch;
        this.#batch = [];
        return batch;
      }
      if (this.#failure !== undefined) throw this.#failure;
      if (this.#done) return undefined;
      // all the reads that are in already, in one go (Bun's own `readMany`)
      const { value, done } = await this.#reader.readMany();
      const turn = reads.turn();
      if (turn) await turn;
      for (const bytes of value ?? []) this.#parser.feed(this.#decoder.decode(bytes, { stream: true }));
      if (done) {
        // what a server left without the blank line that ends it still counts
        this.#parser.feed(`${this.#decoder.decode()}\n\n`);
        this.#done = true;
      } else if (this.#done || this.#failure !== undefined) this.cancel(); // [DONE] or a failure: the rest is not read
    }
  }

  cancel(): void {
    this.#done = true;
    this.#reader.cancel().catch(() => {});
  }

  #message(m: EventSourceMessage): void {
    if (this.#done || this.#failure !== undefined) return;
    if (m.data === "[DONE]") {
      this.#done = true;
      return;
    }
    let data: Chunk & { error?: unknown };
    try {
      data = JSON.parse(m.data);
    } catch {
      this.#failure = new SyntaxError("Error reading response: malformed server-sent event JSON.");
      return;
    }
    if (m.event === "error" || data?.error) {
      this.#failure = new OpenAI.APIError(undefined, (data?.error ?? data) as object, undefined, this.response.headers);
      return;
    }
    this.#batch.push(data);
  }
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
