// Workspace memory documents, their chunks, the full-text index over the chunks and the
// optional vector tables. Vector tables are made at run time, one per dimension count
// (`memory_vectors_<dims>`), because the dimensions are only known once the embedding model
// has answered. The index is each database's own: FTS5 and libSQL's vectors on a libSQL
// file (memory-sqlite.ts), tsvector and vectors compared in the service on PostgreSQL
// (memory-pg.ts).
import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import type { Db } from "./db";
import { pgMemory } from "./memory-pg";
import { sqliteMemory } from "./memory-sqlite";
import type { memoryDocuments } from "./schema";

export type MemoryDocument = Pick<typeof memoryDocuments.$inferSelect, "path" | "content" | "size" | "createdAt" | "updatedAt" | "tainted">;
export type MemoryEntry = Pick<MemoryDocument, "path" | "size" | "updatedAt">;

export interface DocumentWrite {
  path: string;
  content: string;
  chunks: string[];
  /** Written by the agent in a turn that had read untrusted content. */
  tainted?: boolean;
  /** One vector per chunk, from `model`; absent when there is no embedding model or it failed. */
  vectors?: { model: string; embeddings: number[][] };
}

export interface ChunkHit {
  chunkId: number;
  path: string;
  /** For full-text hits, lower is better (bm25(), or minus ts_rank_cd()); cosine distance for vector hits. */
  score: number;
}

/** What each database does its own way. `match` is an FTS5 expression of quoted phrases, AND, OR and parentheses (see memory/query.ts). */
export interface MemoryIndex {
  /** The dimension counts that have a vector table. */
  vectorDims(db: Db): Promise<number[]>;
  ensureVectorTable(db: Db, dims: number): Promise<void>;
  /**
   * Creates or overwrites documents with their chunks (and so their full-text index) and
   * vectors, all in one transaction. `dims` lists the existing vector tables, so that stale
   * vectors of every dimension go too.
   */
  writeDocuments(db: Db, userId: string, docs: DocumentWrite[], dims: number[], now?: number): Promise<void>;
  /** Deletes a document with its chunks, index entries and vectors; false when there was none. */
  deleteDocument(db: Db, userId: string, path: string, dims: number[]): Promise<boolean>;
  /** The user's chunks that match, best first. */
  searchText(db: Db, userId: string, match: string, limit: number): Promise<ChunkHit[]>;
  /** Snippets of the given chunks, with the matched words in **bold**. */
  snippets(db: Db, match: string, chunkIds: number[]): Promise<Map<number, string>>;
  /** The user's chunks nearest to `vector` (cosine distance), from `model`'s vectors. */
  searchVectors(db: Db, userId: string, model: string, vector: number[], limit: number): Promise<ChunkHit[]>;
  /** Stores vectors of existing chunks; chunks deleted in the meantime are skipped. */
  storeVectors(db: Db, model: string, rows: { chunkId: number; embedding: number[] }[]): Promise<void>;
}

const index = (db: Db): MemoryIndex => (db.engine.name === "postgres" ? pgMemory : sqliteMemory);

export const vectorDims = (db: Db) => index(db).vectorDims(db);
export const ensureVectorTable = (db: Db, dims: number) => index(db).ensureVectorTable(db, dims);
export const writeDocuments = (db: Db, userId: string, docs: DocumentWrite[], dims: number[], now = Date.now()) => index(db).writeDocuments(db, userId, docs, dims, now);
export const deleteDocument = (db: Db, userId: string, path: string, dims: number[]) => index(db).deleteDocument(db, userId, path, dims);
export const searchText = (db: Db, userId: string, match: string, limit: number) => index(db).searchText(db, userId, match, limit);
export const snippets = (db: Db, match: string, chunkIds: number[]) => (chunkIds.length ? index(db).snippets(db, match, chunkIds) : Promise.resolve(new Map<number, string>()));
export const searchVectors = (db: Db, userId: string, model: string, vector: number[], limit: number) => index(db).searchVectors(db, userId, model, vector, limit);
export const storeVectors = (db: Db, model: string, rows: { chunkId: number; embedding: number[] }[]) => (rows.length ? index(db).storeVectors(db, model, rows) : Promise.resolve());

export const vectorTable = (dims: number) => {
  if (!Number.isInteger(dims) || dims < 1 || dims > 65_536) throw new Error(`invalid vector dimensions: ${dims}`);
  return `memory_vectors_${dims}`;
};

export async function readDocument(db: Db, userId: string, path: string): Promise<MemoryDocument | undefined> {
  return (await readDocuments(db, userId, [path]))[0];
}

export async function readDocuments(db: Db, userId: string, paths: string[]): Promise<MemoryDocument[]> {
  const { memoryDocuments } = db.t;
  if (!paths.length) return [];
  return db
    .select({
      path: memoryDocuments.path,
      content: memoryDocuments.content,
      size: memoryDocuments.size,
      createdAt: memoryDocuments.createdAt,
      updatedAt: memoryDocuments.updatedAt,
      tainted: memoryDocuments.tainted,
    })
    .from(memoryDocuments)
    .where(and(eq(memoryDocuments.userId, userId), inArray(memoryDocuments.path, paths)));
}

/** Which of these documents of the user were written in a tainted turn. */
export async function taintedPaths(db: Db, userId: string, paths: string[]): Promise<Set<string>> {
  const { memoryDocuments } = db.t;
  if (!paths.length) return new Set();
  const rows = await db
    .select({ path: memoryDocuments.path })
    .from(memoryDocuments)
    .where(and(eq(memoryDocuments.userId, userId), inArray(memoryDocuments.path, paths), eq(memoryDocuments.tainted, true)));
  return new Set(rows.map((r) => r.path));
}

/** Every document of the user, by path. */
export async function listDocuments(db: Db, userId: string): Promise<MemoryEntry[]> {
  const { memoryDocuments } = db.t;
  return db
    .select({ path: memoryDocuments.path, size: memoryDocuments.size, updatedAt: memoryDocuments.updatedAt })
    .from(memoryDocuments)
    .where(eq(memoryDocuments.userId, userId))
    .orderBy(asc(memoryDocuments.path));
}

export async function chunkTexts(db: Db, chunkIds: number[]): Promise<Map<number, string>> {
  const { memoryChunks } = db.t;
  if (!chunkIds.length) return new Map();
  const rows = await db.select({ id: memoryChunks.id, text: memoryChunks.text }).from(memoryChunks).where(inArray(memoryChunks.id, chunkIds));
  return new Map(rows.map((r) => [r.id, r.text]));
}

/** Chunks after `afterId` that have no vector from `model` yet (for filling vectors in later). */
export async function chunksWithoutVectors(db: Db, model: string, dims: number | undefined, afterId: number, limit: number): Promise<{ id: number; text: string }[]> {
  const { memoryChunks: c } = db.t;
  const missing = dims ? sql`NOT EXISTS (SELECT 1 FROM ${sql.identifier(vectorTable(dims))} v WHERE v.chunk_id = ${c.id} AND v.model = ${model})` : undefined;
  return db.select({ id: c.id, text: c.text }).from(c).where(and(gt(c.id, afterId), missing)).orderBy(asc(c.id)).limit(limit);
}

/** The dimension count of `model`'s vectors, if any are stored. */
export async function dimsOfModel(db: Db, model: string): Promise<number | undefined> {
  for (const dims of await vectorDims(db)) {
    const rows = await db.engine.rows(db, sql`SELECT 1 AS one FROM ${sql.identifier(vectorTable(dims))} WHERE model = ${model} LIMIT 1`);
    if (rows.length) return dims;
  }
  return undefined;
}
