import { createParser } from "eventsource-parser";
import type { ChatEvent } from "../gateway/chat-wire";

export interface SseMessage {
  event: string;
  data: string;
}

/** Server-sent events from text chunks; comments (the keepalives) are skipped. */
export class SseParser {
  readonly #ready: SseMessage[] = [];
  readonly #parser = createParser({ onEvent: (m) => this.#ready.push({ event: m.event ?? "message", data: m.data }) });

  /** The events this chunk completes. */
  push(chunk: string): SseMessage[] {
    this.#parser.feed(chunk);
    return this.#ready.splice(0);
  }
}

/** How the event stream is doing: "connected" once the service has answered it. */
export type StreamState = "connecting" | "connected" | "reconnecting" | "unauthorized";

export interface FollowOptions {
  onEvent: (event: ChatEvent) => void;
  /** `detail` says why the stream is not connected. */
  onState: (state: StreamState, detail?: string) => void;
  /** Ends following for good. */
  signal: AbortSignal;
  /** The pauses before the attempts after a break, the last one repeated. */
  retryMs?: readonly number[];
  /** How long the stream may stay silent before it is taken for dead and opened again. */
  idleMs?: number;
}

/** The server sends a keepalive every 15 s. */
const STREAM_IDLE_MS = 45_000;
const RETRY_MS = [250, 500, 1_000, 2_000, 4_000];

/**
 * Follows GET /api/chat/events until `signal` aborts, reconnecting whenever the stream drops
 * (with a growing pause) or stays silent for longer than the server's keepalive allows.
 * A refused token is reported and tried again: the caller decides whether to stop.
 */
export async function followEvents(open: (signal: AbortSignal) => Promise<Response>, opts: FollowOptions): Promise<void> {
  const { signal } = opts;
  const { retryMs = RETRY_MS, idleMs = STREAM_IDLE_MS } = opts;
  let attempt = 0;
  let state: StreamState = "connecting";
  opts.onState(state);
  while (!signal.aborted) {
    const ctrl = new AbortController();
    const abort = () => ctrl.abort();
    signal.addEventListener("abort", abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(abort, idleMs);
    };
    let detail = "";
    try {
      touch();
      const res = await open(ctrl.signal);
      if (res.status === 401 || res.status === 403) {
        state = "unauthorized";
        detail = `the token was refused (${res.status})`;
        await res.body?.cancel();
      } else if (!res.ok || !res.body) {
        detail = `HTTP ${res.status}`;
        await res.body?.cancel();
      } else {
        attempt = 0;
        opts.onState((state = "connected"));
        await readEvents(res.body, opts.onEvent, touch);
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
    opts.onState(state, detail);
    await sleep(retryMs[Math.min(attempt++, retryMs.length - 1)]!, signal);
  }
}

async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (e: ChatEvent) => void, touch: () => void): Promise<void> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    touch();
    for (const m of parser.push(decoder.decode(value, { stream: true }))) {
      let event: ChatEvent;
      try {
        event = JSON.parse(m.data) as ChatEvent;
      } catch {
        continue; // not JSON: not an event of ours
      }
      try {
        onEvent(event);
      } catch (e) {
        console.error("chat event", event.type, e);
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
