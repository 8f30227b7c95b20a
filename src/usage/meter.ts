import type { Llm, LlmEvent } from "../llm/types";
import { localDay, type UsageRow } from "../store/usage";
import { addUsage, costUsd, microUsd, noUsage, type Prices, type TokenUsage } from "./prices";

/** One LLM request of a turn, once it ended: the bus's `llm.request` event. */
export interface LlmRequestEnded {
  type: "llm.request";
  model: string;
  outcome: "ok" | "error" | "cancelled";
  startedAt: number;
  endedAt: number;
  /** Undefined when the provider reported no usage. */
  usage?: TokenUsage;
}

/**
 * Counts what a turn's LLM requests cost, by the model that answered: the model steps, and the
 * summaries and memory notes taken to make room. Every request of the turn goes through
 * `wrap`ped LLMs; `ended` hears of each request as it ends.
 */
export class TurnMeter {
  readonly byModel = new Map<string, TokenUsage>();
  ended?: (e: LlmRequestEnded) => void;

  constructor(private readonly prices: Prices) {}

  /** The LLM as this turn uses it. */
  wrap(llm: Llm): Llm {
    const meter = this;
    return {
      ...llm,
      async *stream(req) {
        const startedAt = Date.now();
        let model = req.model ?? llm.model ?? "unknown";
        let usage: TokenUsage | undefined;
        let outcome: LlmRequestEnded["outcome"] = "error";
        try {
          for await (const ev of llm.stream(req)) {
            if (ev.type === "usage") {
              model = ev.model ?? model;
              const u = meter.#count(model, ev);
              usage ??= noUsage();
              addUsage(usage, u);
            }
            yield ev;
          }
          outcome = "ok";
        } finally {
          if (outcome !== "ok" && req.signal.aborted) outcome = "cancelled";
          meter.ended?.({ type: "llm.request", model, outcome, startedAt, endedAt: Date.now(), usage });
        }
      },
    };
  }

  /** All of the turn's requests together. */
  total(): TokenUsage {
    const t = noUsage();
    for (const u of this.byModel.values()) addUsage(t, u);
    return t;
  }

  /** The usage ledger's rows of the turn, one per model that answered (none when none did). */
  rows(turn: Pick<UsageRow, "responseId" | "userId" | "threadId" | "channel" | "routineId">): UsageRow[] {
    const now = Date.now();
    const day = localDay(now);
    return [...this.byModel].map(([model, u]) => ({
      ...turn,
      model,
      inputTokens: u.inputTokens,
      cachedTokens: u.cachedTokens,
      outputTokens: u.outputTokens,
      reasoningTokens: u.reasoningTokens,
      costMicroUsd: microUsd(u.costUsd),
      day,
      createdAt: now,
    }));
  }

  #count(model: string, ev: Extract<LlmEvent, { type: "usage" }>): TokenUsage {
    const tokens = { inputTokens: ev.inputTokens, cachedTokens: ev.cachedTokens ?? 0, outputTokens: ev.outputTokens, reasoningTokens: ev.reasoningTokens ?? 0 };
    const u = { ...tokens, costUsd: costUsd(this.prices, model, tokens, ev.costUsd) };
    let tally = this.byModel.get(model);
    if (!tally) this.byModel.set(model, (tally = noUsage()));
    addUsage(tally, u);
    return u;
  }
}
