// The model's context window, which every request is made to fit: `llm.contextWindow` when
// any layer sets it, else what the LLM server says it gives the model, else 32768.
//
// The server is asked at start (serve waits a moment for it, never long) and asked again,
// in the background, when a turn starts and the last answer is older than five minutes: a
// server's window can change under a running service (Ollama reloads a model with another
// num_ctx, LM Studio loads it with another context length), and Ollama silently cuts what
// does not fit. A server that stops answering leaves the last window it gave.
import type { ContextSettings } from "../context/budget";
import type { Logger } from "../log";
import type { Endpoint } from "./openai";
import { readServerWindow } from "./window-servers";

export const DEFAULT_CONTEXT_WINDOW = 32_768;

export interface WindowReading {
  tokens: number;
  source: "config" | "server" | "default";
  /** Where it came from, for people: "config", "default", "Ollama num_ctx of qwen3:8b". */
  from: string;
}

export interface ContextWindowOptions {
  /** Where the window is said when it is first read and when it changes (the service log). */
  log?: Logger;
  /** How long one request to the server may take (ms). */
  timeoutMs?: number;
  /** How old the server's answer may get before a turn has it asked again (ms). */
  maxAgeMs?: number;
}

/** "8192 tokens (Ollama num_ctx of qwen3:8b)" */
export const describeWindow = (w: WindowReading) => `${w.tokens} tokens (${w.from})`;

export class ContextWindow {
  #reading: WindowReading;
  #readAt = 0;
  #reading$: Promise<WindowReading> | undefined;
  readonly #stop = new AbortController();
  readonly #endpoint: (Endpoint & { baseUrl: string; model: string }) | undefined;

  constructor(
    llm: Endpoint & { contextWindow?: number },
    private readonly opts: ContextWindowOptions = {},
  ) {
    const configured = llm.contextWindow !== undefined;
    this.#reading = configured ? { tokens: llm.contextWindow!, source: "config", from: "config" } : { tokens: DEFAULT_CONTEXT_WINDOW, source: "default", from: "default" };
    // the OpenAI API (no base URL) publishes no window
    this.#endpoint = !configured && llm.baseUrl && llm.model ? { baseUrl: llm.baseUrl, apiKey: llm.apiKey, model: llm.model } : undefined;
  }

  /** The window as last read; never asks the server. */
  get reading(): WindowReading {
    return this.#reading;
  }

  /** Whether the server is being asked right now. */
  get asking(): boolean {
    return this.#reading$ !== undefined;
  }

  /**
   * Asks the server for the window (once at a time) and keeps its answer; resolves with the
   * window in force, whatever the server did. Nothing to ask when the window is configured.
   */
  refresh(): Promise<WindowReading> {
    if (!this.#endpoint) return Promise.resolve(this.#reading);
    this.#reading$ ??= (async () => {
      const endpoint = this.#endpoint!;
      const found = await readServerWindow(endpoint, this.#stop.signal, this.opts.timeoutMs ?? 3_000).catch(() => undefined);
      const first = this.#readAt === 0;
      this.#readAt = Date.now();
      if (found) {
        const changed = found.tokens !== this.#reading.tokens || found.from !== this.#reading.from;
        this.#reading = { tokens: found.tokens, source: "server", from: found.from };
        if (first || changed) this.opts.log?.info(`context window ${describeWindow(this.#reading)}`, { tokens: found.tokens, source: found.from });
      } else if (first) {
        this.opts.log?.warn(`context window ${describeWindow(this.#reading)}: ${endpoint.baseUrl} does not say which window it gives ${endpoint.model}; set LLM_CONTEXT_WINDOW`, {
          tokens: this.#reading.tokens,
          model: endpoint.model,
        });
      }
      return this.#reading;
    })().finally(() => (this.#reading$ = undefined));
    return this.#reading$;
  }

  /**
   * `llm.*` as the agent's context settings, with this window: each turn reads it when it
   * starts, and a stale server answer is asked for again then (the turn does not wait).
   */
  settings(llm: Omit<ContextSettings, "contextWindow">): ContextSettings {
    const self = this;
    return {
      maxOutputTokens: llm.maxOutputTokens,
      compactionModel: llm.compactionModel,
      memoryFlush: llm.memoryFlush,
      get contextWindow() {
        if (self.#endpoint && !self.asking && Date.now() - self.#readAt >= (self.opts.maxAgeMs ?? 5 * 60_000)) void self.refresh();
        return self.#reading.tokens;
      },
    };
  }

  /** Abandons a question still waiting for the server (at shutdown). */
  close(): void {
    this.#stop.abort();
  }
}
