import { storedToken } from "./session";
import type { Accepted, Compacted, Decision, History, MemoryDocument, MemoryFile, MemoryHit, ThreadSummary } from "./wire";

/** A failed call, with a message meant for a person. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

let unauthorized: () => void = () => {};

/** What to do when the service no longer accepts the token (sign out, say why). */
export function onUnauthorized(fn: () => void): void {
  unauthorized = fn;
}

export function authHeaders(token = storedToken()): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

async function call<T>(path: string, init: { method?: string; json?: unknown; token?: string } = {}): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(init.token ?? storedToken()), accept: "application/json" };
  if (init.json !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, { method: init.method ?? "GET", headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
  } catch {
    throw new ApiError("Cannot reach the service. Check that it is running and try again.", 0);
  }
  const text = await res.text();
  if (!res.ok) {
    if (res.status === 401 && init.token === undefined) unauthorized();
    throw new ApiError(errorMessage(res.status, text), res.status);
  }
  return (text ? JSON.parse(text) : {}) as T;
}

/** The error envelope's message, a plain-text body, or a sentence for the status. */
export function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text);
    const message = typeof body?.error === "string" ? body.error : body?.error?.message;
    if (typeof message === "string" && message) return message;
  } catch {}
  if (text && text.length < 300 && !text.trimStart().startsWith("<")) return text;
  if (status === 401) return "The token was not accepted.";
  if (status === 404) return "Not found.";
  if (status === 429) return "Too many requests; wait a moment and try again.";
  if (status >= 500) return `The service had a problem (HTTP ${status}).`;
  return `The request failed (HTTP ${status}).`;
}

const q = encodeURIComponent;

export const api = {
  /** Checks a token without signing in with it. */
  check: (token: string) => call<{ threads: ThreadSummary[] }>("/api/chat/threads", { token }),
  threads: () => call<{ threads: ThreadSummary[] }>("/api/chat/threads"),
  deleteThread: (threadId: string) => call<unknown>(`/api/chat/threads/${q(threadId)}`, { method: "DELETE" }),
  history: (threadId: string) => call<History>(`/api/chat/history?thread_id=${q(threadId)}`),
  send: (content: string, threadId: string | null) =>
    call<Accepted>("/api/chat/send", { method: "POST", json: threadId ? { content, thread_id: threadId } : { content } }),
  compact: (threadId: string) => call<Compacted>(`/api/chat/threads/${q(threadId)}/compact`, { method: "POST" }),
  cancel: (responseId: string) => call<unknown>(`/api/v1/responses/${q(responseId)}/cancel`, { method: "POST" }),
  decide: (threadId: string, decision: Decision) =>
    call<Partial<Accepted>>(`/api/chat/approvals/${q(threadId)}`, { method: "POST", json: { decision } }),
  memoryTree: () => call<{ documents: MemoryDocument[] }>("/api/memory/tree"),
  memorySearch: (query: string, limit = 20) => call<{ results: MemoryHit[] }>(`/api/memory?q=${q(query)}&limit=${limit}`),
  memoryRead: (path: string) => call<MemoryFile>(`/api/memory/read?path=${q(path)}`),
  memoryWrite: (path: string, content: string) => call<unknown>("/api/memory/write", { method: "POST", json: { path, content } }),
  memoryDelete: (path: string) => call<unknown>(`/api/memory?path=${q(path)}`, { method: "DELETE" }),
};
