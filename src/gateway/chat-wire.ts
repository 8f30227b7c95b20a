// The shapes of the local chat endpoints (src/gateway/chat.ts, events.ts, approvals.ts), in
// one place for the server and its two clients: the web UI (src/gateway/web) and the TUI.
// Types only, with no imports, so the browser bundle can use them too.

/** What the web UI and the TUI receive on GET /api/chat/events, one SSE event each. */
export type ChatEvent =
  | { type: "turn.started"; thread_id: string; response_id: string }
  | { type: "message.started"; thread_id: string; response_id: string; item_id: string }
  | { type: "message.delta"; thread_id: string; response_id: string; item_id: string; delta: string }
  | { type: "message.completed"; thread_id: string; response_id: string; item_id: string; text: string }
  | { type: "tool.started"; thread_id: string; response_id: string; call_id: string; name: string; arguments: string }
  | { type: "tool.completed"; thread_id: string; response_id: string; call_id: string; output: string; is_error: boolean }
  | { type: "approval.required"; thread_id: string; response_id: string; call_id: string; tool: string; arguments: string }
  /** The tool's extension must be connected (OAuth) at `connect_url`; the turn goes on once it is. */
  | { type: "auth.required"; thread_id: string; response_id: string; call_id: string; tool: string; extension: string; connect_url: string }
  /** Older turns of the thread were summarised to make room for this one. */
  | { type: "thread.compacted"; thread_id: string; response_id: string; compaction: CompactionMark }
  | {
      type: "turn.completed";
      thread_id: string;
      response_id: string;
      status: "completed" | "failed";
      /** `code` is a turn error code (`cancelled`, `llm_error`, ...), or null when the service itself failed. */
      error: { code: string | null; message: string } | null;
      waiting: "approval" | "oauth" | null;
    };

/** GET /api/chat/threads */
export interface ThreadSummary {
  id: string;
  title: string | null;
  /** The channel that started the thread: responses (the API), chat (web UI, TUI) or webhook; null for older threads. */
  channel: string | null;
  /** ISO 8601, UTC. */
  created_at: string;
  updated_at: string;
  /** The gate the thread waits on, if any. */
  waiting: "external_tool" | "approval" | "oauth" | null;
}

/** An entry of GET /api/chat/history: a message, or a tool call with its result. */
export type HistoryItem =
  /** `status: "incomplete"`: an answer cut short (stopped, timed out, the service stopped, the model failed). */
  | { type: "message"; id: string; role: "user" | "assistant"; content: string; status?: "incomplete" }
  | { type: "tool_call"; id: string; call_id: string; name: string; arguments: string; output: string | null; external: boolean }
  /** Where the model's view of the thread begins to be a summary: the items before it were summarised. */
  | CompactionMark;

/** A compaction as the chat UIs show it (history, POST /api/chat/threads/{id}/compact, events). */
export interface CompactionMark {
  type: "compaction";
  id: string;
  summary: string;
  /** How many items of the thread the summary stands for. */
  summarised_items: number;
  trigger: "auto" | "overflow" | "manual";
  /** Notes the agent saved to memory just before. */
  memory_notes: number;
  created_at: number;
}

/** POST /api/chat/threads/{thread_id}/compact */
export interface Compacted {
  thread_id: string;
  compacted: boolean;
  compaction: CompactionMark | null;
}

/** What a thread waits on, in GET /api/chat/history. */
export interface Waiting {
  kind: string;
  call_id: string;
  tool: string | null;
  arguments: string | null;
  /** OAuth gates: the extension to connect and the page that connects it. */
  extension?: string | null;
  connect_url?: string | null;
}

/** GET /api/chat/history */
export interface History {
  thread_id: string;
  title: string | null;
  items: HistoryItem[];
  waiting: Waiting | null;
}

/** POST /api/chat/send (202) */
export interface Accepted {
  message_id: string;
  response_id: string;
  thread_id: string;
  status: string;
}

/** POST /api/chat/approvals/{thread_id} */
export type Decision = "approve" | "deny" | "always";
