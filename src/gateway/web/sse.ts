import type { ChatEvent } from "./wire";

export interface SseMessage {
  event: string;
  data: string;
}

/** Server-sent events from text chunks, by the WHATWG rules; comments (keepalives) are skipped. */
export class SseParser {
  #buffer = "";
  #event = "";
  #data: string[] = [];

  push(chunk: string): SseMessage[] {
    this.#buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buffer);
      // a lone \r at the end may be the first half of \r\n: wait for more
      if (!m || (m[0] === "\r" && m.index === this.#buffer.length - 1)) break;
      const line = this.#buffer.slice(0, m.index);
      this.#buffer = this.#buffer.slice(m.index + m[0].length);
      if (line === "") {
        if (this.#data.length) out.push({ event: this.#event || "message", data: this.#data.join("\n") });
        this.#event = "";
        this.#data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") this.#event = value;
      else if (field === "data") this.#data.push(value);
    }
    return out;
  }
}

export type StreamState = "connecting" | "open" | "offline";

export interface EventsOptions {
  token: () => string | null;
  onEvent: (event: ChatEvent) => void;
  onState: (state: StreamState) => void;
  /** The stream came back after a break: events may have been missed. */
  onReconnect: () => void;
  onUnauthorized: () => void;
}

/**
 * Follows GET /api/chat/events with fetch (EventSource cannot send the Authorization header)
 * and reconnects with a growing pause when the stream breaks.
 */
export function followEvents(opts: EventsOptions): { close(): void } {
  const abort = new AbortController();
  let closed = false;
  void (async () => {
    let failures = 0;
    let opened = false;
    while (!closed) {
      opts.onState(opened ? "offline" : "connecting");
      try {
        const token = opts.token();
        if (!token) return;
        const res = await fetch("/api/chat/events", {
          headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
          signal: abort.signal,
          cache: "no-store",
        });
        if (res.status === 401) return opts.onUnauthorized();
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        opts.onState("open");
        if (opened) opts.onReconnect();
        opened = true;
        failures = 0;
        const parser = new SseParser();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const m of parser.push(value)) {
            try {
              opts.onEvent(JSON.parse(m.data) as ChatEvent);
            } catch (e) {
              console.error("chat event", m, e);
            }
          }
        }
      } catch {
        if (closed) return;
      }
      failures++;
      opts.onState("offline");
      await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** Math.min(failures, 5))));
    }
  })();
  return {
    close() {
      closed = true;
      abort.abort();
    },
  };
}
