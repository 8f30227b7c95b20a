import { Type } from "@sinclair/typebox";
import { defineTool, type Tool } from "../tool";
import { decodeText, readLimited } from "./http-read";
import { destinationHost, WEB_FETCH_MAX_BYTES, WEB_FETCH_TIMEOUT_MS } from "./web-fetch";

export interface WebSearchOptions {
  timeoutMs?: number;
}

type SearxResult = { title?: unknown; url?: unknown; content?: unknown };

const oneLine = (v: unknown) => (typeof v === "string" ? v.replace(/\s+/g, " ").trim() : "");

/**
 * Web search through the operator's SearXNG instance (its JSON API). The instance is the
 * operator's choice, so it is not held to web_fetch's private-address rule.
 */
export function webSearchTool(searchUrl: string, opts: WebSearchOptions = {}): Tool {
  const timeoutMs = opts.timeoutMs ?? WEB_FETCH_TIMEOUT_MS;
  return defineTool({
    name: "web_search",
    repeatable: true,
    description:
      "Search the web. Returns up to `limit` results (default 5, at most 20), each as a title, its URL and a short snippet. " +
      "Use web_fetch to read a result.",
    parameters: Type.Object({
      query: Type.String({ minLength: 1, maxLength: 500, description: "What to search for" }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: "How many results (default 5)" })),
    }),
    // results are anyone's text; the query goes to the search service (and on to the engines it asks)
    untrusted: true,
    egress: () => destinationHost(searchUrl),
    async execute({ query, limit = 5 }, ctx) {
      const url = `${searchUrl.replace(/\/+$/, "")}/search?q=${encodeURIComponent(query)}&format=json`;
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let body: string;
      try {
        const res = await fetch(url, { signal, headers: { accept: "application/json" } });
        if (res.status === 403) {
          await res.body?.cancel().catch(() => {});
          throw new Error("the search service refused JSON (403): SearXNG needs `json` in search.formats of its settings.yml");
        }
        if (!res.ok) {
          await res.body?.cancel().catch(() => {});
          throw new Error(`the search service answered ${res.status}`);
        }
        body = decodeText((await readLimited(res, WEB_FETCH_MAX_BYTES)).bytes);
      } catch (e) {
        if (signal.aborted && !ctx.signal.aborted) throw new Error(`the search service did not answer within ${timeoutMs / 1000} s`);
        throw e;
      }
      let results: SearxResult[];
      try {
        const parsed = JSON.parse(body) as { results?: unknown };
        if (!Array.isArray(parsed.results)) throw new Error("no results array");
        results = parsed.results as SearxResult[];
      } catch {
        throw new Error("the search service did not answer with SearXNG JSON");
      }
      const lines = results
        .filter((r) => oneLine(r?.url))
        .slice(0, limit)
        .map((r, i) => {
          const snippet = oneLine(r.content);
          return `${i + 1}. ${oneLine(r.title) || "(no title)"}\n   ${oneLine(r.url)}${snippet ? `\n   ${snippet}` : ""}`;
        });
      if (!lines.length) return `No results for "${query}".`;
      return `Results for "${query}":\n\n${lines.join("\n\n")}`;
    },
  });
}
