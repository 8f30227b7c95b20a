import { FormatRegistry, Type, type Static, type TSchema } from "@sinclair/typebox";
import { instructionsBlock, userContextBlock } from "../../agent/context";
import { threadOfConversation, threadOfResponse } from "../../conversation/ids";
import type { ImageRef } from "../../conversation/items";
import type { InputItem } from "../../agent/turn-types";
import { InvalidRequest } from "../../errors";
import type { LlmOptions } from "../../llm/types";
import { parseCallerTools } from "../../tools/caller";
import type { ToolRegistry } from "../../tools/registry";
import type { ExternalTool } from "../../conversation/items";
import { ResponseObject } from "./objects";
import { afterReplay, inputItems, type InputReader } from "./input";

// The request bodies of the Responses API (and of the Conversations API's items), as the
// routes declare them. Each field says what it must be in `error`; http/validation.ts turns
// the first failure into the 400 envelope's message. Unlisted fields are accepted and ignored.

const MAX_MODEL_BYTES = 256;
export const MAX_CONTEXT_BYTES = 10 * 1024;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A model name revision B routes: non-empty, no white space at either end, at most 256 bytes, no control characters. */
export const isModelHint = (m: string) => m !== "" && m.trim() === m && Buffer.byteLength(m) <= MAX_MODEL_BYTES && !CONTROL.test(m);
FormatRegistry.Set("model-hint", isModelHint);

const open = { additionalProperties: true } as const;
/** Absent, null, or `schema`; a failure is explained by `schema`'s own error. */
const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()], { error: schema.error }));
const Text = (error = "must be a string.") => Type.String({ error });

const InputTextPart = Type.Object({ type: Type.Literal("input_text"), text: Text() }, open);
const OutputTextPart = Type.Object({ type: Type.Literal("output_text"), text: Text() }, open);
const PlainTextPart = Type.Object({ type: Type.Literal("text"), text: Text() }, open);
const RefusalPart = Type.Object({ type: Type.Literal("refusal"), refusal: Text() }, open);
const InputImagePart = Type.Object(
  {
    type: Type.Literal("input_image"),
    image_url: Type.String({ minLength: 1, error: "must be an image URL or a data URL (file_id is not supported)." }),
    detail: Nullable(Type.String({ error: "must be low, high or auto." })),
  },
  open,
);
const InputFilePart = Type.Object(
  {
    type: Type.Literal("input_file"),
    file_data: Type.String({ minLength: 1, error: "is required: the file's content as a data URL (data:application/pdf;base64,…); file_id and file_url are not supported." }),
    filename: Nullable(Text()),
  },
  open,
);
const PART_KINDS = "input_text, output_text, refusal, input_image or input_file";

export const MessageInput = Type.Object(
  {
    type: Type.Optional(Type.Literal("message")),
    role: Type.Union([Type.Literal("user"), Type.Literal("assistant"), Type.Literal("system"), Type.Literal("developer")], {
      error: "must be user, assistant, system or developer.",
    }),
    content: Type.Union(
      [
        Text("must be a string or an array of content parts."),
        Type.Array(Type.Union([InputTextPart, OutputTextPart, PlainTextPart, RefusalPart, InputImagePart, InputFilePart], { error: `must be a part of type ${PART_KINDS}.` })),
      ],
      { error: "must be a string or an array of content parts." },
    ),
  },
  open,
);
const FunctionCallInput = Type.Object(
  {
    type: Type.Literal("function_call"),
    call_id: Type.String({ minLength: 1, error: "must be a non-empty string." }),
    name: Type.String({ minLength: 1, error: "must be a non-empty string." }),
    arguments: Text("must be a string of JSON."),
  },
  open,
);
const FunctionCallOutputInput = Type.Object(
  {
    type: Type.Literal("function_call_output"),
    call_id: Type.String({ minLength: 1, error: "must be a non-empty string." }),
    output: Type.Union(
      [Text(), Type.Array(Type.Union([InputTextPart, InputImagePart], { error: "must be a part of type input_text or input_image." }))],
      { error: "is required and must be a string or an array of input_text and input_image parts." },
    ),
  },
  open,
);
const ItemReference = Type.Object({ type: Type.Literal("item_reference"), id: Type.String({ minLength: 1, error: "must be an item id." }) }, open);
const ReasoningInput = Type.Object({ type: Type.Literal("reasoning") }, open);
/** A compaction item of POST /responses/compact, given back. */
const CompactionInput = Type.Object(
  { type: Type.Literal("compaction"), encrypted_content: Type.String({ minLength: 1, error: "must be the encrypted_content of a compaction item from /responses/compact." }) },
  open,
);

export const InputItemSchema = Type.Union([MessageInput, FunctionCallInput, FunctionCallOutputInput, ItemReference, ReasoningInput, CompactionInput], {
  error: "must be a message, function_call, function_call_output, item_reference, reasoning or compaction item.",
});
export type InputItemBody = Static<typeof InputItemSchema>;

const Metadata = Type.Record(
  Type.String({ pattern: "^[\\s\\S]{1,64}$" }),
  Type.String({ maxLength: 512, error: "values must be strings of at most 512 characters." }),
  { additionalProperties: false, maxProperties: 16, error: "must be an object of at most 16 pairs, keys of at most 64 characters and string values of at most 512." },
);
export const MetadataField = Nullable(Metadata);

const TextFormat = Type.Union(
  [
    Type.Object({ type: Type.Literal("text") }, open),
    Type.Object(
      {
        type: Type.Literal("json_schema"),
        name: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$", error: "must match ^[A-Za-z0-9_-]{1,64}$." }),
        schema: Type.Object({}, { ...open, error: "must be a JSON Schema object." }),
        strict: Nullable(Type.Boolean({ error: "must be a boolean." })),
        description: Nullable(Text()),
      },
      open,
    ),
    Type.Object({ type: Type.Literal("json_object") }, open),
  ],
  { error: "must be of type text, json_schema or json_object." },
);

const ModelHint = Type.String({ format: "model-hint", error: "must be a non-empty string of at most 256 bytes, with no control characters and no white space at either end." });
const NotSupported = Type.Optional(Type.Null({ error: "is not supported." }));

/** POST /api/v1/responses; `model`, `tool_choice`, `temperature` and `max_output_tokens` differ by revision. */
export function responsesRequest(revision: Revision) {
  return Type.Object(
    {
      input: Type.Union(
        [
          Type.String({ pattern: "\\S", error: "must not be empty." }),
          Type.Array(InputItemSchema, { minItems: 1, error: "must not be an empty array." }),
        ],
        { error: "must be a string or an array of input items." },
      ),
      model:
        revision === "A"
          ? Type.Optional(Type.Union([Type.Literal("default"), Type.Null()], { error: 'must be "default".' }))
          : Type.Unsafe<string>(ModelHint),
      instructions: Nullable(Text()),
      previous_response_id: Nullable(
        Type.String({ pattern: "^resp_[0-9a-f]{64}$", error: "is not a response id (resp_ followed by 64 hex digits)." }),
      ),
      conversation: Nullable(ConversationRef),
      stream: Nullable(Type.Boolean({ error: "must be a boolean." })),
      background: Nullable(Type.Boolean({ error: "must be a boolean." })),
      store: Nullable(Type.Boolean({ error: "must be a boolean." })),
      tools: Nullable(Type.Array(Type.Unknown(), { error: "must be an array of tool definitions." })),
      tool_choice: revision === "A" ? NotSupported : Type.Optional(Type.Unknown()),
      temperature: revision === "A" ? NotSupported : Nullable(Type.Number({ minimum: 0, maximum: 2, error: "must be between 0.0 and 2.0." })),
      max_output_tokens: revision === "A" ? NotSupported : Nullable(Type.Integer({ minimum: 1, error: "must be a positive integer." })),
      parallel_tool_calls: Nullable(Type.Boolean({ error: "must be a boolean." })),
      text: Nullable(Type.Object({ format: Type.Optional(TextFormat) }, { ...open, error: "must be an object with a `format`." })),
      user: Nullable(Text()),
      metadata: MetadataField,
      x_context: Nullable(Type.Object({}, { ...open, error: "must be a JSON object." })),
      context: Nullable(Type.Object({}, { ...open, error: "must be a JSON object." })),
    },
    open,
  );
}
/**
 * POST /responses/input_tokens and /responses/compact: what create takes, `input` and `model`
 * optional (the thread alone may be counted or compacted).
 */
export function viewRequest(revision: Revision) {
  const { input, model, ...rest } = responsesRequest(revision).properties;
  return Type.Object({ ...rest, input: Type.Optional(input), model: Type.Optional(model) }, open);
}
export type ViewBody = Static<ReturnType<typeof viewRequest>>;

const ConversationId = Type.String({ pattern: "^conv_[0-9a-f]{32}$", error: "must be a conversation id (conv_ followed by 32 hex digits)." });
const ConversationRef = Type.Union([ConversationId, Type.Object({ id: ConversationId }, open)], {
  error: "must be a conversation id (conv_ followed by 32 hex digits) or {id}.",
});
export type ResponsesBody = Static<ReturnType<typeof responsesRequest>>;

export type Revision = "A" | "B";

/** What the response object echoes of the request (stored with the response for retrieval). */
export const RequestEcho = Type.Pick(ResponseObject, [
  "instructions",
  "previous_response_id",
  "conversation",
  "temperature",
  "store",
  "background",
  "metadata",
  "max_output_tokens",
  "tool_choice",
  "parallel_tool_calls",
  "text",
  "user",
]);
export type RequestEcho = Static<typeof RequestEcho>;

/** A request in the terms the agent takes. */
export interface ParsedRequest {
  model: string;
  stream: boolean;
  threadId?: string;
  echo: RequestEcho;
  messages: InputItem[];
  toolOutputs: { call_id: string; output: string; images?: ImageRef[] }[];
  tools?: ExternalTool[];
  llmOptions: LlmOptions;
}

/**
 * The checks a schema cannot state (they span fields or need the service), and the request
 * turned into the agent's terms (see `turnInput`).
 */
export async function parseResponsesRequest(body: ResponsesBody, revision: Revision, registry: ToolRegistry, reader: InputReader): Promise<ParsedRequest> {
  const { previousResponseId, conversation, threadId } = continuation(body);
  const store = body.store ?? true;
  if (body.background && !store) throw new InvalidRequest("`background` needs `store`: a background response is retrieved later.");

  const { messages, toolOutputs, instructions } = await turnInput(body, threadId, reader);
  if (toolOutputs.length) {
    if (revision === "B" && messages.length) {
      throw new InvalidRequest(
        "A resume must contain only function_call_output items; send the follow-up message as its own request after the resume.",
      );
    }
    if (revision === "B" && !threadId) {
      throw new InvalidRequest("A function_call_output needs `previous_response_id` naming the response that asked for it.");
    }
  } else if (!messages.some((m) => ("role" in m && m.role === "user") || m.type === "function_call_output")) {
    throw new InvalidRequest("`input` needs a user message or a function_call_output.");
  }

  const format = body.text?.format;
  const temperature = revision === "B" && typeof body.temperature === "number" ? body.temperature : null;
  return {
    model: revision === "A" ? "default" : (body.model as string),
    stream: body.stream === true,
    threadId,
    messages,
    toolOutputs,
    tools: body.tools ? parseCallerTools(body.tools, registry) : undefined,
    llmOptions: {
      ...(temperature !== null ? { temperature } : {}),
      ...(format?.type === "json_schema"
        ? {
            responseFormat: {
              type: "json_schema",
              json_schema: { name: format.name, schema: format.schema, strict: format.strict ?? false, ...(format.description ? { description: format.description } : {}) },
            },
          }
        : format?.type === "json_object"
          ? { responseFormat: { type: "json_object" } }
          : {}),
    },
    echo: {
      instructions,
      previous_response_id: previousResponseId,
      conversation,
      temperature,
      store,
      background: body.background ?? false,
      metadata: body.metadata ?? {},
      max_output_tokens: revision === "B" ? (body.max_output_tokens ?? null) : null,
      tool_choice: revision === "B" ? (body.tool_choice ?? "auto") : "auto",
      parallel_tool_calls: body.parallel_tool_calls ?? false,
      text: { format: format ?? { type: "text" } },
      user: body.user ?? null,
    },
  };
}

/** The thread a request continues (`previous_response_id` or `conversation`, not both). */
export function continuation(body: Pick<ResponsesBody, "previous_response_id" | "conversation">) {
  const previousResponseId = body.previous_response_id ?? null;
  const conversation = body.conversation ? { id: typeof body.conversation === "string" ? body.conversation : body.conversation.id } : null;
  if (previousResponseId && conversation) throw new InvalidRequest("Use `previous_response_id` or `conversation`, not both.");
  const threadId = previousResponseId ? threadOfResponse(previousResponseId) : conversation ? threadOfConversation(conversation.id) : undefined;
  return { previousResponseId, conversation, threadId };
}

/**
 * A request's input in the agent's terms: its items in order (without a replay of what the
 * thread holds up to the call it waits on), the outputs that resume that call apart, and the
 * instruction and context blocks put before the last user message.
 */
export async function turnInput(
  body: Pick<ResponsesBody, "instructions" | "x_context" | "context"> & { input?: ResponsesBody["input"] },
  threadId: string | undefined,
  reader: InputReader,
) {
  const input = body.input ?? [];
  const replayed = typeof input === "string" || !threadId ? input : afterReplay(input, await reader.awaited(threadId));
  const { messages, toolOutputs, system } = await inputItems(replayed, reader);
  const instructions = body.instructions ?? null;
  const context = body.x_context ?? body.context ?? undefined;
  if (context && Buffer.byteLength(JSON.stringify(context)) > MAX_CONTEXT_BYTES) {
    throw new InvalidRequest("`x_context` is larger than 10 KB serialized.");
  }
  const blocks = [
    ...[...system, ...(instructions ? [instructions] : [])].map(instructionsBlock),
    ...(context ? [userContextBlock(context)] : []),
  ];
  // A resume carries no user message; the thread's earlier instructions stay in force.
  const last = messages.findLast((m) => "role" in m && m.role === "user");
  if (blocks.length && last && "role" in last) last.content = `${blocks.join("\n\n")}\n\n${last.content}`;
  return { messages, toolOutputs, instructions };
}
