import { KeyedLock } from "../keyed-lock";
import { InvalidRequest } from "../errors";
import type { Llm } from "../llm/types";
import { noLog, type Logger } from "../log";
import type { Db, Locks } from "../store/db";
import {
  chunksWithoutVectors,
  chunkTexts,
  deleteDocument,
  dimsOfModel,
  ensureVectorTable,
  listDocuments,
  readDocument,
  readDocuments,
  searchText,
  searchVectors,
  snippets,
  storeVectors,
  taintedPaths,
  vectorDims,
  writeDocuments,
  type ChunkHit,
  type DocumentWrite,
  type MemoryDocument,
  type MemoryEntry,
} from "../store/memory";
import { chunkText } from "./chunk";
import { DEFAULT_IDENTITY, IDENTITY_PATHS } from "./identity";
import { checkPath } from "./paths";
import { matchLevels, queryPhrases, type MatchLevel } from "./query";

export type { MemoryDocument, MemoryEntry };

/** Largest document, in UTF-8 bytes. */
export const MAX_CONTENT_BYTES = 1024 * 1024;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 100;
/** Longest search query, in characters. */
export const MAX_QUERY_CHARS = 1000;
/** Reciprocal rank fusion constant (the usual 60). */
const RRF_K = 60;
const EMBED_BATCH = 64;
/** How long one embedding request may take when writing; a search waits less. */
const EMBED_TIMEOUT_MS = 60_000;
const QUERY_EMBED_TIMEOUT_MS = 15_000;

export interface SearchResult {
  path: string;
  snippet: string;
  /**
   * Higher is better. Full-text mode: how many of the query's words the best chunk has,
   * plus its BM25 relevance squashed into [0, 1). Hybrid mode: the reciprocal rank fusion
   * score of the full-text and the vector ranking.
   */
  score: number;
  /** The document was written in a turn that read untrusted content. */
  tainted: boolean;
}

export interface MemoryOptions {
  db: Db;
  /** Users' locks: of this process (the default), or shared by every process on the database. */
  locks?: Locks;
  /** A user's documents were written or deleted here (other processes on the database forget what they read of them). */
  written?: (userId: string) => void;
  /** Gives chunk vectors when it has an embedding model; without one search is full-text. */
  llm?: Pick<Llm, "embeddingModel" | "embed">;
  log?: Logger;
}

/**
 * Workspace memory: path-addressed text documents per user, chunked and indexed for
 * full-text search (FTS5, BM25), plus vector search when an embedding model is configured;
 * both rankings are fused with reciprocal rank fusion. Every operation is scoped to one user.
 */
export class MemoryService {
  readonly mode: "full-text" | "hybrid";
  readonly embeddingModel: string | null;
  readonly #db: Db;
  readonly #llm: MemoryOptions["llm"];
  readonly #log: Logger;
  /** A user's writes go one at a time, so seeding the identity never races a write. */
  readonly #locks: Locks;
  readonly #written: (userId: string) => void;
  /** Users whose identity documents were checked (and seeded if needed) in this process. */
  readonly #seeded = new Set<string>();
  /** Each user's identity documents as last read: every turn's system prompt needs them; writes here forget them. */
  readonly #identity = new Map<string, MemoryDocument[]>();
  /** Writes per user, so that a read that a write overtook is not kept. */
  readonly #writes = new Map<string, number>();
  readonly #stop = new AbortController();
  #dims: Promise<Set<number>> | undefined;
  /** The current embedding model's dimensions, once it has answered. */
  #modelDims: number | undefined;

  constructor(opts: MemoryOptions) {
    this.#db = opts.db;
    this.#locks = opts.locks ?? new KeyedLock();
    this.#written = opts.written ?? (() => {});
    this.#llm = opts.llm?.embeddingModel ? opts.llm : undefined;
    this.#log = opts.log ?? noLog;
    this.embeddingModel = this.#llm?.embeddingModel ?? null;
    this.mode = this.#llm ? "hybrid" : "full-text";
  }

  /**
   * Creates or overwrites a document. An embedding failure is logged; the write still happens.
   * `tainted`: the agent writes it in a turn that read untrusted content (read back as untrusted);
   * a write by the user (the web UI, the API) makes it the user's own again.
   */
  async write(userId: string, path: string, content: unknown, opts: { tainted?: boolean } = {}): Promise<MemoryEntry> {
    checkPath(path);
    if (typeof content !== "string") throw new InvalidRequest("`content` must be a string.", "invalid_content");
    if (Buffer.byteLength(content, "utf8") > MAX_CONTENT_BYTES) {
      throw new InvalidRequest(`\`content\` is larger than ${MAX_CONTENT_BYTES / 1024 / 1024} MiB.`, "content_too_large");
    }
    await this.#ensureSeeded(userId);
    const doc = { ...(await this.#prepare(path, content, userId)), tainted: opts.tainted === true };
    const now = Date.now();
    await this.#locked(userId, async () => {
      this.#changed(userId);
      await writeDocuments(this.#db, userId, [doc], [...(await this.#vectorDims())], now);
      this.#changed(userId);
    });
    this.#written(userId);
    return { path, size: Buffer.byteLength(content, "utf8"), updatedAt: now };
  }

  async read(userId: string, path: string): Promise<MemoryDocument | undefined> {
    checkPath(path);
    await this.#ensureSeeded(userId);
    return readDocument(this.#db, userId, path);
  }

  /** Every document of the user, sorted by path. */
  async tree(userId: string): Promise<MemoryEntry[]> {
    await this.#ensureSeeded(userId);
    return listDocuments(this.#db, userId);
  }

  /** Deletes a document and everything indexed of it; false when there was none. */
  async delete(userId: string, path: string): Promise<boolean> {
    checkPath(path);
    await this.#ensureSeeded(userId);
    return this.#locked(userId, async () => {
      this.#changed(userId);
      const deleted = await deleteDocument(this.#db, userId, path, [...(await this.#vectorDims())]);
      this.#changed(userId);
      this.#written(userId);
      return deleted;
    });
  }

  /**
   * The best matching documents of the user, one result per document (its best chunk).
   * Free text only: FTS5 syntax in the query is taken literally.
   */
  async search(userId: string, query: unknown, limit: number = DEFAULT_SEARCH_LIMIT): Promise<SearchResult[]> {
    if (typeof query !== "string" || !query.trim()) throw new InvalidRequest("The search query is empty.", "invalid_query");
    if (query.length > MAX_QUERY_CHARS) {
      throw new InvalidRequest(`The search query is longer than ${MAX_QUERY_CHARS} characters.`, "invalid_query");
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw new InvalidRequest(`The limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}.`, "invalid_limit");
    }
    await this.#ensureSeeded(userId);
    const phrases = queryPhrases(query);
    const candidates = Math.min(limit * 4, 200);
    const [text, vector] = await Promise.all([
      this.#textHits(userId, matchLevels(phrases), candidates, limit),
      this.#vectorHits(userId, query, candidates),
    ]);

    let ranked: { chunkId: number; path: string; score: number }[];
    if (this.mode === "hybrid") {
      const fused = new Map<number, { chunkId: number; path: string; score: number }>();
      for (const list of [text, vector]) {
        list.forEach((h, i) => {
          const entry = fused.get(h.chunkId) ?? { chunkId: h.chunkId, path: h.path, score: 0 };
          entry.score += 1 / (RRF_K + i + 1);
          fused.set(h.chunkId, entry);
        });
      }
      ranked = [...fused.values()].sort((a, b) => b.score - a.score);
    } else {
      ranked = text.map((h) => ({ ...h, score: h.words + -h.score / (1 + -h.score) }));
    }

    const best: typeof ranked = [];
    const seen = new Set<string>();
    for (const h of ranked) {
      if (seen.has(h.path)) continue;
      seen.add(h.path);
      best.push(h);
      if (best.length === limit) break;
    }
    const ids = best.map((h) => h.chunkId);
    const snips = phrases.length ? await snippets(this.#db, phrases.join(" OR "), ids) : new Map<number, string>();
    const missing = ids.filter((id) => !snips.has(id));
    const texts = await chunkTexts(this.#db, missing);
    const tainted = await taintedPaths(this.#db, userId, best.map((h) => h.path));
    return best.map((h) => ({
      path: h.path,
      snippet: snips.has(h.chunkId) ? flat(snips.get(h.chunkId)!) : excerpt(flat(texts.get(h.chunkId) ?? "")),
      score: Number(h.score.toPrecision(6)),
      tainted: tainted.has(h.path),
    }));
  }

  /** The user's identity documents; seeds the defaults when the user has none of them. */
  async identity(userId: string): Promise<MemoryDocument[]> {
    const known = this.#identity.get(userId);
    if (known) return known;
    const writes = this.#writes.get(userId) ?? 0;
    let docs = await readDocuments(this.#db, userId, [...IDENTITY_PATHS]);
    if (!docs.length) docs = await this.#seed(userId);
    this.#seeded.add(userId);
    if ((this.#writes.get(userId) ?? 0) === writes) this.#identity.set(userId, docs);
    return docs;
  }

  /** Forgets what was read of a user's memory (it changed behind this service: the user was deleted). */
  forget(userId: string): void {
    this.#changed(userId);
    this.#seeded.delete(userId);
  }

  #changed(userId: string): void {
    this.#writes.set(userId, (this.#writes.get(userId) ?? 0) + 1);
    this.#identity.delete(userId);
  }

  /** Seeds the default identity documents unless the user has any of them (onboarding). */
  async seedIdentity(userId: string): Promise<void> {
    await this.identity(userId);
  }

  /**
   * Gives vectors to chunks that have none from the current embedding model (written before
   * it was configured, or while the endpoint failed). Runs in the background from `start`.
   */
  async fillVectors(): Promise<number> {
    const llm = this.#llm;
    if (!llm) return 0;
    let after = 0;
    let filled = 0;
    // once the model's dimensions are known, only chunks without its vectors are read
    this.#modelDims ??= await dimsOfModel(this.#db, llm.embeddingModel!);
    for (;;) {
      const rows = await chunksWithoutVectors(this.#db, llm.embeddingModel!, this.#modelDims, after, EMBED_BATCH);
      if (!rows.length || this.#stop.signal.aborted) return filled;
      const vectors = await this.#embed(rows.map((r) => r.text));
      await storeVectors(this.#db, llm.embeddingModel!, rows.map((r, i) => ({ chunkId: r.id, embedding: vectors[i]! })));
      after = rows.at(-1)!.id;
      filled += rows.length;
    }
  }

  /** Starts the background work: filling in missing vectors when an embedding model is set. */
  start(): void {
    if (!this.#llm) return;
    this.fillVectors().then(
      (n) => n && this.#log.info(`memory: added vectors to ${n} chunk(s) written without them`, { chunks: n }),
      (e) => this.#stop.signal.aborted || this.#log.error("memory: filling in vectors stopped", { error: (e as Error).message }),
    );
  }

  stop(): void {
    this.#stop.abort();
  }

  async #ensureSeeded(userId: string): Promise<void> {
    if (!this.#seeded.has(userId)) await this.identity(userId);
  }

  async #seed(userId: string): Promise<MemoryDocument[]> {
    const docs = await Promise.all(IDENTITY_PATHS.map((path) => this.#prepare(path, DEFAULT_IDENTITY[path], userId)));
    return this.#locked(userId, async () => {
      const existing = await readDocuments(this.#db, userId, [...IDENTITY_PATHS]);
      if (existing.length) return existing;
      await writeDocuments(this.#db, userId, docs, [...(await this.#vectorDims())]);
      return readDocuments(this.#db, userId, [...IDENTITY_PATHS]);
    });
  }

  #locked<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    return this.#locks.hold(userId, fn);
  }

  /** Chunks a document and, in hybrid mode, embeds the chunks (a failure only costs the vectors). */
  async #prepare(path: string, content: string, userId: string): Promise<DocumentWrite> {
    const chunks = chunkText(content);
    if (!this.#llm || !chunks.length) return { path, content, chunks };
    try {
      const embeddings = await this.#embed(chunks);
      return { path, content, chunks, vectors: { model: this.#llm.embeddingModel!, embeddings } };
    } catch (e) {
      this.#log.warn(`memory: embedding ${path} of user ${userId} failed, stored without vectors (full-text search still finds it)`, { path, user_id: userId, error: (e as Error).message });
      return { path, content, chunks };
    }
  }

  /** Embeds in batches; checks the vectors and makes sure their table exists. */
  async #embed(texts: string[], timeoutMs = EMBED_TIMEOUT_MS): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) {
      const signal = AbortSignal.any([this.#stop.signal, AbortSignal.timeout(timeoutMs)]);
      out.push(...(await this.#llm!.embed(texts.slice(i, i + EMBED_BATCH), signal)));
    }
    const dims = out[0]?.length ?? 0;
    if (out.length !== texts.length || out.some((v) => v.length !== dims || !v.every(Number.isFinite))) {
      throw new Error("the embedding endpoint returned malformed vectors");
    }
    if (dims) await this.#ensureTable(dims);
    return out;
  }

  async #ensureTable(dims: number): Promise<void> {
    this.#modelDims = dims;
    const known = await this.#vectorDims();
    if (known.has(dims)) return;
    await ensureVectorTable(this.#db, dims);
    known.add(dims);
  }

  #vectorDims(): Promise<Set<number>> {
    this.#dims ??= vectorDims(this.#db).then((d) => new Set(d));
    return this.#dims;
  }

  /** Full-text hits, level by level (see matchLevels) until they span `limit` documents. */
  async #textHits(userId: string, levels: MatchLevel[], candidates: number, limit: number): Promise<(ChunkHit & { words: number })[]> {
    const hits: (ChunkHit & { words: number })[] = [];
    const seen = new Set<number>();
    const docs = new Set<string>();
    for (const level of levels) {
      // a looser level finds the stricter level's chunks again: ask for that many more
      for (const h of await searchText(this.#db, userId, level.match, candidates + seen.size)) {
        if (seen.has(h.chunkId)) continue;
        seen.add(h.chunkId);
        docs.add(h.path);
        hits.push({ ...h, words: level.words });
      }
      if (docs.size >= limit) break;
    }
    return hits;
  }

  async #vectorHits(userId: string, query: string, candidates: number): Promise<ChunkHit[]> {
    if (!this.#llm) return [];
    let vector: number[];
    try {
      [vector] = (await this.#embed([query], QUERY_EMBED_TIMEOUT_MS)) as [number[]];
    } catch (e) {
      this.#log.warn("memory: embedding a search query failed, searching full-text only", { error: (e as Error).message });
      return [];
    }
    if (!(await this.#vectorDims()).has(vector.length)) return [];
    return searchVectors(this.#db, userId, this.#llm.embeddingModel!, vector, candidates);
  }
}

const flat = (text: string) => text.replace(/\s+/g, " ").trim();

/** The start of a chunk, cut at a word boundary: the snippet of a result found by meaning alone. */
function excerpt(text: string, max = 200): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}
