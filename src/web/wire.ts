// What the gateway's /api routes answer, as the web UI reads it: the server's own schemas'
// types (type-only imports leave nothing in the bundle).
export type { Accepted, ChatEvent, Compacted, Decision, History, HistoryItem, PendingApproval, ThreadSummary } from "../gateway/chat-wire";
export type { MemoryDocument, MemoryFile, MemoryHit } from "../gateway/memory-wire";
