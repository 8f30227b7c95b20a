import OpenAI from "openai";
import type { PendingCall } from "../agent/items";
import { TurnError } from "../errors";
import type { Llm, LlmEvent, LlmRequest } from "./types";

export interface OpenAiLlmOptions {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  /** Model for /embeddings (workspace memory); without one, `embed` throws. */
  embeddingModel?: string;
}

export const LLM_NOT_CONFIGURED =
  "No LLM is configured. Set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL (or OPENAI_BASE_URL and OPENAI_API_KEY), or run `service onboard`.";

/** Any OpenAI-compatible chat completions endpoint, through the official SDK. */
export function openAiLlm(opts: OpenAiLlmOptions): Llm {
  const configured = Boolean(opts.model && (opts.baseUrl || opts.apiKey));
  const client = new OpenAI({
    baseURL: opts.baseUrl,
    // Local servers (Ollama, llama.cpp) take any key; the SDK insists on one.
    apiKey: opts.apiKey || "none",
    maxRetries: 0,
    timeout: 10 * 60_000,
  });

  async function* stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    if (!configured) throw new TurnError("llm_not_configured", LLM_NOT_CONFIGURED);
    let chunks;
    try {
      chunks = await client.chat.completions.create(
        {
          model: opts.model!,
          messages: req.messages as OpenAI.ChatCompletionMessageParam[],
          stream: true,
          stream_options: { include_usage: true },
          ...(req.tools.length
            ? {
                tools: req.tools.map((t) => ({
                  type: "function" as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
              }
            : {}),
        },
        { signal: req.signal },
      );
    } catch (e) {
      throw llmError(e, req.signal);
    }
    const calls = new Map<number, PendingCall>();
    try {
      for await (const chunk of chunks) {
        if (chunk.usage) {
          yield {
            type: "usage",
            inputTokens: chunk.usage.prompt_tokens ?? 0,
            outputTokens: chunk.usage.completion_tokens ?? 0,
          };
        }
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (delta.content) yield { type: "text", delta: delta.content };
        for (const tc of delta.tool_calls ?? []) {
          const call = calls.get(tc.index) ?? { call_id: "", name: "", arguments: "" };
          if (tc.id) call.call_id = tc.id;
          if (tc.function?.name) call.name += tc.function.name;
          if (tc.function?.arguments) call.arguments += tc.function.arguments;
          calls.set(tc.index, call);
        }
      }
    } catch (e) {
      throw llmError(e, req.signal);
    }
    if (calls.size) {
      yield { type: "tool_calls", calls: [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c) };
    }
  }

  return {
    model: opts.model,
    configured,
    stream,
    async proxyChatCompletions(body, signal) {
      if (!configured) throw new TurnError("llm_not_configured", LLM_NOT_CONFIGURED);
      const model = typeof body.model === "string" && body.model && body.model !== "default" ? body.model : opts.model;
      try {
        return await client.chat.completions
          .create({ ...body, model } as unknown as OpenAI.ChatCompletionCreateParams, { signal })
          .asResponse();
      } catch (e) {
        if (e instanceof OpenAI.APIError && e.status) {
          return Response.json({ error: e.error ?? { message: e.message } }, { status: e.status });
        }
        throw llmError(e, signal);
      }
    },
    async listModels(signal) {
      const page = await client.models.list({ signal });
      return page.data.map((m) => m.id);
    },
    embeddingModel: opts.embeddingModel,
    async embed(texts, signal) {
      if (!opts.embeddingModel) throw new Error("No embedding model is configured (LLM_EMBEDDING_MODEL).");
      if (!opts.baseUrl && !opts.apiKey) throw new Error("No LLM endpoint is configured for embeddings (LLM_BASE_URL).");
      if (!texts.length) return [];
      const res = await client.embeddings.create({ model: opts.embeddingModel, input: texts }, { signal });
      const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      if (vectors.length !== texts.length) {
        throw new Error(`the embedding endpoint returned ${vectors.length} vectors for ${texts.length} texts`);
      }
      return vectors;
    },
  };
}

function llmError(e: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason ?? e;
  if (e instanceof TurnError) return e;
  const detail =
    e instanceof OpenAI.APIError
      ? `${e.status ?? "connection"}: ${e.message}`
      : e instanceof Error
        ? e.message
        : String(e);
  return new TurnError("llm_error", `The language model failed: ${detail}`);
}
