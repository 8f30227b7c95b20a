import { Type, type Static } from "@sinclair/typebox";
import type { ConversationItem } from "../../agent/items";
import type { ExternalTool } from "../../tools/tool";

/** Wire shapes of the Responses API, field for field as OpenAI Responses clients expect. */
export const OutputText = Type.Object({
  type: Type.Literal("output_text"),
  text: Type.String(),
  annotations: Type.Array(Type.Unknown()),
});

export const OutputMessage = Type.Object({
  type: Type.Literal("message"),
  id: Type.String(),
  status: Type.Union([Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("incomplete")]),
  role: Type.Literal("assistant"),
  content: Type.Array(OutputText),
});

export const OutputFunctionCall = Type.Object({
  type: Type.Literal("function_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  status: Type.Union([Type.Literal("in_progress"), Type.Literal("completed")]),
});

export const OutputItem = Type.Union([OutputMessage, OutputFunctionCall]);

export const Usage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
  cost_usd: Type.Optional(Type.Number()),
});

export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal("response"),
  created_at: Type.Integer(),
  status: Type.Union([Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("failed")]),
  background: Type.Boolean(),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  incomplete_details: Type.Null(),
  instructions: Type.Union([Type.String(), Type.Null()]),
  max_output_tokens: Type.Null(),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Type.Union([Type.String(), Type.Null()]),
  reasoning: Type.Object({ effort: Type.Null(), summary: Type.Null() }),
  store: Type.Boolean(),
  temperature: Type.Union([Type.Number(), Type.Null()]),
  text: Type.Object({ format: Type.Object({ type: Type.Literal("text") }) }),
  tool_choice: Type.Literal("auto"),
  tools: Type.Array(Type.Unknown()),
  top_p: Type.Null(),
  truncation: Type.Literal("disabled"),
  usage: Type.Union([Usage, Type.Null()]),
  user: Type.Null(),
  metadata: Type.Record(Type.String(), Type.String()),
});

export type OutputMessage = Static<typeof OutputMessage>;
export type OutputFunctionCall = Static<typeof OutputFunctionCall>;
export type OutputItem = Static<typeof OutputItem>;
export type Usage = Static<typeof Usage>;
export type ResponseObject = Static<typeof ResponseObject>;

export interface ResponseFacts {
  id: string;
  createdAt: number;
  status: ResponseObject["status"];
  model: string;
  error: { code: string; message: string } | null;
  items: ConversationItem[];
  usage: { inputTokens: number; outputTokens: number; costUsd?: number } | null;
  instructions?: string | null;
  previousResponseId?: string | null;
  temperature?: number | null;
  tools?: ExternalTool[];
}

export function buildResponse(f: ResponseFacts): ResponseObject {
  return {
    id: f.id,
    object: "response",
    created_at: f.createdAt,
    status: f.status,
    background: false,
    error: f.error,
    incomplete_details: null,
    instructions: f.instructions ?? null,
    max_output_tokens: null,
    model: f.model,
    output: f.items.flatMap((i) => {
      const out = outputItem(i);
      return out ? [out] : [];
    }),
    parallel_tool_calls: false,
    previous_response_id: f.previousResponseId ?? null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: f.temperature ?? null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: (f.tools ?? []).map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false })),
    top_p: null,
    truncation: "disabled",
    usage: f.usage ? usage(f.usage) : null,
    user: null,
    metadata: {},
  };
}

export function usage(u: { inputTokens: number; outputTokens: number; costUsd?: number }): Usage {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.inputTokens + u.outputTokens,
    ...(u.costUsd !== undefined ? { cost_usd: u.costUsd } : {}),
  };
}

/** Caller-visible items: assistant messages and caller tool calls (built-in tool calls stay inside). */
export function outputItem(item: ConversationItem): OutputItem | undefined {
  if (item.type === "message" && item.role === "assistant") return messageItem(item.id, item.content, item.status ?? "completed");
  if (item.type === "function_call" && item.external) return functionCallItem(item, "completed");
  return undefined;
}

export function messageItem(id: string, text: string | null, status: OutputMessage["status"]): OutputMessage {
  return { type: "message", id, status, role: "assistant", content: text === null ? [] : [{ type: "output_text", text, annotations: [] }] };
}

export function functionCallItem(
  item: { id: string; call_id: string; name: string; arguments: string },
  status: OutputFunctionCall["status"],
): OutputFunctionCall {
  return { type: "function_call", id: item.id, call_id: item.call_id, name: item.name, arguments: item.arguments, status };
}
