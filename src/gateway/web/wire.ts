// What the gateway's /api routes answer, as the web UI reads it; these mirror
// src/gateway/*.ts (the browser build cannot import the server's module graph).
// tests/gateway/web-state.test.ts checks at compile time that ChatEvent matches the server's.

type Ids = { thread_id: string; response_id: string };

/** One event of GET /api/chat/events (src/gateway/events.ts). */
export type ChatEvent =
  | ({ type: "turn.started" } & Ids)
  | ({ type: "message.started"; item_id: string } & Ids)
  | ({ type: "message.delta"; item_id: string; delta: string } & Ids)
  | ({ type: "message.completed"; item_id: string; text: string } & Ids)
  | ({ type: "tool.started"; call_id: string; name: string; arguments: string } & Ids)
  | ({ type: "tool.completed"; call_id: string; output: string; is_error: boolean } & Ids)
  | ({ type: "approval.required"; call_id: string; tool: string; arguments: string } & Ids)
  | ({ type: "auth.required"; call_id: string; tool: string; extension: string; connect_url: string } & Ids)
  | ({
      type: "turn.completed";
      status: "completed" | "failed";
      error: { code: string; message: string } | null;
      waiting: "approval" | "oauth" | null;
    } & Ids);

export interface ThreadSummary {
  id: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  waiting: string | null;
}

export type HistoryItem =
  | { type: "message"; id: string; role: "user" | "assistant"; content: string }
  | { type: "tool_call"; id: string; call_id: string; name: string; arguments: string; output: string | null; external: boolean };

export interface History {
  thread_id: string;
  title: string | null;
  items: HistoryItem[];
  waiting: {
    kind: string;
    call_id: string;
    tool: string | null;
    arguments: string | null;
    /** OAuth gates: the extension to connect and the page that connects it. */
    extension?: string | null;
    connect_url?: string | null;
  } | null;
}

export interface Accepted {
  message_id: string;
  response_id: string;
  thread_id: string;
  status: string;
}

export type Decision = "approve" | "deny" | "always";

export interface MemoryDocument {
  path: string;
  size: number;
  updated_at: number | string;
}

export interface MemoryHit {
  path: string;
  snippet: string;
  score: number;
}

export interface MemoryFile {
  path: string;
  content: string;
  created_at: number | string;
  updated_at: number | string;
}
