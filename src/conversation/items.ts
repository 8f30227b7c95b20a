import type { ToolCall, ToolSpec } from "../llm/types";
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
  /** A message from a sender who is not the user (an untrusted webhook source): it taints the thread. */
  untrusted: Type.Optional(Type.Boolean()),
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
  /** Untrusted content (a web page, an untrusted MCP server's answer…): it taints the thread. */
  untrusted: Type.Optional(Type.Boolean()),
});

export const ConversationItem = Type.Union([MessageItem, FunctionCallItem, FunctionCallOutputItem]);

export type MessageItem = Static<typeof MessageItem>;
export type FunctionCallItem = Static<typeof FunctionCallItem>;
export type FunctionCallOutputItem = Static<typeof FunctionCallOutputItem>;
export type ConversationItem = Static<typeof ConversationItem>;
export type ImageRef = Static<typeof ImageRef>;

/**
 * A tool call the model asked for, not yet run or returned. `stored`: the id of its
 * function_call item, already in the thread (a call a stopped turn was running when it resumes).
 */
export type PendingCall = ToolCall & { stored?: string };

/**
 * A summary of a thread's older items, stored in the thread like any item. Requests carry
 * the latest one in place of everything before `first_kept_seq`; retrieval and history
 * still show every item, with this one as a mark where the summary begins to stand in.
 */
export const CompactionItem = Type.Object({
  type: Type.Literal("compaction"),
  id: Type.String(),
  summary: Type.String(),
  /** Items from this seq on are carried verbatim after the summary. */
  first_kept_seq: Type.Integer({ minimum: 0 }),
  /** How many items of the thread the summary stands for (this and earlier compactions'). */
  summarised_items: Type.Integer({ minimum: 0 }),
  /** What asked for it: a request that would not fit, the provider refusing one, or a person. */
  trigger: Type.Union([Type.Literal("auto"), Type.Literal("overflow"), Type.Literal("manual")]),
  /** Whether the agent's silent memory step ran first, and how many documents it wrote. */
  memory_notes: Type.Integer({ minimum: 0 }),
  created_at: Type.Integer(),
  /** What it summarises held untrusted content: the summary taints the thread as they did. */
  untrusted: Type.Optional(Type.Boolean()),
});

export type CompactionItem = Static<typeof CompactionItem>;

/** A tool the model may call but that a caller runs: the agent pauses on it. */
export type ExternalTool = ToolSpec;

/** A person's answer to a tool call that needs approval: once, never, or from now on. */
export const ApprovalDecision = Type.Union([Type.Literal("approve"), Type.Literal("deny"), Type.Literal("always")]);
export type ApprovalDecision = Static<typeof ApprovalDecision>;

/** Untrusted content the model has in its context: a turn with any of it is tainted. */
export const isUntrusted = (item: ConversationItem | CompactionItem): boolean =>
  (item.type === "function_call_output" || item.type === "message" || item.type === "compaction") && item.untrusted === true;
