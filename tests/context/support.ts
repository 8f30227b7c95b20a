// A fake Llm for the context module's unit tests: records every request, answers from a function.
import type { Llm, LlmEvent, LlmRequest } from "../../src/llm/types";

export type Answer = LlmEvent[] | Error;

export function fakeLlm(answer: (req: LlmRequest, n: number) => Answer, model = "main-model"): Llm & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    model,
    configured: true,
    requests,
    async *stream(req) {
      requests.push(req);
      const a = answer(req, requests.length - 1);
      if (a instanceof Error) throw a;
      yield* a;
    },
    proxyChatCompletions: () => Promise.reject(new Error("unused")),
    listModels: async () => [],
    embeddingModel: undefined,
    embed: async () => [],
  };
}

export const text = (t: string, inputTokens = 0): LlmEvent[] => [{ type: "text", delta: t }, ...(inputTokens ? [{ type: "usage" as const, inputTokens, outputTokens: 1 }] : [])];

/** The whole text of a request, for counting what it carries. */
export const requestText = (req: LlmRequest) => req.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
