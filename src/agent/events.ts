import { Type, type Static } from "@sinclair/typebox";
import { CompactionItem, FunctionCallItem, FunctionCallOutputItem, MessageItem } from "../conversation/items";

const Call = Type.Object({ call_id: Type.String(), name: Type.String(), arguments: Type.String() });

/** What the loop reports as it runs; every channel renders these same events. */
export const AgentEvent = Type.Union([
  Type.Object({ type: Type.Literal("message.started"), itemId: Type.String() }),
  Type.Object({ type: Type.Literal("text.delta"), itemId: Type.String(), delta: Type.String() }),
  /** A piece of the model's reasoning (a step's own id): shown live to a person, never stored. */
  Type.Object({ type: Type.Literal("reasoning.delta"), itemId: Type.String(), delta: Type.String() }),
  Type.Object({ type: Type.Literal("message.completed"), item: MessageItem }),
  Type.Object({ type: Type.Literal("tool.started"), item: FunctionCallItem }),
  Type.Object({ type: Type.Literal("tool.completed"), item: FunctionCallOutputItem, isError: Type.Boolean() }),
  /** A caller-supplied tool was called: the turn pauses after this event. */
  Type.Object({ type: Type.Literal("function_call"), item: FunctionCallItem }),
  /**
   * A built-in tool needs the user's approval: the turn pauses after this event. `destination`:
   * where the call could carry data, from a turn that read untrusted content; `diff`: the
   * change it would make to an identity file.
   */
  Type.Object({ type: Type.Literal("approval.required"), call: Call, destination: Type.Optional(Type.String()), diff: Type.Optional(Type.String()) }),
  /** An identity file was changed (with the user's approval). */
  Type.Object({ type: Type.Literal("identity.changed"), path: Type.String() }),
  /** A tool's extension is not connected (OAuth): the turn pauses after this event. */
  Type.Object({ type: Type.Literal("auth.required"), call: Call, extension: Type.String(), url: Type.String() }),
  /** Tokens of LLM requests (see LlmEvent `usage`): `model` and the details when the provider reported them. */
  Type.Object({
    type: Type.Literal("usage"),
    inputTokens: Type.Integer(),
    outputTokens: Type.Integer(),
    cachedTokens: Type.Optional(Type.Integer()),
    reasoningTokens: Type.Optional(Type.Integer()),
    costUsd: Type.Optional(Type.Number()),
    model: Type.Optional(Type.String()),
  }),
  /** Older turns of the thread were summarised to make room (stored already). */
  Type.Object({ type: Type.Literal("context.compacted"), item: CompactionItem }),
]);
export type AgentEvent = Static<typeof AgentEvent>;
