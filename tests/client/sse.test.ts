// The one SSE reader of both chat UIs, against a real HTTP server on loopback: events split
// across chunks, keepalives, a stream that ends or goes silent, a refused token.
import { afterEach, describe, expect, test } from "bun:test";
import { ChatClient } from "../../src/client/http";
import { SseParser, type StreamState } from "../../src/client/sse";
import type { ChatEvent } from "../../src/gateway/chat-wire";
import { until } from "../support/until";

const event = (n: number): ChatEvent => ({ type: "message.delta", thread_id: "t", response_id: "r", item_id: "m", delta: String(n) });
const frame = (e: ChatEvent) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

let servers: ReturnType<typeof Bun.serve>[] = [];
afterEach(() => {
  for (const s of servers) s.stop(true);
  servers = [];
});

/** A server whose n-th connection (0-based) to /api/chat/events is answered by `answer(n, request)`. */
function serve(answer: (n: number, req: Request) => Response) {
  let n = 0;
  const headers: Headers[] = [];
  const times: number[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      headers.push(new Headers(req.headers));
      times.push(performance.now());
      return answer(n++, req);
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, headers, times, connections: () => n };
}

/** A stream that writes these chunks, then stays open (until the client goes) or ends. */
function stream(chunks: string[], end: boolean, everyMs = 0): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      for (const chunk of chunks) {
        c.enqueue(new TextEncoder().encode(chunk));
        if (everyMs) await Bun.sleep(everyMs);
      }
      if (end) c.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

function follow(url: string, opts: { token?: string; idleMs?: number } = {}) {
  const events: ChatEvent[] = [];
  const states: StreamState[] = [];
  const abort = new AbortController();
  const client = new ChatClient({ baseUrl: url, token: opts.token ?? "tok" });
  const done = client.follow({ onEvent: (e) => events.push(e), onState: (s) => states.push(s), signal: abort.signal, retryMs: [10], idleMs: opts.idleMs });
  return { events, states, stop: () => (abort.abort(), done) };
}

describe("SseParser", () => {
  test("an event split anywhere, CRLF line ends, comments and fields it does not know", () => {
    const p = new SseParser();
    const text = `: connected\r\n\r\nid: 7\r\nretry: 10\r\nevent: x\r\ndata: {"a":\r\ndata: 1}\r\n\r\n`;
    const out = [...text].flatMap((ch) => p.push(ch));
    expect(out).toEqual([{ event: "x", data: '{"a":\n1}' }]);
  });
});

describe("following the event stream", () => {
  test("events split across chunks arrive whole; keepalives are skipped; a stream that ends is opened again", async () => {
    const whole = frame(event(1)) + ": keepalive\n\n" + frame(event(2));
    const s = serve((n) => (n === 0 ? stream([whole.slice(0, 17), whole.slice(17, 80), whole.slice(80)], true) : stream([frame(event(3))], false)));
    const f = follow(s.url);
    await until("three events", () => f.events.length === 3);
    expect(f.events.map((e) => (e as { delta: string }).delta)).toEqual(["1", "2", "3"]);
    expect(f.states).toEqual(["connecting", "connected", "reconnecting", "connected"]);
    expect(s.headers[0]!.get("authorization")).toBe("Bearer tok");
    expect(s.headers[0]!.get("accept")).toBe("text/event-stream");
    await f.stop();
    expect(s.connections()).toBe(2);
  });

  test("keepalives keep a quiet stream open; silence longer than allowed opens it again", async () => {
    const s = serve((n) => (n === 0 ? stream(Array(12).fill(": keepalive\n\n"), false, 20) : stream([frame(event(9))], false)));
    const f = follow(s.url, { idleMs: 150 });
    await until("the event after the silence", () => f.events.length === 1);
    expect(f.states).toEqual(["connecting", "connected", "reconnecting", "connected"]);
    // 12 keepalives 20 ms apart kept the first stream alive past the 150 ms allowed (the last at
    // 220 ms), then 150 ms of silence ended it
    expect(s.times[1]! - s.times[0]!).toBeGreaterThanOrEqual(220 + 150 - 5);
    await f.stop();
  });

  test("a refused token is reported, and tried again until the caller stops", async () => {
    const s = serve(() => new Response("no", { status: 401 }));
    const f = follow(s.url, { token: "bad" });
    await until("two attempts", () => s.connections() >= 2);
    await f.stop();
    expect(f.states.slice(0, 3)).toEqual(["connecting", "unauthorized", "unauthorized"]);
    expect(f.events).toEqual([]);
  });

  test("a service that is not there: reconnecting, until stopped", async () => {
    const gone = serve(() => new Response());
    servers.pop()!.stop(true);
    const f = follow(gone.url);
    await until("a failed attempt", () => f.states.includes("reconnecting"));
    await f.stop();
    expect(f.states[0]).toBe("connecting");
    expect(f.states).not.toContain("connected");
  });
});
