// The LLM client's own HTTP/1.1 client (src/llm/http1-fetch.ts), against raw TCP servers that
// send exactly the bytes each case needs: split anywhere, kept alive or closed, cut short.
import { afterAll, expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { heapStats } from "bun:jsc";
import { gzipSync } from "node:zlib";
import { http1Fetch } from "../../src/llm/http1-fetch";
import { openAiLlm } from "../../src/llm/openai";
import { until } from "../support/until";

/** What a raw server saw: each connection's bytes, and how many connections it got. */
interface Seen {
  requests: string[];
  connections: number;
  closed: number;
}

const listeners: TCPSocketListener<unknown>[] = [];
afterAll(() => {
  for (const l of listeners) l.stop(true);
});

/**
 * A server that answers each complete request (its head, and a body of its Content-Length)
 * with `answer(request, n)`: the pieces to write, `null` to close, a number to wait (ms).
 */
function rawServer(answer: (request: string, n: number) => (string | Uint8Array | number | null)[]) {
  const seen: Seen = { requests: [], connections: 0, closed: 0 };
  const listener = Bun.listen<{ buf: Buffer }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        seen.connections++;
        s.data = { buf: Buffer.alloc(0) };
      },
      async data(s, data) {
        s.data.buf = Buffer.concat([s.data.buf, data]);
        for (;;) {
          const end = s.data.buf.indexOf("\r\n\r\n");
          if (end < 0) return;
          const head = s.data.buf.toString("latin1", 0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (s.data.buf.byteLength < end + 4 + length) return;
          const request = s.data.buf.toString("utf8", 0, end + 4 + length);
          s.data.buf = s.data.buf.subarray(end + 4 + length);
          seen.requests.push(request);
          await play(s, answer(request, seen.requests.length));
        }
      },
      close() {
        seen.closed++;
      },
    },
  });
  listeners.push(listener as TCPSocketListener<unknown>);
  return { url: `http://127.0.0.1:${listener.port}`, seen };
}

async function play(s: Socket<unknown>, steps: (string | Uint8Array | number | null)[]) {
  for (const step of steps) {
    if (step === null) return void s.end();
    if (typeof step === "number") await Bun.sleep(step);
    else s.write(step);
  }
}

const sse = (text: string) => `data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\n`;
const chunked = (...parts: string[]) => parts.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join("") + "0\r\n\r\n";
const ok = (body: string, extra = "") => `HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

test("a chunked answer split at every byte reads whole, and its connection serves the next request", async () => {
  const body = chunked(sse("héllo "), sse("wörld"));
  const whole = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${body}`;
  const bytes = Buffer.from(whole);
  // one byte a write, a millisecond apart: each one its own read
  const { url, seen } = rawServer(() => [...bytes].flatMap((b) => [Uint8Array.of(b), 1]));
  const response = await http1Fetch(`${url}/v1/chat/completions`, { method: "POST", body: "{}" });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  expect(await response.text()).toBe(sse("héllo ") + sse("wörld"));
  const again = await http1Fetch(`${url}/v1/chat/completions`, { method: "POST", body: "{}" });
  expect(await again.text()).toBe(sse("héllo ") + sse("wörld"));
  expect(seen.connections).toBe(1);
  expect(seen.requests).toHaveLength(2);
});

test("the request carries the caller's headers, its host and its body's length in bytes", async () => {
  const { url, seen } = rawServer(() => [ok("{}")]);
  const headers = new Headers({ authorization: "Bearer k", "content-type": "application/json", "x-stainless-retry-count": "0" });
  await (await http1Fetch(`${url}/v1/chat/completions?x=1`, { method: "post", headers, body: '{"q":"ünï"}' })).text();
  const [head, body] = seen.requests[0]!.split("\r\n\r\n");
  const lines = head!.split("\r\n");
  expect(lines[0]).toBe("POST /v1/chat/completions?x=1 HTTP/1.1");
  expect(lines).toContain(`host: ${new URL(url).host}`);
  expect(lines).toContain("authorization: Bearer k");
  expect(lines).toContain("content-type: application/json");
  expect(lines).toContain(`content-length: ${Buffer.byteLength('{"q":"ünï"}')}`);
  expect(lines.some((l) => /^accept-encoding/i.test(l))).toBe(false);
  expect(body).toBe('{"q":"ünï"}');
});

test("a body of several MB is written whole, however the socket takes it", async () => {
  const big = "x".repeat(6 * 1024 * 1024) + "ß";
  const { url, seen } = rawServer((request) => [ok(String(Buffer.byteLength(request.split("\r\n\r\n")[1]!)))]);
  const response = await http1Fetch(`${url}/big`, { method: "POST", body: new TextEncoder().encode(big) });
  expect(await response.text()).toBe(String(Buffer.byteLength(big)));
  expect(seen.requests).toHaveLength(1);
});

test("text bodies of every size arrive byte for byte, one after another on one connection, with their length", async () => {
  // characters of 2 to 4 bytes (a surrogate pair is two of a string's units), bodies of a few
  // bytes to 600 KB, and a head of 10 KB: each request is measured and written whole
  const { url, seen } = rawServer((request) => [ok(String(Buffer.byteLength(request.split("\r\n\r\n")[1]!)))]);
  const bodies = [
    "",
    '{"q":"ünï"}',
    "é".repeat(100_000),
    "x".repeat(248 * 1024 - 10) + "😀".repeat(3),
    "€".repeat(82_000),
    "😀".repeat(62_000) + "ß",
    "ß".repeat(300_000),
    "a".repeat(9_000),
  ];
  for (const [i, body] of bodies.entries()) {
    const headers = i === bodies.length - 1 ? { "x-long": "h".repeat(10_000) } : undefined;
    const response = await http1Fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body });
    expect(await response.text()).toBe(String(Buffer.byteLength(body)));
    const [head, received] = seen.requests[i]!.split("\r\n\r\n");
    expect(head).toContain(`content-length: ${Buffer.byteLength(body)}`);
    expect(received === body).toBe(true);
  }
  expect(seen.requests[bodies.length - 1]).toContain(`x-long: ${"h".repeat(10_000)}`);
  expect(seen.connections).toBe(1);
});

test("Connection: close, an HTTP/1.0 answer and a body that ends with the connection each get a new connection next", async () => {
  const { url, seen } = rawServer((_, n) =>
    n === 1
      ? [ok("one", "connection: close\r\n"), null]
      : n === 2
        ? ["HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\ntwo", null]
        : [ok("three")],
  );
  expect(await (await http1Fetch(`${url}/`)).text()).toBe("one");
  expect(await (await http1Fetch(`${url}/`)).text()).toBe("two");
  expect(await (await http1Fetch(`${url}/`)).text()).toBe("three");
  expect(seen.connections).toBe(3);
});

test("100 Continue before the answer is passed over; 204 has no body and keeps the connection", async () => {
  const { url, seen } = rawServer((_, n) => (n === 1 ? ["HTTP/1.1 100 Continue\r\n\r\n", 2, ok("after")] : ["HTTP/1.1 204 No Content\r\n\r\n"]));
  expect(await (await http1Fetch(`${url}/`, { method: "POST", body: "x" })).text()).toBe("after");
  const empty = await http1Fetch(`${url}/`, { method: "DELETE" });
  expect(empty.status).toBe(204);
  expect(empty.body).toBeNull();
  expect(await (await http1Fetch(`${url}/`, { method: "POST", body: "x" })).status).toBe(204);
  expect(seen.connections).toBe(1);
});

test("a kept connection the server dropped without a word is asked again on a new one, once", async () => {
  // the server reads the second request on the old connection, then closes it unanswered
  const { url, seen } = rawServer((_, n) => (n === 2 ? [null] : [ok(`answer ${n}`)]));
  expect(await (await http1Fetch(`${url}/`, { method: "POST", body: "a" })).text()).toBe("answer 1");
  expect(await (await http1Fetch(`${url}/`, { method: "POST", body: "b" })).text()).toBe("answer 3");
  expect(seen.connections).toBe(2);
  // on a new connection the same silence is the server's answer: it fails
  const { url: mute } = rawServer(() => [null]);
  await expect(http1Fetch(`${mute}/`, { method: "POST", body: "c" })).rejects.toThrow(TypeError);
});

test("a body cut short, a bad status line and a bad chunk fail the read, and the connection is not reused", async () => {
  const cut = rawServer(() => ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel", 5, null]);
  const response = await http1Fetch(`${cut.url}/`);
  await expect(response.text()).rejects.toThrow(/closed before the answer was complete/);
  const garbage = rawServer(() => ["SSH-2.0-OpenSSH\r\n\r\n"]);
  await expect(http1Fetch(`${garbage.url}/`)).rejects.toThrow(/not an HTTP\/1.1 answer/);
  const badChunk = rawServer(() => ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"]);
  await expect((await http1Fetch(`${badChunk.url}/`)).text()).rejects.toThrow(/bad chunk size/);
  await until("the bad chunk's connection closed", () => badChunk.seen.closed === 1);
});

test("the caller's signal cancels a request waiting for its answer, and one whose body is being read", async () => {
  const { url, seen } = rawServer((_, n) => (n === 1 ? [] : ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\none\r\n"]));
  const waiting = new AbortController();
  const pending = http1Fetch(`${url}/`, { method: "POST", body: "{}", signal: waiting.signal });
  await until("the server has the request", () => seen.requests.length === 1);
  waiting.abort(new Error("stop waiting"));
  await expect(pending).rejects.toThrow("stop waiting");
  const reading = new AbortController();
  const response = await http1Fetch(`${url}/`, { method: "POST", body: "{}", signal: reading.signal });
  const reader = response.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe("one");
  reading.abort(new Error("stop reading"));
  await expect(reader.read()).rejects.toThrow("stop reading");
  await until("both connections closed", () => seen.closed === 2);
});

test("a body the caller lets go of before its end closes the connection", async () => {
  const { url, seen } = rawServer(() => ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\none\r\n"]);
  const response = await http1Fetch(`${url}/`);
  const reader = response.body!.getReader();
  await reader.read();
  await reader.cancel();
  await until("the connection closed", () => seen.closed === 1);
});

test("a refused connection fails as fetch's does: a TypeError with ECONNREFUSED", async () => {
  const error = await http1Fetch("http://127.0.0.1:9/").catch((e) => e);
  expect(error).toBeInstanceOf(TypeError);
  expect(error.code).toBe("ECONNREFUSED");
});

test("a gzip answer is decoded; a redirect is followed by fetch", async () => {
  const zipped = gzipSync("squeezed");
  const gz = rawServer(() => [`HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${zipped.byteLength}\r\n\r\n`, zipped]);
  expect(await (await http1Fetch(`${gz.url}/`)).text()).toBe("squeezed");
  const target = Bun.serve({ port: 0, fetch: async (req) => new Response(`moved ${req.method} ${await req.text()}`) });
  const redirect = rawServer(() => [`HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:${target.port}/v1\r\ncontent-length: 0\r\n\r\n`]);
  expect(await (await http1Fetch(`${redirect.url}/`, { method: "POST", body: "again" })).text()).toBe("moved POST again");
  target.stop(true);
});

test("servers that end kept connections themselves: after a count, and when idle", async () => {
  // llama.cpp's server (cpp-httplib) announces the last request a connection may carry with
  // `Connection: close` (CPPHTTPLIB_KEEPALIVE_MAX_COUNT, 5 in older releases, 100 now:
  // https://github.com/yhirose/cpp-httplib/blob/master/httplib.h), and closes a connection idle
  // for CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND; vLLM's uvicorn closes one idle for 5 s
  // (`--timeout-keep-alive`, https://www.uvicorn.org/settings/#timeouts). Here the count is 2
  // and the idle time 30 ms.
  const { url, seen } = rawServer((_, n) => (n % 2 === 0 ? [ok(`answer ${n}`, "connection: close\r\n"), null] : [ok(`answer ${n}`)]));
  for (let n = 1; n <= 4; n++) expect(await (await http1Fetch(`${url}/`, { method: "POST", body: "{}" })).text()).toBe(`answer ${n}`);
  expect(seen.connections).toBe(2);
  const idle = rawServer((_, n) => [ok(`answer ${n}`), 30, null]);
  expect(await (await http1Fetch(`${idle.url}/`, { method: "POST", body: "{}" })).text()).toBe("answer 1");
  await Bun.sleep(60);
  expect(await (await http1Fetch(`${idle.url}/`, { method: "POST", body: "{}" })).text()).toBe("answer 2");
  expect(idle.seen.connections).toBe(2);
});

test("chunk extensions, upper-case sizes and trailers are read past", async () => {
  const body = "3;ext=1\r\none\r\nA\r\n0123456789\r\n0\r\nx-trailer: y\r\n\r\n";
  const { url, seen } = rawServer(() => [`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${body}`]);
  expect(await (await http1Fetch(`${url}/`)).text()).toBe("one0123456789");
  expect(await (await http1Fetch(`${url}/`)).text()).toBe("one0123456789");
  expect(seen.connections).toBe(1);
});

// Node's own HTTP server, as a model server written in JavaScript runs on: chunked answers,
// idle connections closed after `keepAliveTimeout` (plus `keepAliveTimeoutBuffer`, 1 s, in
// recent releases) and a connection's last request announced with `Connection: close` once
// `maxRequestsPerSocket` is reached (https://nodejs.org/api/http.html#serverkeepalivetimeout).
const node = Bun.which("node");
test.skipIf(!node)("turns against Node's HTTP server: kept alive, closed after its count, closed when idle", async () => {
  const script = `
    const http = require("node:http");
    let connections = 0;
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        console.log("request on " + req.socket.n);
        const { messages } = JSON.parse(body);
        res.writeHead(200, { "content-type": "text/event-stream" });
        const say = (delta, finish = null) => res.write("data: " + JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] }) + "\\n\\n");
        say({ role: "assistant", content: "you said " });
        setTimeout(() => { say({ content: messages.at(-1).content }); say({}, "stop"); res.end("data: [DONE]\\n\\n"); }, 5);
      });
    });
    server.keepAliveTimeout = 100;
    server.keepAliveTimeoutBuffer = 0;
    server.maxRequestsPerSocket = 3;
    server.on("connection", (socket) => (socket.n = ++connections));
    server.listen(0, "127.0.0.1", () => console.log("port " + server.address().port));
  `;
  const proc = Bun.spawn([node!, "-e", script], { stdout: "pipe" });
  try {
    let out = "";
    const reader = proc.stdout.getReader();
    while (!out.includes("\n")) out += new TextDecoder().decode((await reader.read()).value);
    const port = Number(/port (\d+)/.exec(out)![1]);
    const llm = openAiLlm({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "k", model: "m", maxRetries: 0 });
    const say = async (text: string) => {
      let answer = "";
      for await (const ev of llm.stream({ messages: [{ role: "user", content: text }], tools: [], signal: new AbortController().signal })) {
        if (ev.type === "text") answer += ev.delta;
      }
      return answer;
    };
    for (const n of [1, 2, 3, 4]) expect(await say(`turn ${n}`)).toBe(`you said turn ${n}`);
    await Bun.sleep(1300); // past the idle timeout, with or without the buffer: Node has closed the connection
    expect(await say("after a pause")).toBe("you said after a pause");
    while ((out.match(/request on/g) ?? []).length < 5) out += new TextDecoder().decode((await reader.read()).value);
    // three requests on the first connection (the third announced as its last), then a second, then a third
    expect([...out.matchAll(/request on (\d+)/g)].map((m) => Number(m[1]))).toEqual([1, 1, 1, 2, 3]);
  } finally {
    proc.kill();
  }
}, 10_000);

test("`localhost` reaches a server on either loopback address, as Ollama's default base URL needs", async () => {
  // Ollama listens on 127.0.0.1:11434 and documents http://localhost:11434/v1
  // (https://github.com/ollama/ollama/blob/main/docs/openai.md); others bind ::1
  for (const hostname of ["127.0.0.1", "::1"]) {
    let server: ReturnType<typeof Bun.serve>;
    try {
      server = Bun.serve({ hostname, port: 0, fetch: () => new Response(`on ${hostname}`) });
    } catch {
      continue; // no IPv6 loopback on this machine
    }
    expect(await (await http1Fetch(`http://localhost:${server.port}/v1/models`)).text()).toBe(`on ${hostname}`);
    if (hostname === "::1") expect(await (await http1Fetch(`http://[::1]:${server.port}/`)).text()).toBe("on ::1");
    server.stop(true);
  }
});

test("an answer that comes before the request's body was all written leaves that connection unused", async () => {
  // a server refusing a large body at once (413) without reading it; the connection then holds
  // the rest of a request and cannot carry another
  const seen = { connections: 0 };
  const listener = Bun.listen<undefined>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        seen.connections++;
        s.write("HTTP/1.1 413 Content Too Large\r\ncontent-length: 8\r\n\r\ntoo big!");
      },
      data() {},
    },
  });
  listeners.push(listener as TCPSocketListener<unknown>);
  const url = `http://127.0.0.1:${listener.port}/`;
  const response = await http1Fetch(url, { method: "POST", body: "x".repeat(32 * 1024 * 1024) });
  expect(response.status).toBe(413);
  expect(await response.text()).toBe("too big!");
  await http1Fetch(url, { method: "POST", body: "small" }).then((r) => r.text());
  expect(seen.connections).toBe(2);
});

test("a request's body is not kept while its answer streams", async () => {
  // a server that keeps nothing of what it reads: once a request's head and body are in, it
  // answers with a head and a first event, and the stream stays open until the reader lets go
  const answer = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunked(sse("hi")).slice(0, -5)}`;
  const listener = Bun.listen<{ head: string; left: number }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open: (s) => void (s.data = { head: "", left: -1 }),
      data(s, data) {
        let bytes = data.byteLength;
        if (s.data.left < 0) {
          s.data.head += data.toString("latin1");
          const end = s.data.head.indexOf("\r\n\r\n");
          if (end < 0) return;
          s.data.left = Number(/content-length: (\d+)/i.exec(s.data.head)![1]);
          bytes = s.data.head.length - end - 4;
          s.data.head = "";
        }
        s.data.left -= bytes;
        if (s.data.left === 0) s.write(answer);
      },
    },
  });
  listeners.push(listener as TCPSocketListener<unknown>);
  // the heap and what its objects hold outside it (a request's bytes, once encoded)
  const kept = () => heapStats().heapSize + heapStats().extraMemorySize;
  // bodies large beside what the rest of a whole test run leaves on the heap meanwhile (a few MB)
  const streams = 4;
  const size = 16 * 1024 * 1024;
  const open = async (i: number) => {
    const response = await http1Fetch(`http://127.0.0.1:${listener.port}/v1/chat/completions`, { method: "POST", body: String(i).repeat(size) });
    const reader = response.body!.getReader();
    await reader.read();
    return reader;
  };
  Bun.gc(true);
  const before = kept();
  const readers = await Promise.all(Array.from({ length: streams }, (_, i) => open(i)));
  Bun.gc(true);
  const held = kept() - before;
  await Promise.all(readers.map((r) => r.cancel()));
  // 64 MB of bodies; what each stream keeps without them is a few KB
  expect(held).toBeLessThan((streams * size) / 4);
});
