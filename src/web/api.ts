import { ChatClient } from "../client/http";
import { storedToken } from "./session";
import type { TUndefined } from "@sinclair/typebox";
import type { MemoryDocument, MemoryFile, MemoryHits, MemoryTree } from "../gateway/memory-wire";

let unauthorized: () => void = () => {};

/** What to do when the service no longer accepts the token (sign out, say why). */
export function onUnauthorized(fn: () => void): void {
  unauthorized = fn;
}

const q = encodeURIComponent;

/** The chat API of this page's origin, plus the memory endpoints the memory screen uses. */
class WebApi extends ChatClient {
  memoryTree = () => this.request<typeof MemoryTree>("GET", "/api/memory/tree");
  memorySearch = (query: string, limit = 20) => this.request<typeof MemoryHits>("GET", `/api/memory?q=${q(query)}&limit=${limit}`);
  memoryRead = (path: string) => this.request<typeof MemoryFile>("GET", `/api/memory/read?path=${q(path)}`);
  memoryWrite = (path: string, content: string) => this.request<typeof MemoryDocument>("POST", "/api/memory/write", { path, content });
  memoryDelete = (path: string) => this.request<TUndefined>("DELETE", `/api/memory?path=${q(path)}`);
}

export const api = new WebApi({ baseUrl: "", token: storedToken, onUnauthorized: () => unauthorized() });

/** Checks a token without signing in with it. */
export const checkToken = (token: string) => new ChatClient({ baseUrl: "", token }).threads();
