// The memory index on a libSQL file: FTS5 over the chunks (kept in step by triggers, see
// migrations/0007_memory_owner.sql) and libSQL's vector tables with their approximate index.
import type { InStatement, Row } from "@libsql/client";
import type { Db } from "./db";
import { vectorTable, type ChunkHit, type DocumentWrite, type MemoryIndex } from "./memory";

const DOC_ID = "(SELECT id FROM memory_documents WHERE user_id = ? AND path = ?)";

/** The dimension counts that have a vector table. */
async function vectorDims(db: Db): Promise<number[]> {
  const rows = await db.$client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory_vectors_%'");
  return rows.rows.flatMap((r) => {
    const m = /^memory_vectors_(\d+)$/.exec(String(r.name));
    return m ? [Number(m[1])] : [];
  });
}

async function ensureVectorTable(db: Db, dims: number): Promise<void> {
  const t = vectorTable(dims);
  await db.$client.batch(
    [
      `CREATE TABLE IF NOT EXISTS ${t} (
        chunk_id INTEGER PRIMARY KEY REFERENCES memory_chunks(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        model TEXT NOT NULL,
        embedding F32_BLOB(${dims}) NOT NULL)`,
      `CREATE INDEX IF NOT EXISTS ${t}_user ON ${t} (user_id, model)`,
      `CREATE INDEX IF NOT EXISTS ${t}_ann ON ${t} (libsql_vector_idx(embedding))`,
    ],
    "write",
  );
}

/**
 * Creates or overwrites documents with their chunks (and so their full-text index) and
 * vectors, all in one transaction. `dims` lists the existing vector tables, so that stale
 * vectors of every dimension go too.
 */
async function writeDocuments(db: Db, userId: string, docs: DocumentWrite[], dims: number[], now = Date.now()): Promise<void> {
  const statements: InStatement[] = [{ sql: "INSERT OR IGNORE INTO memory_owners (user_id) VALUES (?)", args: [userId] }];
  for (const doc of docs) {
    const key = [userId, doc.path];
    statements.push({
      sql: `INSERT INTO memory_documents (user_id, path, content, size, created_at, updated_at, tainted) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_id, path) DO UPDATE SET content = excluded.content, size = excluded.size, updated_at = excluded.updated_at, tainted = excluded.tainted`,
      args: [userId, doc.path, doc.content, Buffer.byteLength(doc.content, "utf8"), now, now, doc.tainted ? 1 : 0],
    });
    statements.push(...clearChunks(key, dims));
    if (doc.chunks.length) {
      statements.push({
        sql: `INSERT INTO memory_chunks (document_id, user_id, owner, seq, text)
              SELECT d.id, d.user_id, o.id, j.key, j.value FROM memory_documents d JOIN memory_owners o ON o.user_id = d.user_id, json_each(?) j
              WHERE d.user_id = ? AND d.path = ?`,
        args: [JSON.stringify(doc.chunks), ...key],
      });
    }
    if (doc.vectors && doc.vectors.embeddings.length === doc.chunks.length && doc.chunks.length) {
      const table = vectorTable(doc.vectors.embeddings[0]!.length);
      statements.push({
        sql: `INSERT INTO ${table} (chunk_id, user_id, model, embedding)
              SELECT c.id, c.user_id, ?, vector32(j.value) FROM memory_chunks c JOIN json_each(?) j ON j.key = c.seq
              WHERE c.document_id = ${DOC_ID}`,
        args: [doc.vectors.model, JSON.stringify(doc.vectors.embeddings), ...key],
      });
    }
  }
  await db.$client.batch(statements, "write");
}

function clearChunks(key: string[], dims: number[]): InStatement[] {
  return [
    ...dims.map((d) => ({
      sql: `DELETE FROM ${vectorTable(d)} WHERE chunk_id IN (SELECT id FROM memory_chunks WHERE document_id = ${DOC_ID})`,
      args: key,
    })),
    { sql: `DELETE FROM memory_chunks WHERE document_id = ${DOC_ID}`, args: key },
  ];
}

/** Deletes a document with its chunks, index entries and vectors; false when there was none. */
async function deleteDocument(db: Db, userId: string, path: string, dims: number[]): Promise<boolean> {
  const key = [userId, path];
  const results = await db.$client.batch(
    [...clearChunks(key, dims), { sql: "DELETE FROM memory_documents WHERE user_id = ? AND path = ?", args: key }],
    "write",
  );
  return results.at(-1)!.rowsAffected > 0;
}

/**
 * The user's chunks that match an FTS5 query over the text, best (lowest bm25) first.
 *
 * bm25() is the cost of a search: it runs for every match, and once per query it counts the
 * rows of each phrase. So the query first ranks the text alone and joins only the best
 * 2 × `limit` hits to check whose they are; when that is enough of the user's own (always
 * on a single-user instance) it is the answer, exactly. When other users' chunks crowd the
 * user's out, it asks again with the user's owner number in the query, so that FTS5 ranks
 * only the user's chunks. CROSS JOIN keeps the few hits the outer loop: left to itself the
 * planner may walk all of a user's chunks instead.
 */
async function searchText(db: Db, userId: string, match: string, limit: number): Promise<ChunkHit[]> {
  const ranked = (where: string) => `
    SELECT h.rowid AS chunk_id, c.user_id AS user_id, d.path AS path, h.score AS score
    FROM (SELECT rowid, bm25(memory_fts, 1.0, 0.0) AS score FROM memory_fts WHERE memory_fts MATCH ? ORDER BY score LIMIT ?) AS h
    CROSS JOIN memory_chunks c ON c.id = h.rowid JOIN memory_documents d ON d.id = c.document_id
    ${where} ORDER BY h.score`;
  const wide = (await db.$client.execute({ sql: ranked(""), args: [`{text} : (${match})`, 2 * limit] })).rows;
  const mine = wide.filter((r) => r.user_id === userId);
  if (mine.length >= limit || wide.length < 2 * limit) return mine.slice(0, limit).map(hit);

  const owner = await db.$client.execute({ sql: "SELECT id FROM memory_owners WHERE user_id = ?", args: [userId] });
  if (!owner.rows.length) return [];
  const rs = await db.$client.execute({
    sql: ranked("WHERE c.user_id = ?"),
    args: [`{owner} : "${Number(owner.rows[0]!.id)}" AND {text} : (${match})`, limit, userId],
  });
  return rs.rows.map(hit);
}

/** FTS5 snippets of the given chunks, with the matched words in **bold**. */
async function snippets(db: Db, match: string, chunkIds: number[]): Promise<Map<number, string>> {
  if (!chunkIds.length) return new Map();
  const rs = await db.$client.execute({
    sql: `SELECT rowid, snippet(memory_fts, 0, '**', '**', '…', 24) AS snippet FROM memory_fts
          WHERE memory_fts MATCH ? AND rowid IN (${chunkIds.map(() => "?").join(", ")})`,
    args: [`{text} : (${match})`, ...chunkIds],
  });
  return new Map(rs.rows.map((r) => [Number(r.rowid), String(r.snippet)]));
}

/**
 * The user's chunks nearest to `vector` (cosine distance), from `model`'s vectors. Asks the
 * approximate index first; when other users' vectors crowd the user's out of its answer,
 * falls back to an exact scan of the user's own vectors.
 */
async function searchVectors(db: Db, userId: string, model: string, vector: number[], limit: number): Promise<ChunkHit[]> {
  const t = vectorTable(vector.length);
  const q = JSON.stringify(vector);
  const select = `SELECT v.chunk_id AS chunk_id, d.path AS path, vector_distance_cos(v.embedding, vector32(?)) AS score`;
  const joins = `JOIN memory_chunks c ON c.id = v.chunk_id JOIN memory_documents d ON d.id = c.document_id`;
  const approximate = await db.$client.execute({
    sql: `${select} FROM vector_top_k('${t}_ann', vector32(?), ?) AS top JOIN ${t} v ON v.rowid = top.id ${joins}
          WHERE v.user_id = ? AND v.model = ? ORDER BY score LIMIT ?`,
    args: [q, q, limit * 4, userId, model, limit],
  });
  if (approximate.rows.length >= limit) return approximate.rows.map(hit);
  const exact = await db.$client.execute({
    sql: `${select} FROM ${t} v ${joins} WHERE v.user_id = ? AND v.model = ? ORDER BY score LIMIT ?`,
    args: [q, userId, model, limit],
  });
  return exact.rows.map(hit);
}

/** Stores vectors of existing chunks; chunks deleted in the meantime are skipped. */
async function storeVectors(db: Db, model: string, rows: { chunkId: number; embedding: number[] }[]): Promise<void> {
  if (!rows.length) return;
  const t = vectorTable(rows[0]!.embedding.length);
  await db.$client.batch(
    rows.map((r) => ({
      sql: `INSERT OR REPLACE INTO ${t} (chunk_id, user_id, model, embedding)
            SELECT c.id, c.user_id, ?, vector32(?) FROM memory_chunks c WHERE c.id = ?`,
      args: [model, JSON.stringify(r.embedding), r.chunkId],
    })),
    "write",
  );
}

const hit = (r: Row): ChunkHit => ({ chunkId: Number(r.chunk_id), path: String(r.path), score: Number(r.score) });

export const sqliteMemory: MemoryIndex = { vectorDims, ensureVectorTable, writeDocuments, deleteDocument, searchText, snippets, searchVectors, storeVectors };
