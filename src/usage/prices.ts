import type { Config } from "../config/schema";

export type Prices = Config["llm"]["prices"];

/** Tokens and cost of LLM requests: the counts the provider reported, and what they cost. */
export interface TokenUsage {
  inputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache. */
  cachedTokens: number;
  outputTokens: number;
  /** Of `outputTokens`, the model's reasoning. */
  reasoningTokens: number;
  costUsd: number;
}

export const noUsage = (): TokenUsage => ({ inputTokens: 0, cachedTokens: 0, outputTokens: 0, reasoningTokens: 0, costUsd: 0 });

export function addUsage(to: TokenUsage, u: TokenUsage): void {
  to.inputTokens += u.inputTokens;
  to.cachedTokens += u.cachedTokens;
  to.outputTokens += u.outputTokens;
  to.reasoningTokens += u.reasoningTokens;
  to.costUsd += u.costUsd;
}

/**
 * What a request cost: the provider's own figure when it sent one, else the model's prices
 * (`llm.prices`), cached input at its own price (the input price when none is set); reasoning
 * is part of the output tokens, so it is not counted twice. 0 for a model without prices.
 */
export function costUsd(prices: Prices, model: string, u: Omit<TokenUsage, "costUsd">, reported?: number): number {
  if (reported !== undefined) return reported;
  const p = prices[model];
  if (!p) return 0;
  const cached = Math.min(u.cachedTokens, u.inputTokens);
  return ((u.inputTokens - cached) * p.input_per_mtok + cached * (p.cached_input_per_mtok ?? p.input_per_mtok) + u.outputTokens * p.output_per_mtok) / 1e6;
}

/** USD as the store keeps it: whole micro-dollars. */
export const microUsd = (usd: number) => Math.round(usd * 1e6);
