// An `Llm` value with no HTTP under it: each model step streams the next scripted answer, and
// every request is recorded. For testing the agent loop and the context module directly; the
// HTTP stack and the OpenAI client have scripted-llm.ts.
import type { Llm, LlmEvent, LlmRequest } from "../../src/llm/types";

/**
 * One model step: the events it streams; an error it throws (after `events`, if any); or
 * `hang`, a step that streams `events` and then waits until the request's signal aborts.
 */
export type ScriptedStep = LlmEvent[] | Error | { events?: LlmEvent[]; error: Error } | { events?: LlmEvent[]; hang: true };

export interface ScriptedModel extends Llm {
  /** Every request, in order, as the model got it. */
  readonly requests: LlmRequest[];
}

/**
 * Answers step after step from `script` (a list, one per request, or a function of the
 * request and its index); a request past the end of a list fails the test loudly.
 */
export function scriptedModel(script: ScriptedStep[] | ((req: LlmRequest, n: number) => ScriptedStep), model = "scripted-model"): ScriptedModel {
  const requests: LlmRequest[] = [];
  const next = (req: LlmRequest, n: number): ScriptedStep => {
    if (typeof script === "function") return script(req, n);
    const step = script[n];
    if (!step) throw new Error(`the script has ${script.length} steps; request ${n + 1} came`);
    return step;
  };
  return {
    model,
    configured: true,
    requests,
    async *stream(req) {
      requests.push(req);
      const step = next(req, requests.length - 1);
      if (step instanceof Error) throw step;
      if (Array.isArray(step)) return yield* step;
      if (step.events) yield* step.events;
      if ("error" in step) throw step.error;
      if (!req.signal.aborted) await new Promise((resolve) => req.signal.addEventListener("abort", resolve, { once: true }));
      throw req.signal.reason;
    },
    proxyChatCompletions: () => Promise.reject(new Error("the scripted model has no proxy")),
    listModels: async () => [model],
    embeddingModel: undefined,
    embed: () => Promise.reject(new Error("the scripted model has no embeddings")),
  };
}

/** A step that answers `text`. */
export const says = (text: string): LlmEvent[] => [{ type: "text", delta: text }];

/** A step that calls tools: each `[name, arguments]` with the id `call_<i>`. */
export const calls = (...called: [name: string, args: unknown][]): LlmEvent[] => [
  { type: "tool_calls", calls: called.map(([name, args], i) => ({ call_id: `call_${i}`, name, arguments: JSON.stringify(args) })) },
];
