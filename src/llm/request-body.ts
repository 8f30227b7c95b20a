import { memoByObject, memoByText } from "../memo";
import type { ChatMessage, LlmRequest, ToolSpec } from "./types";

/**
 * A model step's chat completion request, as the JSON text the `openai` SDK would send. Each
 * tool's definition is serialised once and kept (the registry keeps its specs: see
 * tools/registry.ts): the definitions are most of a request, and serialising them anew was a
 * twentieth of a turn's time (docs/performance.md).
 */
export function chatRequestBody(model: string, req: Pick<LlmRequest, "messages" | "tools" | "maxTokens" | "options">): string {
  const rest = JSON.stringify({
    stream: true,
    stream_options: { include_usage: true },
    ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
    ...(req.options?.temperature !== undefined ? { temperature: req.options.temperature } : {}),
    ...(req.options?.responseFormat ? { response_format: req.options.responseFormat } : {}),
  });
  const head = `{"model":${JSON.stringify(model)},"messages":[${req.messages.map(messageJson).join(",")}],${rest.slice(1)}`;
  if (!req.tools.length) return head;
  return `${head.slice(0, -1)},"tools":${toolsJson(req.tools)}}`;
}

/**
 * A system prompt's JSON, by its text: a user's prompt (identity files included, often several
 * KB) is the same every step, and serialising it anew cost about 14 µs a step at 8 KB.
 */
const systemJson = memoByText((content) => JSON.stringify({ role: "system", content }));

const messageJson = (m: ChatMessage): string => (m.role === "system" ? systemJson(m.content) : JSON.stringify(m));

const toolJson = memoByObject((t: ToolSpec) => JSON.stringify({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));

/** A list of tools offered from turn to turn (agent/offer.ts), as JSON: made once per list. */
const toolsJson = memoByObject((tools: readonly ToolSpec[]) => `[${tools.map(toolJson).join(",")}]`);
