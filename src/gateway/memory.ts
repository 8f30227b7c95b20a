import { Type, type Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { authedJson, requireAuth } from "../http/auth";
import { isoFromMs } from "../http/time";
import type { Services } from "../services";
import { InvalidRequest, NotFound } from "../errors";
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, type MemoryEntry } from "../memory/service";
import { MemoryDocument, MemoryFile, MemoryHits, MemoryTree } from "./memory-wire";

export const WriteBody = Type.Object({
  path: Type.String({ error: "is required and must be a string.", code: "invalid_path" }),
  content: Type.String({ error: "is required and must be a string.", code: "invalid_content" }),
}, { additionalProperties: true });
export type WriteBody = Static<typeof WriteBody>;

/** The workspace memory endpoints: search, tree, read, write and delete of the caller's own documents. */
export function memoryRoutes(s: Services) {
  return new Elysia({ name: "memory" })
    .use(requireAuth(s))
    .get("/api/memory", async ({ request, principal }) => {
      const params = new URL(request.url).searchParams;
      const q = single(params, "q");
      if (q === null || !q.trim()) throw new InvalidRequest("`q` is required: the text to search for.", "invalid_query");
      const limit = parseLimit(single(params, "limit"));
      const results = await s.memory.search(principal.userId, q, limit);
      return { results: results.map(({ path, snippet, score }) => ({ path, snippet, score })) };
    }, { response: MemoryHits })
    .delete("/api/memory", async ({ request, principal }) => {
      const path = single(new URL(request.url).searchParams, "path");
      if (path === null) throw new InvalidRequest("`path` is required: the document to delete.", "invalid_path");
      if (!(await s.memory.delete(principal.userId, path))) throw new NotFound(`No memory document at ${path}.`);
      return new Response(null, { status: 204 });
    })
    .get("/api/memory/tree", async ({ principal }) => ({ documents: (await s.memory.tree(principal.userId)).map(entry) }), { response: MemoryTree })
    .get("/api/memory/read", async ({ request, principal }) => {
      const path = single(new URL(request.url).searchParams, "path");
      if (path === null) throw new InvalidRequest("`path` is required.", "invalid_path");
      const doc = await s.memory.read(principal.userId, path);
      if (!doc) throw new NotFound(`No memory document at ${path}.`);
      // tainted: the agent wrote it after reading untrusted content; the agent reads it back as untrusted
      return { path: doc.path, content: doc.content, created_at: isoFromMs(doc.createdAt), updated_at: isoFromMs(doc.updatedAt), tainted: doc.tainted };
    }, { response: MemoryFile })
    .post(
      "/api/memory/write",
      async ({ body, principal }) => entry(await s.memory.write(principal.userId, body.path, body.content)),
      { parse: authedJson(s), body: WriteBody, response: MemoryDocument },
    );
}

const entry = (e: MemoryEntry): MemoryDocument => ({ path: e.path, size: e.size, updated_at: isoFromMs(e.updatedAt) });

/** A query parameter given at most once (a repeated one is ambiguous: 400). */
function single(params: URLSearchParams, name: "q" | "limit" | "path"): string | null {
  const all = params.getAll(name);
  if (all.length > 1) throw new InvalidRequest(`\`${name}\` is given more than once.`, name === "q" ? "invalid_query" : `invalid_${name}`);
  return all[0] ?? null;
}

function parseLimit(raw: string | null): number {
  if (raw === null || raw === "") return DEFAULT_SEARCH_LIMIT;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_SEARCH_LIMIT) {
    throw new InvalidRequest(`\`limit\` must be an integer from 1 to ${MAX_SEARCH_LIMIT}.`, "invalid_limit");
  }
  return Number(raw);
}
