import OpenAI from "openai";
import { TurnError } from "../errors";
import { http1Fetch } from "./http1-fetch";
import { describeFailure, providerMessage, retryable, retryDelay, sleep } from "./retry";
import { step, StreamBroken, type StepStream } from "./step";
import type { StreamSlots } from "./stream-slots";
import { UpstreamHttpError, type Llm, type LlmEvent, type LlmRequest } from "./types";

export interface Endpoint {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
}

export interface OpenAiLlmOptions extends Endpoint {
  /** Model for /embeddings (workspace memory); without one, `embed` throws. */
  embeddingModel?: string;
  /** Retries of a request that failed before any output (default 3). */
  maxRetries?: number;
  /** Tried in order once the primary's retries are spent. */
  fallbacks?: Endpoint[];
  /** How many streams run at once (`llm.maxConcurrent`); without it, no limit of the client's own. */
  slots?: StreamSlots;
}

export const LLM_NOT_CONFIGURED =
  "No LLM is configured. Set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL (or OPENAI_BASE_URL and OPENAI_API_KEY), or run `service onboard`.";

/**
 * A model server over plain HTTP is asked on the event loop's own sockets (http1-fetch.ts);
 * `SERVICE_BUN_FETCH=1` sends every request through Bun's `fetch` instead (docs/configuration.md).
 * The clients send with it, and so does each model step (step.ts).
 */
const modelFetch = process.env.SERVICE_BUN_FETCH === "1" ? fetch : http1Fetch;

const client = (e: Endpoint) =>
  new OpenAI({
    baseURL: e.baseUrl,
    // Local servers (Ollama, llama.cpp) take any key; the SDK insists on one.
    apiKey: e.apiKey || "none",
    maxRetries: 0, // retried here, within the turn's deadline, then the fallbacks
    timeout: 10 * 60_000,
    fetch: modelFetch,
  });

/** The first wait before a retry; it doubles with each one. */
const RETRY_BASE_MS = 500;

/** How a person names an endpoint: its host and model, never its key. */
const endpointName = (e: Endpoint) => {
  let where = "the OpenAI API";
  if (e.baseUrl) {
    try {
      where = new URL(e.baseUrl).host;
    } catch {
      where = e.baseUrl;
    }
  }
  return `${where} (model ${e.model})`;
};

/** Any OpenAI-compatible chat completions endpoint, through the official SDK. */
export function openAiLlm(opts: OpenAiLlmOptions): Llm {
  const configured = Boolean(opts.model && (opts.baseUrl || opts.apiKey));
  const primary = { endpoint: opts as Endpoint, client: client(opts) };
  const endpoints = [primary, ...(opts.fallbacks ?? []).map((e) => ({ endpoint: e, client: client(e) }))];
  const maxRetries = opts.maxRetries ?? 3;

  async function* stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    if (!configured) throw new TurnError("llm_not_configured", LLM_NOT_CONFIGURED);
    const failures: string[] = [];
    let lastCause: unknown;
    for (const [n, { endpoint, client }] of endpoints.entries()) {
      // a summary's own model (llm.compactionModel) is asked of the primary endpoint
      const model = n === 0 && req.model ? req.model : endpoint.model!;
      for (let attempt = 0; ; attempt++) {
        let started = false;
        let events: StepStream | undefined;
        const slot = await opts.slots?.acquire(req.signal);
        try {
          events = await step(client, model, req, modelFetch);
          for (let batch = await events.next(); batch; batch = await events.next()) {
            for (const ev of batch) {
              started = true;
              yield ev;
            }
          }
          return;
        } catch (e) {
          if (req.signal.aborted) throw req.signal.reason;
          if (e instanceof TurnError) throw e;
          const cause = e instanceof StreamBroken ? e.cause : e;
          if (started || e instanceof StreamBroken) {
            throw new TurnError("llm_error", `The language model at ${endpointName(endpoint)} stopped in the middle of its answer: ${describeFailure(cause)}.`);
          }
          const wait = retryable(cause) && attempt < maxRetries ? retryDelay(attempt, cause, { baseMs: RETRY_BASE_MS, deadline: req.deadline }) : undefined;
          if (wait === undefined) {
            lastCause = cause;
            const tries = attempt + 1;
            failures.push(`${n ? "then the fallback at" : "the language model at"} ${endpointName(endpoint)} ${describeFailure(cause)}${tries > 1 ? ` (${tries} tries)` : ""}`);
            break;
          }
          slot?.release(); // not held through the wait before a retry
          await sleep(wait, req.signal);
        } finally {
          events?.cancel();
          slot?.release();
        }
      }
    }
    const text = failures.join("; ");
    // the provider's own error stays reachable: a context overflow is told by its code
    throw Object.assign(new TurnError("llm_error", `${text[0]!.toUpperCase()}${text.slice(1)}.`), { cause: lastCause });
  }

  return {
    model: opts.model,
    configured,
    stream,
    async proxyChatCompletions(body, signal) {
      if (!configured) throw new TurnError("llm_not_configured", LLM_NOT_CONFIGURED);
      const model = typeof body.model === "string" && body.model && body.model !== "default" ? body.model : opts.model;
      try {
        return await primary.client.chat.completions
          .create({ ...body, model } as unknown as OpenAI.ChatCompletionCreateParams, { signal })
          .asResponse();
      } catch (e) {
        if (e instanceof OpenAI.APIError && e.status) throw new UpstreamHttpError(e.status, providerMessage(e));
        if (signal.aborted) throw signal.reason ?? e;
        throw new TurnError("llm_error", `The language model at ${endpointName(opts)} ${describeFailure(e)}.`);
      }
    },
    async listModels(signal) {
      const page = await primary.client.models.list({ signal });
      return page.data.map((m) => m.id);
    },
    embeddingModel: opts.embeddingModel,
    async embed(texts, signal) {
      if (!opts.embeddingModel) throw new Error("No embedding model is configured (LLM_EMBEDDING_MODEL).");
      if (!opts.baseUrl && !opts.apiKey) throw new Error("No LLM endpoint is configured for embeddings (LLM_BASE_URL).");
      if (!texts.length) return [];
      const res = await primary.client.embeddings.create({ model: opts.embeddingModel, input: texts }, { signal });
      const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      if (vectors.length !== texts.length) {
        throw new Error(`the embedding endpoint returned ${vectors.length} vectors for ${texts.length} texts`);
      }
      return vectors;
    },
  };
}
