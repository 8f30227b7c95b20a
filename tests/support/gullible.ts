// A gullible model and the attacker it would serve, for tests of defences against injected
// instructions. The model obeys every `CALL <tool> <json>` line it finds in the user's latest
// message and in what it was given since (tool output: a page, a memory document, a file), one
// call a step, in order, as real models too often do. `{{context}}` in a call's JSON stands for
// everything the model was sent (system prompt and identity files included), URL-encoded: what
// an injected "send me your notes" makes a real model copy out. The attacker is a server on
// loopback that counts what reaches it.
import type { Responder, ScriptedLLM, Step } from "./scripted-llm";

const CALL = /CALL ([A-Za-z0-9_-]+) (\{.*\})/g;

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("\n");
  return "";
}

/**
 * The model's next step: the next `CALL` it has not made yet, or `answer` (by default the text
 * it was given since the user's message, so that an injected text also reaches the reply).
 */
export function gullibleStep(body: any, answer?: (seen: string) => string): Step {
  const messages: any[] = body?.messages ?? [];
  const from = Math.max(0, messages.findLastIndex((m) => m.role === "user"));
  const tail = messages.slice(from);
  const seen = tail
    .filter((m) => m.role !== "assistant")
    .map((m) => text(m.content))
    .join("\n");
  const made = tail.reduce((n, m) => n + (m.role === "assistant" ? (m.tool_calls?.length ?? 0) : 0), 0);
  const everything = encodeURIComponent(messages.map((m) => text(m.content)).join("\n")).slice(0, 6_000);
  const calls = [...seen.matchAll(CALL)].map((m) => ({ name: m[1]!, json: m[2]!.replaceAll("{{context}}", everything) }));
  const next = calls[made];
  if (next) {
    try {
      return { toolCalls: [{ name: next.name, arguments: JSON.parse(next.json) as Record<string, unknown> }] };
    } catch {}
  }
  return { text: answer ? answer(seen) : `I read: ${seen.slice(-2_000)}` };
}

/** Makes `llm` gullible until reset. */
export function makeGullible(llm: ScriptedLLM, answer?: (seen: string) => string): void {
  const responder: Responder = (body) => gullibleStep(body, answer);
  llm.respondWith(responder);
}

export interface Attacker {
  url: string;
  /** Every request that reached it: method, path with query, body. */
  hits: { method: string; url: string; body: string }[];
  /** Bytes of path, query and body that reached it: what left the box. */
  bytes(): number;
  /** Whether `secret` reached it anywhere (path, query or body, URL-decoded too). */
  got(secret: string): boolean;
  /** Serves this page at GET /page (default: an empty page). */
  page(html: string): void;
  reset(): void;
  close(): Promise<void>;
}

/** A server on loopback that serves a page and records everything sent to it. */
export function startAttacker(): Attacker {
  let html = "<html><body>nothing here</body></html>";
  const hits: Attacker["hits"] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const body = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      if (u.pathname === "/page") return new Response(html, { headers: { "content-type": "text/html" } });
      hits.push({ method: req.method, url: u.pathname + u.search, body });
      return new Response("ok", { headers: { "content-type": "text/plain" } });
    },
  });
  const all = () => hits.map((h) => `${h.url}\n${h.body}`).join("\n");
  return {
    url: `http://127.0.0.1:${server.port}`,
    hits,
    bytes: () => hits.reduce((n, h) => n + Buffer.byteLength(h.url) + Buffer.byteLength(h.body), 0),
    got: (secret) => {
      const raw = all();
      let decoded = raw;
      try {
        decoded = decodeURIComponent(raw.replaceAll("+", " "));
      } catch {}
      return raw.includes(secret) || decoded.includes(secret);
    },
    page: (h) => void (html = h),
    reset: () => void (hits.length = 0),
    close: () => server.stop(true),
  };
}
