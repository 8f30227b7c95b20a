// What the context module's unit tests share (their model is tests/support/scripted-model.ts).
import type { LlmEvent, LlmRequest } from "../../src/llm/types";

export const text = (t: string, inputTokens = 0): LlmEvent[] => [{ type: "text", delta: t }, ...(inputTokens ? [{ type: "usage" as const, inputTokens, outputTokens: 1 }] : [])];

/** The whole text of a request, for counting what it carries. */
export const requestText = (req: LlmRequest) => req.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
