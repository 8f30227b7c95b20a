// What the gateway's /api routes answer, as the web UI reads it. The chat shapes are the
// server's own (type-only imports leave nothing in the bundle); the memory shapes mirror
// src/gateway/memory.ts.
export type { Accepted, ChatEvent, Compacted, Decision, History, HistoryItem, PendingApproval, ThreadSummary } from "../gateway/chat-wire";

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
