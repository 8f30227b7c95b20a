import type { Socket, SocketHandler } from "bun";
import { memoByObject, memoByText } from "../memo";
import { Chunked, Sized, UntilClose, type Framing } from "./http1-framing";

/**
 * `fetch` for model servers reached over plain HTTP (Ollama, llama.cpp, LM Studio, vLLM on the
 * machine or the LAN): HTTP/1.1 over sockets of the event loop's own (`Bun.connect`), kept
 * alive per origin. Bun's `fetch` runs its sockets on a thread of its own, and a request and
 * each read of its answer are handed across: about a tenth of the service's CPU a turn, and
 * 75 µs of a bare proxy's answer (docs/performance.md, "2026-11-28, dawn").
 *
 * What it does not do goes to `fetch` as it is: https, a proxy named in the environment, a
 * body that is not text or bytes, and a redirect (asked again of `fetch`, which follows it).
 * It sends no `Accept-Encoding`, so a server answers uncompressed; gzip and deflate are
 * decoded all the same.
 */
export function http1Fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const href = typeof input === "string" ? input : input instanceof URL ? input.href : undefined;
  const body = init?.body;
  if (!href?.startsWith("http://") || PROXIED || (body != null && typeof body !== "string" && !(body instanceof Uint8Array))) {
    return fetch(input, init);
  }
  return send(href, init ?? {}, body ?? undefined);
}

/** Bun's `fetch` honours these, and so does anyone who set them: such a request goes through it. */
const PROXIED = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"].some((name) => process.env[name]);

/** Idle connections kept per origin, and how long one may stay idle. */
const IDLE_PER_ORIGIN = 256;
const IDLE_SECONDS = 30;

/** A connection that had served a request closed before it answered this one: asked again once, on a new one. */
class StaleConnection extends Error {}

async function send(href: string, init: RequestInit, body: string | Uint8Array | undefined): Promise<Response> {
  const target = parse(href);
  const method = (init.method ?? "GET").toUpperCase();
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const length = body === undefined ? undefined : typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
  const head = requestHead(method, target, init.headers, length);
  const bytes = Buffer.byteLength(head) + (length ?? 0);
  for (;;) {
    const kept = idle.get(target.origin)?.pop();
    const conn = kept ?? (await Connection.open(target, signal));
    try {
      const response = await conn.exchange(method, head, body, bytes, signal);
      if (response.status >= 300 && response.status < 400 && response.headers.has("location")) {
        void response.body?.cancel();
        return fetch(href, init);
      }
      return response;
    } catch (e) {
      if (e instanceof StaleConnection && kept) continue;
      throw e instanceof StaleConnection ? new TypeError("fetch failed: the connection closed before the answer", { cause: e }) : e;
    }
  }
}

interface Target {
  origin: string;
  hostname: string;
  port: number;
  host: string;
  path: string;
}

/** The parts of a URL a request needs, kept per URL: a client asks the same few all day. */
const parse = memoByText((href): Target => {
  const url = new URL(href);
  return { origin: url.origin, hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(url.port || 80), host: url.host, path: url.pathname + url.search };
});

/**
 * The caller's headers as lines of the request, made once per `Headers` object: the SDK makes
 * a new one for each request it builds and never changes one it gave (llm/step.ts builds the
 * model's once per endpoint).
 */
const headerBlock = memoByObject((headers: Exclude<RequestInit["headers"], undefined>) => {
  let block = "";
  for (const [name, value] of new Headers(headers)) if (!SET_HERE.has(name)) block += `${name}: ${value}\r\n`;
  return block;
});
const SET_HERE = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"]);

/** The request line and headers; `length` is the body's in bytes. */
function requestHead(method: string, target: Target, headers: RequestInit["headers"], length: number | undefined): string {
  const framing = length !== undefined ? `content-length: ${length}\r\n` : method === "GET" || method === "HEAD" ? "" : "content-length: 0\r\n";
  return `${method} ${target.path} HTTP/1.1\r\nhost: ${target.host}\r\n${headers ? headerBlock(headers) : ""}${framing}\r\n`;
}

const idle = new Map<string, Connection[]>();

const handler: SocketHandler<Connection> = {
  data: (socket, data) => socket.data.received(data),
  drain: (socket) => socket.data.drained(),
  end: (socket) => socket.data.closed(),
  close: (socket, error) => socket.data.closed(error),
  error: (socket, error) => socket.data.closed(error),
  timeout: (socket) => socket.data.idledOut(),
};

/** What one request is waiting for: its answer's head, then its body's bytes. */
interface Exchange {
  method: string;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  resolve: (response: Response) => void;
  reject: (error: unknown) => void;
  /** Set once the head is in. */
  body?: ReadableStreamDefaultController<Uint8Array>;
  gotBytes: boolean;
}

class Connection {
  #socket!: Socket<Connection>;
  #exchange: Exchange | undefined;
  /** Bytes of a head not yet complete. */
  #head: Buffer | undefined;
  #framing: Framing | undefined;
  #keepAlive = false;
  #unwritten: Buffer | undefined;
  #closed = false;

  private constructor(private readonly origin: string) {}

  static async open(target: Target, signal: AbortSignal | undefined): Promise<Connection> {
    const conn = new Connection(target.origin);
    const opening = Bun.connect({ hostname: target.hostname, port: target.port, data: conn, socket: handler });
    let socket: Socket<Connection>;
    if (!signal) socket = await opening.catch((e) => Promise.reject(connectFailure(e)));
    else {
      let onAbort!: () => void;
      const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", (onAbort = () => reject(signal.reason)), { once: true }));
      try {
        socket = await Promise.race([opening, aborted]);
      } catch (e) {
        if (signal.aborted) opening.then((s) => s.terminate(), () => {});
        throw signal.aborted ? e : connectFailure(e);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    }
    socket.setNoDelay(true);
    conn.#socket = socket;
    return conn;
  }

  /** Sends the request (`bytes` long in all) and waits for its answer's head. */
  exchange(method: string, head: string, body: string | Uint8Array | undefined, bytes: number, signal: AbortSignal | undefined): Promise<Response> {
    this.#socket.timeout(0);
    this.#socket.ref();
    const { promise, resolve, reject } = Promise.withResolvers<Response>();
    // No closure made here may see `head` or `body`: the exchange (and its `onAbort`) lives as
    // long as the answer streams, and the request's text would live with it (a model step's
    // whole context, 9 KB a stream for a short turn; docs/performance.md).
    const exchange: Exchange = { method, signal, resolve, reject, gotBytes: false, onAbort: this.#abortOn(signal) };
    this.#exchange = exchange;
    signal?.addEventListener("abort", exchange.onAbort, { once: true });
    this.#write(typeof body === "string" ? head + body : body ? Buffer.concat([Buffer.from(head), body]) : head, bytes);
    return promise;
  }

  #abortOn(signal: AbortSignal | undefined): () => void {
    return () => this.#fail(signal!.reason);
  }

  /** Writes `data` (`bytes` long); what the socket does not take now goes when it drains. */
  #write(data: string | Buffer, bytes: number): void {
    const written = this.#socket.write(data);
    if (written < 0) return this.#fail(this.#exchange?.gotBytes ? new TypeError("fetch failed: the connection closed") : new StaleConnection("closed"));
    if (written < bytes) this.#unwritten = (typeof data === "string" ? Buffer.from(data) : data).subarray(written);
  }

  drained(): void {
    const rest = this.#unwritten;
    this.#unwritten = undefined;
    if (rest) this.#write(rest, rest.byteLength);
  }

  received(data: Buffer): void {
    const exchange = this.#exchange;
    if (!exchange) return this.#destroy(); // nothing was asked: a server that talks out of turn is not reused
    exchange.gotBytes = true;
    try {
      let rest: Buffer | undefined = data;
      if (!this.#framing) {
        rest = this.#readHead(data, exchange);
        if (!this.#framing) return; // the head is not all in yet
      }
      if (rest?.byteLength) rest = this.#framing.feed(rest, exchange.body!);
      if (this.#framing.done) this.#finish(exchange, rest);
    } catch (e) {
      this.#fail(e);
    }
  }

  /** Reads the answer's head out of `data` (after any 1xx heads); what follows it is returned. */
  #readHead(data: Buffer, exchange: Exchange): Buffer | undefined {
    let bytes = this.#head ? Buffer.concat([this.#head, data]) : data;
    this.#head = undefined;
    for (;;) {
      const end = bytes.indexOf("\r\n\r\n");
      if (end < 0) {
        if (bytes.byteLength > 64 * 1024) throw new TypeError("fetch failed: the answer's headers are too long");
        if (bytes.byteLength) this.#head = bytes;
        return undefined;
      }
      const lines = bytes.toString("latin1", 0, end).split("\r\n");
      const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]!);
      if (!status) throw new TypeError(`fetch failed: not an HTTP/1.1 answer (${JSON.stringify(lines[0]!.slice(0, 40))})`);
      const code = Number(status[2]);
      bytes = bytes.subarray(end + 4);
      if (code < 200) continue; // 100 Continue, 103 Early Hints: the answer follows
      this.#answer(exchange, code, status[3] ?? "", status[1] === "1", lines);
      return bytes;
    }
  }

  /** The answer's head is in: the caller gets its `Response`, its body to come. */
  #answer(exchange: Exchange, code: number, statusText: string, http11: boolean, lines: string[]): void {
    const headers = new Headers();
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    const connection = headers.get("connection")?.toLowerCase() ?? "";
    this.#keepAlive = http11 ? !connection.includes("close") : connection.includes("keep-alive");
    const length = headers.get("content-length");
    const noBody = exchange.method === "HEAD" || code === 204 || code === 304;
    if (noBody) this.#framing = new Sized(0);
    else if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) this.#framing = new Chunked();
    else if (length !== null) this.#framing = new Sized(Number(length));
    else {
      this.#framing = new UntilClose();
      this.#keepAlive = false;
    }
    let stream: ReadableStream<Uint8Array> | null = null;
    if (noBody) exchange.body = NO_BODY;
    else {
      stream = new ReadableStream<Uint8Array>({
        start: (controller) => void (exchange.body = controller),
        cancel: () => this.#abandon(),
      });
      const encoding = headers.get("content-encoding")?.toLowerCase();
      if (encoding === "gzip" || encoding === "deflate") {
        stream = stream.pipeThrough(new DecompressionStream(encoding) as unknown as TransformStream<Uint8Array, Uint8Array>);
        headers.delete("content-encoding");
        headers.delete("content-length");
      }
    }
    exchange.resolve(new Response(stream, { status: code, statusText, headers }));
  }

  /** The answer's body is whole: the connection goes back to its origin's idle ones if it may. */
  #finish(exchange: Exchange, extra: Buffer | undefined): void {
    this.#release();
    this.#framing = undefined;
    if (exchange.body !== NO_BODY) exchange.body!.close();
    // an answer that came before the whole request was written (a 413, say) leaves the connection unusable
    if (!this.#keepAlive || extra?.byteLength || this.#unwritten || this.#closed) return this.#destroy();
    const list = idle.get(this.origin) ?? idle.set(this.origin, []).get(this.origin)!;
    if (list.length >= IDLE_PER_ORIGIN) return this.#destroy();
    list.push(this);
    this.#socket.timeout(IDLE_SECONDS);
    this.#socket.unref();
  }

  /** Idle for IDLE_SECONDS (the timeout is off while a request runs). */
  idledOut(): void {
    this.#destroy();
  }

  /** The other side closed, or the socket failed. */
  closed(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#forget();
    const exchange = this.#exchange;
    if (!exchange) return;
    if (this.#framing instanceof UntilClose) return this.#finish(exchange, undefined);
    if (!exchange.gotBytes) return this.#fail(new StaleConnection("closed before the answer", { cause: error }));
    this.#fail(new TypeError("fetch failed: the connection closed before the answer was complete", { cause: error }));
  }

  /** The caller let go of the body before its end: the rest is not read, and the connection not reused. */
  #abandon(): void {
    this.#release();
    this.#destroy();
  }

  #fail(error: unknown): void {
    const exchange = this.#release();
    this.#destroy();
    if (!exchange) return;
    if (!exchange.body) exchange.reject(error);
    else if (exchange.body !== NO_BODY) {
      try {
        exchange.body.error(error);
      } catch {} // already closed
    }
  }

  /** The exchange under way, no longer this connection's nor listening to its caller's signal. */
  #release(): Exchange | undefined {
    const exchange = this.#exchange;
    this.#exchange = undefined;
    exchange?.signal?.removeEventListener("abort", exchange.onAbort);
    return exchange;
  }

  #destroy(): void {
    this.#closed = true;
    this.#forget();
    this.#socket?.terminate();
  }

  #forget(): void {
    const list = idle.get(this.origin);
    const at = list?.indexOf(this) ?? -1;
    if (at >= 0) list!.splice(at, 1);
  }
}

/** As `fetch` fails to connect: a `TypeError` with the system's code (`ECONNREFUSED`, `ENOTFOUND`). */
const connectFailure = (e: unknown) => {
  const { code, message } = e as { code?: string; message?: string };
  return Object.assign(new TypeError(`${code ?? "fetch failed"}: ${message ?? String(e)}`, { cause: e }), { code });
};

const NO_BODY = {} as ReadableStreamDefaultController<Uint8Array>;
