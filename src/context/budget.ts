/** The context settings of the configuration (`llm.*`). */
export interface ContextSettings {
  contextWindow: number;
  maxOutputTokens: number;
  compactionModel?: string;
  memoryFlush: boolean;
}

/** How a request's tokens are shared out; every figure in tokens. */
export interface ContextBudget {
  window: number;
  /** Kept free for the answer: `maxOutputTokens`, at most half the window. */
  reserve: number;
  /** What a request's prompt may take: the window less the reserve. */
  prompt: number;
  /** The most a summary may take (its `max_tokens`). */
  summary: number;
}

export function contextBudget(s: Pick<ContextSettings, "contextWindow" | "maxOutputTokens">): ContextBudget {
  const reserve = Math.min(s.maxOutputTokens, Math.floor(s.contextWindow / 2));
  const prompt = s.contextWindow - reserve;
  const summary = Math.min(reserve, Math.max(256, Math.min(2048, Math.floor(prompt / 8))));
  return { window: s.contextWindow, reserve, prompt, summary };
}
