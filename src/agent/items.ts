import { Type, type Static } from "@sinclair/typebox";

/** An image given with a message or a tool's output: a URL or a data URL. */
export const ImageRef = Type.Object({ url: Type.String(), detail: Type.Optional(Type.String()) });

/** Items of a conversation as stored: what the agent loop reads back as history. */
export const MessageItem = Type.Object({
  type: Type.Literal("message"),
  id: Type.String(),
  role: Type.Union([Type.Literal("user"), Type.Literal("assistant")]),
  content: Type.String(),
  /** Images sent with a user message, after its text. */
  images: Type.Optional(Type.Array(ImageRef)),
  /** An assistant message cut short (cancel, timeout, shutdown, a failed stream): what arrived before. */
  status: Type.Optional(Type.Literal("incomplete")),
});

export const FunctionCallItem = Type.Object({
  type: Type.Literal("function_call"),
  id: Type.String(),
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  /** true for a caller-supplied tool (returned to the caller), false for a built-in. */
  external: Type.Boolean(),
});

export const FunctionCallOutputItem = Type.Object({
  type: Type.Literal("function_call_output"),
  id: Type.String(),
  call_id: Type.String(),
  output: Type.String(),
  /** Images a caller's tool returned besides its text. */
  images: Type.Optional(Type.Array(ImageRef)),
});

export const ConversationItem = Type.Union([MessageItem, FunctionCallItem, FunctionCallOutputItem]);

export type MessageItem = Static<typeof MessageItem>;
export type FunctionCallItem = Static<typeof FunctionCallItem>;
export type FunctionCallOutputItem = Static<typeof FunctionCallOutputItem>;
export type ConversationItem = Static<typeof ConversationItem>;
export type ImageRef = Static<typeof ImageRef>;

/** A tool call the model asked for, not yet run or returned. */
export type PendingCall = { call_id: string; name: string; arguments: string };
