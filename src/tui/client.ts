import type { ChatEvent, Compacted, Decision, History, HistoryItem, ThreadSummary, Waiting } from "../gateway/chat-wire";

export type { ChatEvent, Decision, History, HistoryItem, ThreadSummary, Waiting };
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "unauthorized";

export interface ServiceStatus {
  version: string;
  llm: { configured: boolean; model: string | null };
}

/** The service answered with an error status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The service could not be reached at all. */
export class ConnectionError extends Error {}

/** The host to connect to for a listen address: a wildcard address is reached on loopback. */
export function connectHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** How long the event stream may stay silent (the server sends a keepalive every 15 s). */
const STREAM_IDLE_MS = 45_000;
const RETRY_MS = [250, 500, 1_000, 2_000, 4_000];

/** The TUI's view of a running service: the local chat endpoints over HTTP, nothing else. */
export class ChatClient {
  readonly url: string;
  constructor(
    url: string,
    readonly token: string,
  ) {
    this.url = url.replace(/\/+$/, "");
  }

  async #request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.url + path, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ConnectionError(`cannot reach ${this.url}: ${(e as Error).message}`);
    }
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const message = parsed?.error?.message ?? (text.trim() || res.statusText || `HTTP ${res.status}`);
      throw new ApiError(res.status, message, parsed?.error?.code ?? undefined);
    }
    return parsed as T;
  }

  status(): Promise<ServiceStatus> {
    return this.#request("GET", "/api/status");
  }
  send(content: string, threadId?: string): Promise<{ response_id: string; thread_id: string }> {
    return this.#request("POST", "/api/chat/send", { content, ...(threadId ? { thread_id: threadId } : {}) });
  }
  async threads(): Promise<ThreadSummary[]> {
    return (await this.#request<{ threads: ThreadSummary[] }>("GET", "/api/chat/threads")).threads;
  }
  history(threadId: string): Promise<History> {
    return this.#request("GET", `/api/chat/history?thread_id=${encodeURIComponent(threadId)}`);
  }
  /** Summarises the thread's turns but the latest (`/compact`). */
  compact(threadId: string): Promise<Compacted> {
    return this.#request("POST", `/api/chat/threads/${encodeURIComponent(threadId)}/compact`);
  }
  response(responseId: string): Promise<{ status: string }> {
    return this.#request("GET", `/api/v1/responses/${encodeURIComponent(responseId)}`);
  }
  cancel(responseId: string): Promise<unknown> {
    return this.#request("POST", `/api/v1/responses/${encodeURIComponent(responseId)}/cancel`);
  }
  /** Resolves the approval the thread waits on; the turn it resumes reports on the event stream. */
  decide(threadId: string, decision: Decision): Promise<{ response_id?: string; thread_id?: string } | undefined> {
    return this.#request("POST", `/api/chat/approvals/${encodeURIComponent(threadId)}`, { decision });
  }

  /**
   * Follows GET /api/chat/events until `signal` aborts, reconnecting whenever the stream drops
   * (with a short backoff) or stays silent for longer than the server's keepalive allows.
   */
  async follow(onEvent: (e: ChatEvent) => void, onState: (s: ConnectionState, detail?: string) => void, signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let state: ConnectionState = "connecting";
    while (!signal.aborted) {
      onState(state);
      const ctrl = new AbortController();
      const abort = () => ctrl.abort();
      signal.addEventListener("abort", abort, { once: true });
      let idle: ReturnType<typeof setTimeout> | undefined;
      const touch = () => {
        clearTimeout(idle);
        idle = setTimeout(() => ctrl.abort(), STREAM_IDLE_MS);
      };
      let detail = "";
      try {
        touch();
        const res = await fetch(`${this.url}/api/chat/events`, {
          headers: { authorization: `Bearer ${this.token}`, accept: "text/event-stream" },
          signal: ctrl.signal,
        });
        if (res.status === 401 || res.status === 403) {
          state = "unauthorized";
          detail = `the token was refused (${res.status})`;
          await res.body?.cancel();
        } else if (!res.ok || !res.body) {
          detail = `HTTP ${res.status}`;
          await res.body?.cancel();
        } else {
          attempt = 0;
          onState((state = "connected"));
          await readEvents(res.body, onEvent, touch);
          detail = "the event stream ended";
        }
      } catch (e) {
        detail = (e as Error).message;
      } finally {
        clearTimeout(idle);
        signal.removeEventListener("abort", abort);
      }
      if (signal.aborted) return;
      if (state !== "unauthorized") state = "reconnecting";
      onState(state, detail);
      await sleep(RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]!, signal);
    }
  }
}

async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (e: ChatEvent) => void, touch: () => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    touch();
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue; // a comment (keepalive)
      try {
        onEvent(JSON.parse(data) as ChatEvent);
      } catch {
        // not JSON: not an event of ours
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
