import { itemId } from "../conversation/ids";
import type { LlmOptions } from "../llm/types";
import type { TurnErrorCode } from "../errors";
import type { TokenUsage } from "../usage/prices";
import type { ExternalTool } from "../conversation/items";
import type { ApprovalDecision, ConversationItem, FunctionCallItem, FunctionCallOutputItem, ImageRef } from "../conversation/items";

/** An item a caller sends: a message (`type` may be left out), or a call and output it replays. */
export type InputItem =
  | { type?: "message"; role: "user" | "assistant"; content: string; images?: ImageRef[]; untrusted?: boolean }
  | Omit<FunctionCallItem, "id">
  | Omit<FunctionCallOutputItem, "id">;

/** An input item as it is stored: with an id of its own. */
export const storedItem = (m: InputItem): ConversationItem => ("role" in m ? { ...m, type: "message", id: itemId() } : { ...m, id: itemId() });

/** An output answering the call the thread waits on (a resume of its external-tool gate). */
export type ToolOutputInput = { call_id: string; output: string; images?: ImageRef[] };

/** What a turn runs on: one kind at a time, so that no illegal mix can be asked for. */
export type TurnInput =
  /**
   * New messages, in order (the history a stateless caller replays, then what is new), and the
   * outputs answering the call the thread waits on. Revision A lets a message come with them.
   */
  | { kind: "messages"; messages: InputItem[]; toolOutputs: ToolOutputInput[] }
  /** A person's decision on the approval the thread waits on. */
  | { kind: "approval"; decision: ApprovalDecision }
  /** The extension the thread waits on was connected (OAuth): its call runs on. */
  | { kind: "authorized" }
  /**
   * Goes on with the stored turn of this response id, which a crash, a stop or a failure cut
   * short (a webhook job run again): the thread as it was stored, finished tool calls not run
   * again, the one that was running told to the model as interrupted (or run again when it is
   * safe to repeat), then the model asked again. The response keeps its id. A response that
   * completed is answered as it was stored, with nothing run.
   */
  | { kind: "recover"; responseId: string };

/** New messages for a turn (and no outputs). */
export const said = (...messages: InputItem[]): TurnInput => ({ kind: "messages", messages, toolOutputs: [] });

/** The messages and outputs a turn's input carries (none for a decision, a connection, a recovery). */
export const inputItems = (input: TurnInput): { messages: InputItem[]; toolOutputs: ToolOutputInput[] } =>
  input.kind === "messages" ? input : { messages: [], toolOutputs: [] };

export interface TurnRequest {
  userId: string;
  /** Where the turn came from: the log line says it, and a new thread is labelled with it. */
  channel: "responses" | "chat" | "webhook";
  /** Continue this thread; undefined starts a new one (a recovery names its own). */
  threadId?: string;
  input: TurnInput;
  /** The response the caller continues: it must be theirs and still stored, or the thread is not found. */
  previousResponseId?: string;
  /** false: the turn runs but nothing of it is stored (Responses `store: false`). */
  store?: boolean;
  /** Sampling and output format sent to the LLM with every step. */
  llmOptions?: LlmOptions;
  /** Caller tools for the thread; undefined keeps the catalog the thread already has. */
  externalTools?: ExternalTool[];
  /** What the response reports as its model. */
  model: string;
  /** Cut the turn short when it runs longer than this. */
  timeoutMs?: number;
  /**
   * The caller is answered before the turn ends (Responses `background: true`,
   * `/api/chat/send`): before that answer the thread, the input and the response are stored,
   * the response as failed with `shutdown`, and the turn's result replaces it. A service
   * killed meanwhile leaves the user's input in the thread and that answer, not a 404.
   * Such a turn is durable: its tool calls are stored as they run and their results the
   * moment they complete, so that it can go on after a stop (input `recover`).
   */
  background?: boolean;
  /** Facts of the request the channel wants back when the response is read again. */
  meta?: Record<string, unknown>;
  /** The job or routine the turn runs for (a webhook job, a routine's run), and when that was queued (ms since the epoch). */
  origin?: { jobId?: string; routineId?: string; queuedAt?: number };
  /**
   * Whether the channel shows gates to a person (web UI, TUI). When it does not (the
   * Responses API), a turn that reaches an approval gate fails with approval_required.
   */
  surfacesGates?: boolean;
  /**
   * What of the user's workspace memory the turn may use: `full` (the default), `read` (no
   * memory_write) or `none` (no memory tools, and USER.md is left out of the system prompt):
   * a named webhook source's `memory` setting.
   */
  memory?: "full" | "read" | "none";
}

/** A turn the agent accepted: what a channel knows of it before it ends. */
export interface TurnHandle {
  id: string;
  threadId: string;
  createdAt: number;
  /** The turn's input items, as they are stored. */
  input: ConversationItem[];
}

export interface TurnResult extends Omit<TurnHandle, "input"> {
  model: string;
  status: "completed" | "failed";
  error: { code: TurnErrorCode; message: string } | null;
  /** The items of this turn: its input, then what it produced. */
  items: ConversationItem[];
  /** What the turn produced: `items` without the input. */
  output: ConversationItem[];
  /** The tokens of every LLM request of the turn, and what they cost. */
  usage: TokenUsage;
  /** The caller tools the thread offered during this turn. */
  tools: ExternalTool[];
  /** The turn stopped at a gate a person resolves (an approval, an extension to connect). */
  waiting?: "approval" | "oauth";
}

/** What the assistant said in a turn: its messages' text, in order. */
export function answerText(r: Pick<TurnResult, "output">): string {
  return r.output.flatMap((i) => (i.type === "message" && i.role === "assistant" ? [i.content] : [])).join("\n\n");
}
