// The chat API as its two clients use it: the web UI (in the browser) and the TUI. Nothing
// here may need Node, Bun or TypeBox at run time: the browser bundle includes this module.
import type { Static, TSchema, TUndefined, TUnknown, TUnsafe } from "@sinclair/typebox";
import type { Accepted, ApprovalList, Compacted, Decision, DecisionReply, History, ThreadList, ThreadSummary } from "../gateway/chat-wire";
import { followEvents, type FollowOptions } from "./sse";
import type { StatusReply } from "../api/status-reply";

/** The service answered with an error status; `message` is meant for a person. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The service could not be reached at all (status 0). */
export class ConnectionError extends ApiError {
  constructor(message: string, cause: unknown) {
    super(0, message);
    this.cause = cause;
  }
}

/** What the UIs read of GET /api/status. */
export type ServiceStatus = Pick<StatusReply, "version" | "llm">;

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the service is, like http://127.0.0.1:3000; "" for the page's own origin. */
  baseUrl: string;
  /** The bearer token, or how to read it at each call. */
  token: string | (() => string | null);
  fetch?: Fetch;
  /** The service no longer accepts the token (any call answered 401). */
  onUnauthorized?: () => void;
}

const q = encodeURIComponent;

export class ChatClient {
  readonly baseUrl: string;
  readonly #opts: ClientOptions;
  readonly #fetch: Fetch;

  constructor(opts: ClientOptions) {
    this.#opts = opts;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    // called unbound: a browser's fetch refuses any other `this`
    this.#fetch = opts.fetch ?? ((url, init) => fetch(url, init));
  }

  #auth(): Record<string, string> {
    const token = typeof this.#opts.token === "function" ? this.#opts.token() : this.#opts.token;
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  /**
   * One call; the reply's JSON, typed by the schema its route declares as `response` (the
   * server checks its replies against it), or undefined for an empty body.
   */
  async request<Reply extends TSchema>(method: string, path: string, body?: unknown): Promise<Static<Reply>> {
    const headers: Record<string, string> = { ...this.#auth(), accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await this.#fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      const where = this.baseUrl ? ` at ${this.baseUrl}` : "";
      throw new ConnectionError(`Cannot reach the service${where}. Check that it is running and try again.`, e);
    }
    const text = await res.text();
    if (!res.ok) {
      if (res.status === 401) this.#opts.onUnauthorized?.();
      const { message, code } = parseError(res.status, text);
      throw new ApiError(res.status, message, code);
    }
    return text ? JSON.parse(text) : undefined;
  }

  status = (): Promise<ServiceStatus> => this.request<typeof StatusReply>("GET", "/api/status");
  /** This user's threads, most recent first; with `query`, those whose title or messages hold it. */
  threads = async (query?: string) => (await this.request<typeof ThreadList>("GET", `/api/chat/threads${query ? `?q=${q(query)}` : ""}`)).threads;
  rename = (threadId: string, title: string) => this.request<typeof ThreadSummary>("PATCH", `/api/chat/threads/${q(threadId)}`, { title });
  /** The tool calls waiting for this user's decision, in any thread. */
  approvals = async () => (await this.request<typeof ApprovalList>("GET", "/api/chat/approvals")).approvals;
  /** Answers the thread's last message again (regenerate, retry); the answer it replaces stays an alternative. */
  regenerate = (threadId: string) => this.request<typeof Accepted>("POST", `/api/chat/threads/${q(threadId)}/regenerate`);
  /** Replaces the thread's last message and answers it; the earlier one stays an alternative. */
  edit = (threadId: string, content: string) => this.request<typeof Accepted>("POST", `/api/chat/threads/${q(threadId)}/edit`, { content });
  /** Shows alternative `branch` where message `itemId` forks the thread. */
  switchBranch = (threadId: string, itemId: string, branch: number) =>
    this.request<typeof History>("POST", `/api/chat/threads/${q(threadId)}/branches`, { item_id: itemId, branch });
  history = (threadId: string) => this.request<typeof History>("GET", `/api/chat/history?thread_id=${q(threadId)}`);
  send = (content: string, threadId?: string | null) =>
    this.request<typeof Accepted>("POST", "/api/chat/send", threadId ? { content, thread_id: threadId } : { content });
  /** Summarises the thread's turns but the latest (`/compact`). */
  compact = (threadId: string) => this.request<typeof Compacted>("POST", `/api/chat/threads/${q(threadId)}/compact`);
  deleteThread = (threadId: string) => this.request<TUndefined>("DELETE", `/api/chat/threads/${q(threadId)}`);
  response = (responseId: string) => this.request<TUnsafe<{ status: string }>>("GET", `/api/v1/responses/${q(responseId)}`);
  cancel = (responseId: string) => this.request<TUnknown>("POST", `/api/v1/responses/${q(responseId)}/cancel`);
  /** Resolves the approval the thread waits on; answers when the turn it resumes stops again. */
  decide = (threadId: string, decision: Decision) => this.request<typeof DecisionReply>("POST", `/api/chat/approvals/${q(threadId)}`, { decision });

  /** Follows the event stream (fetch, not EventSource: that cannot send the Authorization header). */
  follow(opts: FollowOptions): Promise<void> {
    return followEvents(
      (signal) =>
        this.#fetch(`${this.baseUrl}/api/chat/events`, {
          headers: { ...this.#auth(), accept: "text/event-stream" },
          signal,
          cache: "no-store",
        }),
      opts,
    );
  }
}

/** The error envelope's message and code; else a plain-text body, or a sentence for the status. */
export function parseError(status: number, text: string): { message: string; code?: string } {
  let error: unknown;
  try {
    error = JSON.parse(text)?.error;
  } catch {}
  if (typeof error === "string" && error) return { message: error };
  if (error && typeof error === "object") {
    const { message, code } = error as { message?: unknown; code?: unknown };
    if (typeof message === "string" && message) return { message, code: typeof code === "string" ? code : undefined };
  }
  if (text && text.length < 300 && !text.trimStart().startsWith("<")) return { message: text };
  if (status === 401) return { message: "The token was not accepted." };
  if (status === 404) return { message: "Not found." };
  if (status === 429) return { message: "Too many requests; wait a moment and try again." };
  if (status >= 500) return { message: `The service had a problem (HTTP ${status}).` };
  return { message: `The request failed (HTTP ${status}).` };
}
