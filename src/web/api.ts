import { ChatClient } from "../client/http";
import { storedToken } from "./session";
import type { MemoryDocument, MemoryFile, MemoryHit } from "./wire";

let unauthorized: () => void = () => {};

/** What to do when the service no longer accepts the token (sign out, say why). */
export function onUnauthorized(fn: () => void): void {
  unauthorized = fn;
}

const q = encodeURIComponent;

/** The chat API of this page's origin, plus the memory endpoints the memory screen uses. */
class WebApi extends ChatClient {
  memoryTree = () => this.request<{ documents: MemoryDocument[] }>("GET", "/api/memory/tree");
  memorySearch = (query: string, limit = 20) => this.request<{ results: MemoryHit[] }>("GET", `/api/memory?q=${q(query)}&limit=${limit}`);
  memoryRead = (path: string) => this.request<MemoryFile>("GET", `/api/memory/read?path=${q(path)}`);
  memoryWrite = (path: string, content: string) => this.request<unknown>("POST", "/api/memory/write", { path, content });
  memoryDelete = (path: string) => this.request<unknown>("DELETE", `/api/memory?path=${q(path)}`);
}

export const api = new WebApi({ baseUrl: "", token: storedToken, onUnauthorized: () => unauthorized() });

/** Checks a token without signing in with it. */
export const checkToken = (token: string) => new ChatClient({ baseUrl: "", token }).threads();
