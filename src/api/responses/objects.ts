import { Type, type Static } from "@sinclair/typebox";
import type { ConversationItem, ImageRef } from "../../conversation/items";
import type { TurnErrorCode } from "../../errors";
import type { ExternalTool } from "../../conversation/items";
import type { RequestEcho } from "./request";

/** Wire shapes of the Responses API, field for field as OpenAI Responses clients expect. */
export const OutputText = Type.Object({
  type: Type.Literal("output_text"),
  text: Type.String(),
  annotations: Type.Array(Type.Unknown()),
  logprobs: Type.Array(Type.Unknown()),
});

const ItemStatus = Type.Union([Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("incomplete")]);

export const OutputMessage = Type.Object({
  type: Type.Literal("message"),
  id: Type.String(),
  status: ItemStatus,
  role: Type.Literal("assistant"),
  content: Type.Array(OutputText),
});

export const OutputFunctionCall = Type.Object({
  type: Type.Literal("function_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  status: ItemStatus,
});

export const OutputItem = Type.Union([OutputMessage, OutputFunctionCall]);

const InputTextContent = Type.Object({ type: Type.Literal("input_text"), text: Type.String() });
const InputImageContent = Type.Object({ type: Type.Literal("input_image"), image_url: Type.String(), detail: Type.String() });

/** An item as input_items and the Conversations API list it. */
export const ItemResource = Type.Union([
  OutputMessage,
  Type.Object({
    type: Type.Literal("message"),
    id: Type.String(),
    status: Type.Literal("completed"),
    role: Type.Literal("user"),
    content: Type.Array(Type.Union([InputTextContent, InputImageContent])),
  }),
  OutputFunctionCall,
  Type.Object({
    type: Type.Literal("function_call_output"),
    id: Type.String(),
    call_id: Type.String(),
    output: Type.Union([Type.String(), Type.Array(Type.Union([InputTextContent, InputImageContent]))]),
    status: Type.Literal("completed"),
  }),
]);

export const Usage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer(), cache_write_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
  cost_usd: Type.Optional(Type.Number()),
});

export const ResponseError = Type.Object({ code: Type.String(), message: Type.String(), type: Type.String(), param: Type.Null() });

export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal("response"),
  created_at: Type.Integer(),
  status: Type.Union([Type.Literal("queued"), Type.Literal("in_progress"), Type.Literal("completed"), Type.Literal("failed")]),
  background: Type.Boolean(),
  error: Type.Union([ResponseError, Type.Null()]),
  /** Set when the answer was cut at the provider's token limit; the status stays `completed`. */
  incomplete_details: Type.Union([Type.Object({ reason: Type.Literal("max_output_tokens") }), Type.Null()]),
  instructions: Type.Union([Type.String(), Type.Null()]),
  max_output_tokens: Type.Union([Type.Integer(), Type.Null()]),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Type.Union([Type.String(), Type.Null()]),
  conversation: Type.Union([Type.Object({ id: Type.String() }), Type.Null()]),
  reasoning: Type.Object({ effort: Type.Null(), summary: Type.Null() }),
  store: Type.Boolean(),
  temperature: Type.Union([Type.Number(), Type.Null()]),
  text: Type.Object({ format: Type.Record(Type.String(), Type.Unknown()) }),
  tool_choice: Type.Unknown(),
  tools: Type.Array(Type.Unknown()),
  top_p: Type.Null(),
  truncation: Type.Literal("disabled"),
  usage: Type.Union([Usage, Type.Null()]),
  user: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Record(Type.String(), Type.String()),
});

export type OutputMessage = Static<typeof OutputMessage>;
export type OutputFunctionCall = Static<typeof OutputFunctionCall>;
export type OutputItem = Static<typeof OutputItem>;
export type ItemResource = Static<typeof ItemResource>;
export type Usage = Static<typeof Usage>;
export type ResponseObject = Static<typeof ResponseObject>;

export interface ResponseFacts {
  id: string;
  createdAt: number;
  status: ResponseObject["status"];
  model: string;
  error: { code: string; message: string } | null;
  /** The items this turn produced. */
  output: ConversationItem[];
  usage: ResponseUsage | null;
  /** What the request asked for, echoed back; defaults for what it left out. */
  echo?: Partial<RequestEcho>;
  tools?: ExternalTool[];
}

export function buildResponse(f: ResponseFacts): ResponseObject {
  const e = f.echo ?? {};
  return {
    id: f.id,
    object: "response",
    created_at: f.createdAt,
    status: f.status,
    background: e.background ?? false,
    error: f.error ? responseError(f.error) : null,
    incomplete_details: cutAtTokenLimit(f) ? { reason: "max_output_tokens" } : null,
    instructions: e.instructions ?? null,
    max_output_tokens: e.max_output_tokens ?? null,
    model: f.model,
    output: f.output.flatMap((i) => {
      const out = outputItem(i);
      return out ? [out] : [];
    }),
    parallel_tool_calls: e.parallel_tool_calls ?? false,
    previous_response_id: e.previous_response_id ?? null,
    conversation: e.conversation ?? null,
    reasoning: { effort: null, summary: null },
    store: e.store ?? true,
    temperature: e.temperature ?? null,
    text: e.text ?? { format: { type: "text" } },
    tool_choice: e.tool_choice ?? "auto",
    tools: (f.tools ?? []).map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false })),
    top_p: null,
    truncation: "disabled",
    usage: f.usage ? usage(f.usage) : null,
    user: e.user ?? null,
    metadata: e.metadata ?? {},
  };
}

/**
 * A turn that completed with its last message incomplete was cut at the provider's token limit
 * (every other cut fails the turn), so create, stream and retrieve all say so the same way.
 */
function cutAtTokenLimit(f: ResponseFacts): boolean {
  const last = f.output.findLast((i) => i.type === "message" && i.role === "assistant");
  return f.status === "completed" && last?.type === "message" && last.status === "incomplete";
}

/** The envelope type that goes with each turn error code (clients such as the Vercel AI SDK need one). */
const ERROR_TYPES: Partial<Record<TurnErrorCode, string>> = {
  not_found: "not_found_error",
  approval_required: "permission_error",
  auth_required: "authentication_error",
  budget_exceeded: "rate_limit_error",
};

/** A turn's tokens as a response reports them; `costUsd` only where it is shown (retrieval, revision B). */
export type ResponseUsage = { inputTokens: number; outputTokens: number; cachedTokens?: number; reasoningTokens?: number; costUsd?: number };

export function responseError(e: { code: string; message: string }): Static<typeof ResponseError> {
  return { code: e.code, message: e.message, type: ERROR_TYPES[e.code as TurnErrorCode] ?? "server_error", param: null };
}

export function usage(u: ResponseUsage): Usage {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
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
  return { type: "message", id, status, role: "assistant", content: text === null ? [] : [outputText(text)] };
}

export const outputText = (text: string) => ({ type: "output_text" as const, text, annotations: [], logprobs: [] });

export function functionCallItem(
  item: { id: string; call_id: string; name: string; arguments: string },
  status: OutputFunctionCall["status"],
): OutputFunctionCall {
  return { type: "function_call", id: item.id, call_id: item.call_id, name: item.name, arguments: item.arguments, status };
}

const inputParts = (text: string, images: ImageRef[] = []) => [
  ...(text || !images.length ? [{ type: "input_text" as const, text }] : []),
  ...images.map((i) => ({ type: "input_image" as const, image_url: i.url, detail: i.detail ?? "auto" })),
];

/** Any stored item as OpenAI lists conversation and input items (built-in calls included). */
export function itemResource(item: ConversationItem): ItemResource {
  switch (item.type) {
    case "message":
      return item.role === "assistant"
        ? messageItem(item.id, item.content, item.status ?? "completed")
        : { type: "message", id: item.id, status: "completed", role: "user", content: inputParts(item.content, item.images) };
    case "function_call":
      return functionCallItem(item, "completed");
    case "function_call_output":
      return {
        type: "function_call_output",
        id: item.id,
        call_id: item.call_id,
        output: item.images?.length ? inputParts(item.output, item.images) : item.output,
        status: "completed",
      };
  }
}

/** OpenAI's list shape, for input_items and conversation items. */
export function itemList<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}
