// Scripted OpenAI-compatible LLM server on loopback for tests, e2e and the benchmark.
// Real HTTP (Bun.serve), records every request, answers from a FIFO of scripted steps.

export type ToolCallSpec = { name: string; arguments: unknown; id?: string };
export type Step =
  /** `holdUntil`: the stream stops after its first text chunk until the promise settles (a model mid-answer, held open). */
  | { text: string; chunks?: number; usage?: Usage; delayMs?: number; chunkDelayMs?: number; holdUntil?: Promise<unknown> }
  | { toolCalls: ToolCallSpec[]; text?: string; delayMs?: number; chunkDelayMs?: number }
  | { error: { status: number; message?: string; code?: string; type?: string; headers?: Record<string, string>; body?: string }; delayMs?: number }
  | { dropAfterChunks: number; text: string }
  /** Sends the first text chunks, then ends the response cleanly, with no finish reason and no [DONE]. */
  | { endAfterChunks: number; text: string }
  | { hang: true }
  /** Answers with exactly this body: a provider's recorded wire shape (tests/support/provider-wires.ts). */
  | { raw: string; contentType?: string; frameDelayMs?: number };
/** A chunk's `usage` as providers send it: OpenAI's details, and OpenRouter's `cost` (USD). */
export type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
  cost?: number;
};
export type RecordedRequest = { method: string; path: string; headers: Record<string, string>; body: any; at: number };
export type Responder = (body: any, req: RecordedRequest) => Step | Promise<Step>;
export interface ScriptedLLM {
  url: string;
  port: number;
  requests: RecordedRequest[];
  chatRequests(): RecordedRequest[];
  lastChat(): any;
  enqueue(...steps: Step[]): void;
  respondWith(fn: Responder | null): void;
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Text chunks sent so far in streamed answers (every request counts). */
  textChunksSent(): number;
  /** Resolves once `n` text chunks have been sent in all (readiness for "mid-answer" tests). */
  waitForTextChunks(n: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

const CHAT_PATH = "/v1/chat/completions";
const encoder = new TextEncoder();

const json = (data: unknown, status = 200) => Response.json(data, { status });
const errorBody = (message: string, type: string, code: string | number | null) => ({ error: { message, type, code } });
const countWords = (s: string) => s.split(/\s+/).filter(Boolean).length;

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join(" ");
  return "";
}

/** Splits text into `n` roughly equal pieces, or by default one piece per word (whitespace kept). */
function splitText(text: string, n?: number): string[] {
  if (!text) return [];
  if (!n || n < 1) return text.split(/(?<=\s)(?=\S)/);
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Deterministic unit-length 8-dim vector derived from the input string. */
function embed(input: string): number[] {
  let x = fnv1a(input) || 1;
  const v: number[] = [];
  for (let i = 0; i < 8; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5; x >>>= 0; // xorshift32
    v.push(x / 0xffffffff - 0.5);
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((c) => Math.fround(c / norm));
}

/** The default answer: "You said: " and the last user message. */
export function echoStep(body: any): Step {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const lastUser = [...messages].reverse().find((m) => m?.role === "user");
  return { text: `You said: ${contentText(lastUser?.content)}` };
}

/**
 * A stand-in tokenizer: 3 characters a token for every message's text and tool calls, 4 per
 * message, and the tool definitions' JSON. Stricter than the service's own estimate, so that
 * tests see its calibration at work.
 */
export function charTokens(body: any): number {
  let chars = 0;
  let n = 0;
  for (const m of body?.messages ?? []) {
    n += 4;
    chars += contentText(m?.content).length;
    for (const c of m?.tool_calls ?? []) chars += String(c?.function?.name ?? "").length + String(c?.function?.arguments ?? "").length + 12;
  }
  for (const t of body?.tools ?? []) chars += JSON.stringify(t).length + 24;
  return n + Math.ceil(chars / 3);
}

export interface ScriptedOptions {
  port?: number;
  hostname?: string;
  apiKey?: string;
  model?: string;
  record?: boolean;
  /** Reports `prompt_tokens` with this count instead of counting words. */
  countTokens?: (body: any) => number;
  /** Refuses a prompt counted longer than this, with OpenAI's `context_length_exceeded` (400). */
  contextWindow?: number;
  /** Answers requests of its own first (a server's own API beside the OpenAI one: support/llm-servers.ts); undefined passes on. */
  routes?: (req: Request, url: URL, body: any) => Response | undefined | Promise<Response | undefined>;
}

/** A count that tests can wait on (readiness, not a sleep). */
function counter(what: string) {
  let value = 0;
  const waiters = new Set<{ n: number; done: () => void }>();
  return {
    get value() {
      return value;
    },
    add(n: number) {
      value += n;
      for (const w of waiters) if (value >= w.n) w.done();
    },
    reset() {
      value = 0;
    },
    until(n: number, timeoutMs = 5000): Promise<void> {
      if (value >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = { n, done: () => (clearTimeout(timer), waiters.delete(w), resolve()) };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`expected ${n} ${what}, got ${value} after ${timeoutMs}ms`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
  };
}

export function startScriptedLLM(opts: ScriptedOptions = {}): Promise<ScriptedLLM> {
  const countTokens = opts.countTokens ?? charTokens;
  const record = opts.record !== false;
  const modelId = opts.model ?? "scripted-model";
  const requests: RecordedRequest[] = [];
  let queue: Step[] = [];
  let responder: Responder | null = null;
  const chats = counter("chat requests");
  let lastChatBody: any;
  let seq = 0;
  const chunks = counter("text chunks");
  // Things to release on close(): pending sleeps and hangs.
  const pending = new Set<() => void>();

  /** Resolves after `ms`, or early (false) when the signal aborts or the server closes. */
  function sleep(ms: number | undefined, signal: AbortSignal): Promise<boolean> {
    if (!ms || ms <= 0) return Promise.resolve(!signal.aborted);
    return wait(signal, ms);
  }
  function wait(signal: AbortSignal, ms?: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        pending.delete(onAbort);
        resolve(ok);
      };
      const onAbort = () => finish(false);
      const timer = ms === undefined ? undefined : setTimeout(() => finish(true), ms);
      signal.addEventListener("abort", onAbort);
      pending.add(onAbort);
    });
  }

  /** Resolves when `hold` settles (true), or early (false) when the signal aborts or the server closes. */
  function heldUntil(hold: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const finish = (ok: boolean) => {
        signal.removeEventListener("abort", onAbort);
        pending.delete(onAbort);
        resolve(ok);
      };
      const onAbort = () => finish(false);
      signal.addEventListener("abort", onAbort);
      pending.add(onAbort);
      hold.then(() => finish(!signal.aborted), () => finish(!signal.aborted));
    });
  }

  async function nextStep(body: any, rec: RecordedRequest): Promise<Step> {
    // a model with a context window refuses a longer prompt before anything else, as OpenAI does
    if (opts.contextWindow !== undefined && countTokens(body) > opts.contextWindow) {
      const message = `This model's maximum context length is ${opts.contextWindow} tokens. However, your messages resulted in ${countTokens(body)} tokens. Please reduce the length of the messages.`;
      return { error: { status: 400, message, code: "context_length_exceeded" } };
    }
    if (queue.length) return queue.shift()!;
    if (responder) return responder(body, rec);
    return echoStep(body);
  }

  async function chat(body: any, rec: RecordedRequest, signal: AbortSignal): Promise<Response> {
    const step = await nextStep(body, rec);
    if ("hang" in step) {
      await wait(signal);
      return new Response(null, { status: 499 });
    }
    if ("delayMs" in step && !(await sleep(step.delayMs, signal))) return new Response(null, { status: 499 });
    if ("raw" in step) {
      const headers = { "content-type": step.contentType ?? "text/event-stream" };
      if (!step.frameDelayMs) return new Response(step.raw, { headers });
      // one SSE frame at a time, for tests that watch an answer while it streams
      const frames = step.raw.split(/(?<=\n\n)/);
      return new Response(
        new ReadableStream({
          async pull(controller) {
            if (!frames.length || !(await sleep(step.frameDelayMs, signal))) return controller.close();
            controller.enqueue(encoder.encode(frames.shift()!));
          },
        }),
        { headers },
      );
    }
    if ("error" in step) {
      const { status, message = `scripted error ${status}`, headers = {}, body: raw, code, type } = step.error;
      if (raw !== undefined) return new Response(raw, { status, headers: { "content-type": "text/html", ...headers } });
      const res = json(errorBody(message, type ?? (status >= 500 ? "server_error" : "invalid_request_error"), code ?? status), status);
      for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
      return res;
    }

    const id = `chatcmpl-${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body?.model ?? modelId;
    const text = step.text ?? "";
    const calls = ("toolCalls" in step ? step.toolCalls : []).map((c, i) => ({
      id: c.id ?? `call_${seq}_${i}`,
      type: "function" as const,
      function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const finish_reason = calls.length ? "tool_calls" : "stop";
    const promptTokens = opts.countTokens ? countTokens(body) : Math.max(1, (body?.messages ?? []).reduce((n: number, m: any) => n + countWords(contentText(m?.content)) + 1, 0));
    const completionTokens = countWords(text) + calls.reduce((n, c) => n + 1 + countWords(c.function.arguments.replace(/\W+/g, " ")), 0);
    const u = ("usage" in step && step.usage) || { prompt_tokens: promptTokens, completion_tokens: completionTokens };
    const usage = { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };

    if (!body?.stream) {
      if ("dropAfterChunks" in step || "endAfterChunks" in step) return dropResponse([]);
      const message = { role: "assistant", content: text || (calls.length ? null : ""), ...(calls.length ? { tool_calls: calls } : {}) };
      return json({ id, object: "chat.completion", created, model, choices: [{ index: 0, message, logprobs: null, finish_reason }], usage });
    }

    // each frame is written when it is sent: a slow answer of many chunks to many requests at
    // once (bench/streams.ts) would otherwise serialise every chunk of every answer up front
    const frame =
      (delta: object | null, finish: string | null = null) =>
      () =>
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: delta ?? {}, logprobs: null, finish_reason: finish }] })}\n\n`;
    const frames = [frame({ role: "assistant", content: "" })];
    const firstText = frames.length;
    for (const piece of splitText(text, "chunks" in step ? step.chunks : undefined)) frames.push(frame({ content: piece }));
    const textFrames = frames.length - firstText;
    const written = (fs: (() => string)[]) => fs.map((f) => f());
    if ("dropAfterChunks" in step) return dropResponse(written(frames.slice(0, step.dropAfterChunks + 1)));
    if ("endAfterChunks" in step) return new Response(written(frames.slice(0, step.endAfterChunks + 1)).join(""), { headers: { "content-type": "text/event-stream" } });
    calls.forEach((c, index) => {
      frames.push(frame({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] }));
      const args = c.function.arguments;
      const mid = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, mid), args.slice(mid)]) {
        if (part) frames.push(frame({ tool_calls: [{ index, function: { arguments: part } }] }));
      }
    });
    frames.push(frame({}, finish_reason));
    if (body.stream_options?.include_usage) {
      frames.push(() => `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`);
    }
    frames.push(() => "data: [DONE]\n\n");

    const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
    const chunkDelay = "chunkDelayMs" in step ? step.chunkDelayMs : 0;
    const hold = "holdUntil" in step ? step.holdUntil : undefined;
    if (!chunkDelay && !hold) {
      chunks.add(textFrames);
      return new Response(written(frames).join(""), { headers });
    }
    let i = 0;
    return new Response(
      new ReadableStream({
        async pull(controller) {
          if (i > 0 && !(await sleep(chunkDelay, signal))) return controller.close();
          if (hold && i === firstText + 1 && !(await heldUntil(hold, signal))) return controller.close();
          controller.enqueue(encoder.encode(frames[i++]!()));
          if (i - 1 >= firstText && i - 1 < firstText + textFrames) chunks.add(1);
          if (i >= frames.length) controller.close();
        },
      }),
      { headers },
    );
  }

  /** Sends `frames`, then errors the body stream so Bun tears the connection down mid-response. */
  function dropResponse(frames: string[]): Response {
    let i = 0;
    return new Response(
      new ReadableStream({
        async pull(controller) {
          if (i < frames.length) return controller.enqueue(encoder.encode(frames[i++]));
          // Bun discards unflushed bytes on error, so give the last frames time to reach the socket.
          await new Promise((r) => setTimeout(r, 20));
          controller.error(undefined); // an undefined reason resets the socket without Bun logging an error

        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  }

  function embeddings(body: any): Response {
    const raw = body?.input;
    const inputs: unknown[] = Array.isArray(raw) ? raw : [raw ?? ""];
    const base64 = body?.encoding_format === "base64";
    const data = inputs.map((input, index) => {
      const vec = embed(typeof input === "string" ? input : JSON.stringify(input));
      const embedding = base64 ? Buffer.from(new Float32Array(vec).buffer).toString("base64") : vec;
      return { object: "embedding", index, embedding };
    });
    const tokens = Math.max(1, inputs.reduce<number>((n, s) => n + countWords(String(s)), 0));
    return json({ object: "list", data, model: body?.model ?? modelId, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    idleTimeout: 0, // hang steps may outlive Bun's default 10s idle timeout
    async fetch(req) {
      const { pathname: path } = new URL(req.url);
      const text = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      let body: any = null;
      let badJson = false;
      if (text) {
        try { body = JSON.parse(text); } catch { body = text; badJson = true; }
      }
      const rec: RecordedRequest = { method: req.method, path, headers: Object.fromEntries(req.headers), body, at: Date.now() };
      if (record) requests.push(rec);
      const isChat = req.method === "POST" && path === CHAT_PATH;
      if (isChat) {
        chats.add(1);
        lastChatBody = body;
      }

      if (opts.apiKey && req.headers.get("authorization") !== `Bearer ${opts.apiKey}`) {
        return json(errorBody("Incorrect API key provided", "invalid_request_error", "invalid_api_key"), 401);
      }
      if (badJson) return json(errorBody("Request body is not valid JSON", "invalid_request_error", null), 400);
      const own = await opts.routes?.(req, new URL(req.url), body);
      if (own) return own;
      // the last chat request as it came (the benchmark replays it to time the LLM alone)
      if (req.method === "GET" && path === "/v1/_last_chat") return json(lastChatBody ?? null);
      if (req.method === "GET" && path === "/v1/models") {
        return json({ object: "list", data: [{ id: modelId, object: "model", created: 0, owned_by: "scripted" }] });
      }
      if (isChat) return chat(body, rec, req.signal);
      if (req.method === "POST" && path === "/v1/embeddings") return embeddings(body);
      return json(errorBody(`Unknown route ${req.method} ${path}`, "invalid_request_error", "not_found"), 404);
    },
  });

  const port = server.port!;
  const llm: ScriptedLLM = {
    url: `http://${server.hostname}:${port}/v1`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => r.method === "POST" && r.path === CHAT_PATH),
    lastChat: () => lastChatBody,
    enqueue: (...steps) => void queue.push(...steps),
    respondWith: (fn) => void (responder = fn),
    waitForRequests: (n, timeoutMs) => chats.until(n, timeoutMs),
    textChunksSent: () => chunks.value,
    waitForTextChunks: (n, timeoutMs) => chunks.until(n, timeoutMs),
    reset() {
      queue = [];
      chunks.reset();
      responder = null;
      requests.length = 0;
      chats.reset();
      lastChatBody = undefined;
    },
    async close() {
      for (const release of [...pending]) release();
      await server.stop(true);
    },
  };
  return Promise.resolve(llm);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const llm = await startScriptedLLM({ port: Number(flag("--port") ?? 0), record: !args.includes("--no-record") });
  const answer = flag("--answer");
  // --slow TEXT=MS: a request whose last message contains TEXT is answered after MS (a model at work)
  const [slowText, slowMs] = (flag("--slow") ?? "").split("=");
  // --chunk-delay MS: streamed answers send a chunk every MS (a model at work: 50 is 20 tokens a second)
  const chunkDelayMs = Number(flag("--chunk-delay") ?? 0);
  if (answer !== undefined || slowText || chunkDelayMs) {
    llm.respondWith((body) => {
      const step = { ...(answer !== undefined ? { text: answer } : echoStep(body)), ...(chunkDelayMs ? { chunkDelayMs } : {}) };
      const last = JSON.stringify(body?.messages?.at(-1)?.content ?? "");
      return slowText && last.includes(slowText) ? { ...step, delayMs: Number(slowMs) } : step;
    });
  }
  console.log(`scripted-llm listening on ${llm.url}`);
  const stop = () => llm.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
