import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { userContextBlock } from "../../agent/context";
import { threadOfResponse } from "../../agent/ids";
import { InvalidRequest } from "../../errors";
import { parseCallerTools } from "../../tools/caller";
import type { ToolRegistry } from "../../tools/registry";
import type { ExternalTool } from "../../tools/tool";

const Nullable = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

/** The request body of POST /api/v1/responses. Unlisted fields are accepted and ignored. */
export const ResponsesRequest = Type.Object({
  input: Type.Union([Type.String(), Type.Array(Type.Unknown())]),
  model: Type.Optional(Type.Unknown()),
  instructions: Nullable(Type.String()),
  previous_response_id: Nullable(Type.String()),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  tools: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
  tool_choice: Type.Optional(Type.Unknown()),
  temperature: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  max_output_tokens: Type.Optional(Type.Unknown()),
  x_context: Type.Optional(Type.Unknown()),
  context: Type.Optional(Type.Unknown()),
});
export type ResponsesRequest = Static<typeof ResponsesRequest>;

export type Revision = "A" | "B";

/** A request checked against the revision's rules, in the terms the agent takes. */
export interface ParsedRequest {
  model: string;
  stream: boolean;
  threadId?: string;
  previousResponseId: string | null;
  instructions: string | null;
  temperature: number | null;
  messages: { role: "user" | "assistant"; content: string }[];
  toolOutputs: { call_id: string; output: string }[];
  tools?: ExternalTool[];
}

export const MAX_CONTEXT_BYTES = 10 * 1024;
const MAX_MODEL_BYTES = 256;
const CONTROL = /[\u0000-\u001f\u007f]/;

export function parseResponsesRequest(body: Record<string, unknown>, revision: Revision, registry: ToolRegistry): ParsedRequest {
  if (!Value.Check(ResponsesRequest, body)) {
    const first = Value.Errors(ResponsesRequest, body).First();
    const field = first?.path.split("/")[1];
    if (!field) throw new InvalidRequest("The request body must be a JSON object with an `input`.");
    if (field === "input" && body.input === undefined) throw new InvalidRequest("`input` is required.");
    throw new InvalidRequest(`\`${field}\` is malformed: ${first!.message.toLowerCase()}.`);
  }
  const present = (k: keyof ResponsesRequest) => body[k] !== undefined && body[k] !== null;

  let model: string;
  if (revision === "A") {
    if (present("model") && body.model !== "default") throw new InvalidRequest('`model` must be "default".');
    for (const f of ["tool_choice", "temperature", "max_output_tokens"] as const) {
      if (present(f)) throw new InvalidRequest(`\`${f}\` is not supported.`);
    }
    model = "default";
  } else {
    model = checkModelHint(body.model);
    const t = body.temperature;
    if (typeof t === "number" && !(t >= 0 && t <= 2)) throw new InvalidRequest("`temperature` must be between 0.0 and 2.0.");
  }

  let previousResponseId: string | null = null;
  let threadId: string | undefined;
  if (present("previous_response_id")) {
    previousResponseId = body.previous_response_id as string;
    threadId = threadOfResponse(previousResponseId);
    if (!threadId) throw new InvalidRequest("`previous_response_id` is not a response id (resp_ followed by 64 hex digits).");
  }

  const instructions = present("instructions") ? (body.instructions as string) : null;
  const { messages, toolOutputs, system } = parseInput(body.input as string | unknown[], revision);
  if (toolOutputs.length && revision === "B" && !previousResponseId) {
    throw new InvalidRequest("A function_call_output needs `previous_response_id` naming the response that asked for it.");
  }
  const context = present("x_context") ? body.x_context : present("context") ? body.context : undefined;
  if (context !== undefined) {
    if (!context || typeof context !== "object" || Array.isArray(context)) throw new InvalidRequest("`x_context` must be a JSON object.");
    if (Buffer.byteLength(JSON.stringify(context)) > MAX_CONTEXT_BYTES) throw new InvalidRequest("`x_context` is larger than 10 KB serialized.");
  }
  const blocks = [
    ...[...system, ...(instructions ? [instructions] : [])].map((s) => `<instructions>\n${s}\n</instructions>`),
    ...(context !== undefined ? [userContextBlock(context as Record<string, unknown>)] : []),
  ];
  if (blocks.length) {
    const prefix = blocks.join("\n\n") + "\n\n";
    // A resume carries no user message; the thread's earlier instructions stay in force.
    const last = messages.findLast((m) => m.role === "user");
    if (last) last.content = prefix + last.content;
  }

  return {
    model,
    stream: body.stream === true,
    threadId,
    previousResponseId,
    instructions,
    temperature: typeof body.temperature === "number" ? body.temperature : null,
    messages,
    toolOutputs,
    tools: present("tools") ? parseCallerTools(body.tools, registry) : undefined,
  };
}

function checkModelHint(model: unknown): string {
  if (model === undefined || model === null) throw new InvalidRequest("`model` is required.");
  if (typeof model !== "string" || model === "") throw new InvalidRequest("`model` must be a non-empty string.");
  if (model.trim() !== model) throw new InvalidRequest("`model` must not start or end with white space.");
  if (Buffer.byteLength(model) > MAX_MODEL_BYTES) throw new InvalidRequest("`model` is longer than 256 bytes.");
  if (CONTROL.test(model)) throw new InvalidRequest("`model` must not contain control characters.");
  return model;
}

function parseInput(input: string | unknown[], revision: Revision) {
  const messages: ParsedRequest["messages"] = [];
  const toolOutputs: ParsedRequest["toolOutputs"] = [];
  const system: string[] = [];
  if (typeof input === "string") {
    if (!input.trim()) throw new InvalidRequest("`input` must not be empty.");
    return { messages: [{ role: "user" as const, content: input }], toolOutputs, system };
  }
  if (!input.length) throw new InvalidRequest("`input` must not be an empty array.");
  input.forEach((raw, i) => {
    const at = `input[${i}]`;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new InvalidRequest(`\`${at}\` must be an object.`);
    const item = raw as Record<string, unknown>;
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    if (type === "function_call_output") {
      if (typeof item.call_id !== "string" || !item.call_id) throw new InvalidRequest(`\`${at}.call_id\` must be a non-empty string.`);
      if (typeof item.output !== "string") throw new InvalidRequest(`\`${at}.output\` is required and must be a string.`);
      toolOutputs.push({ call_id: item.call_id, output: item.output });
    } else if (type === "message") {
      const content = messageText(item.content, at);
      if (item.role === "user" || item.role === "assistant") messages.push({ role: item.role, content });
      else if (item.role === "system" || item.role === "developer") system.push(content);
      else throw new InvalidRequest(`\`${at}.role\` must be user, assistant, system or developer.`);
    } else {
      throw new InvalidRequest(`\`${at}.type\` ${JSON.stringify(type ?? null)} is not supported; use message or function_call_output.`);
    }
  });
  if (toolOutputs.length && (messages.length || system.length) && revision === "B") {
    throw new InvalidRequest(
      "A resume must contain only function_call_output items; send the follow-up message as its own request after the resume.",
    );
  }
  if (!toolOutputs.length && !messages.some((m) => m.role === "user")) {
    throw new InvalidRequest("`input` needs a user message or a function_call_output.");
  }
  return { messages, toolOutputs, system };
}

function messageText(content: unknown, at: string): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part, j) => {
        const p = part as Record<string, unknown> | null;
        if (p && ["input_text", "output_text", "text"].includes(p.type as string) && typeof p.text === "string") return p.text;
        throw new InvalidRequest(`\`${at}.content[${j}]\` is not supported; only text content is accepted.`);
      })
      .join("\n");
  }
  throw new InvalidRequest(`\`${at}.content\` must be a string.`);
}
