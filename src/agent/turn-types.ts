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

export interface TurnRequest {
  userId: string;
  /** Where the turn came from: the log line says it, and a new thread is labelled with it. */
  channel: "responses" | "chat" | "webhook";
  /** Continue this thread; undefined starts a new one. */
  threadId?: string;
  /** This turn's input, in order: the history a stateless caller replays, then its new messages. */
  messages: InputItem[];
  /** Outputs answering the call the thread waits on (a resume of its external-tool gate). */
  toolOutputs: { call_id: string; output: string; images?: ImageRef[] }[];
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
   * moment they complete, so that it can go on after a stop (`recover`).
   */
  background?: boolean;
  /**
   * Goes on with the stored turn of this response id, which a crash, a stop or a failure cut
   * short (a webhook job run again): the thread as it was stored, finished tool calls not run
   * again, the one that was running told to the model as interrupted (or run again when it is
   * safe to repeat), then the model asked again. The response keeps its id. A response that
   * completed is answered as it was stored, with nothing run. `messages` and `toolOutputs`
   * are empty then.
   */
  recover?: string;
  /** Facts of the request the channel wants back when the response is read again. */
  meta?: Record<string, unknown>;
  /** Resolves the approval gate the thread waits on, instead of adding messages. */
  approval?: ApprovalDecision;
  /** Resumes a thread waiting on an OAuth gate, once the extension has been connected. */
  authorized?: boolean;
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
