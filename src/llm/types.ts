
/** A part of a user message: text, or an image by URL or data URL. */
export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string; detail?: string } };

/** A chat message as OpenAI-compatible chat completion endpoints take it. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

/** The endpoint answered the raw proxy's request with an error status; `detail` is its own short message ("" when it gave none, or a page). */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`HTTP ${status}${detail ? `: ${detail}` : ""}`);
  }
}

/** A call of a tool the model asked for in one step. */
export type ToolCall = { call_id: string; name: string; arguments: string };

/** What the model is told about a tool: name, description and a JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  /** When the turn must be over (ms since the epoch): no retry waits past it. */
  deadline?: number;
  /** Another model than the configured one (summaries may use `llm.compactionModel`). */
  model?: string;
  /** Sent as `max_tokens`: the most the answer may take. */
  maxTokens?: number;
  /** Sampling and output shape the caller asked for (Responses `temperature`, `text.format`). */
  options?: LlmOptions;
}

export interface LlmOptions {
  temperature?: number;
  /** Chat completions' `response_format`: `{type: "json_schema", json_schema}` or `{type: "json_object"}`. */
  responseFormat?: Record<string, unknown>;
}

export type LlmEvent =
  /** A piece of the answer (never the model's reasoning). */
  | { type: "text"; delta: string }
  /** A piece of the model's reasoning: shown to a person at most, never part of the answer or the history. */
  | { type: "reasoning"; delta: string }
  /** The calls the step asked for, once all of them are complete. */
  | { type: "tool_calls"; calls: ToolCall[] }
  /**
   * What one request cost, as the provider reported it: `cachedTokens` of `inputTokens` were
   * read from its prompt cache, `reasoningTokens` of `outputTokens` were reasoning; `costUsd`
   * when the provider says what it charged (OpenRouter's `usage.cost`); `model` is the one
   * that answered (a fallback's, a summary's own).
   */
  | { type: "usage"; inputTokens: number; outputTokens: number; cachedTokens?: number; reasoningTokens?: number; costUsd?: number; model?: string }
  /** The provider cut the answer at its token limit (`finish_reason: "length"`). */
  | { type: "truncated" };

export interface Llm {
  /** The model name sent to the provider, or undefined when none is configured. */
  readonly model: string | undefined;
  readonly configured: boolean;
  /**
   * One model step, streamed. Throws TurnError("llm_error") on provider failures, and the
   * signal's reason when it aborts: a stream never ends quietly half-way.
   */
  stream(request: LlmRequest): AsyncIterable<LlmEvent>;
  /** Raw pass-through for the model proxy: the provider's own HTTP response; an error status throws UpstreamHttpError. */
  proxyChatCompletions(body: Record<string, unknown>, signal: AbortSignal): Promise<Response>;
  /** Checks the endpoint by listing its models (used by onboarding). */
  listModels(signal?: AbortSignal): Promise<string[]>;
  /** The embedding model on the same endpoint, or undefined when none is configured. */
  readonly embeddingModel: string | undefined;
  /** One vector per text, in order, from the endpoint's /embeddings. Throws when it fails. */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}
