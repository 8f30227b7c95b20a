// The memory index on PostgreSQL: a tsvector column of each chunk with an inverted index
// (see migrations-pg/0001_memory_search.sql), and vectors kept as real[] and compared in the
// service (cosine distance), so that no extension is needed.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./db";
import { vectorTable, type ChunkHit, type DocumentWrite, type MemoryIndex } from "./memory";

const CONFIG = sql.raw("'service_english'::regconfig");
const docId = (userId: string, path: string) => sql`(SELECT id FROM memory_documents WHERE user_id = ${userId} AND path = ${path})`;
/** A private-use character that stands for `<` while ts_headline reads a chunk. */
const LT = "\uE000";
const vectorLiteral = (v: number[]) => `{${v.join(",")}}`;

/**
 * The tsquery of an FTS5 match expression as memory/query.ts writes them: quoted phrases,
 * AND (binding tighter), OR and parentheses. Each phrase is stemmed as the chunks are.
 */
export function tsquery(match: string): SQL {
  const tokens = match.match(/"(?:[^"]|"")*"|\(|\)|\bAND\b|\bOR\b/g) ?? [];
  let at = 0;
  const primary = (): SQL => {
    const t = tokens[at++];
    if (t === "(") {
      const inner = or();
      at++; // ")"
      return inner;
    }
    if (!t?.startsWith('"')) throw new Error(`unexpected ${t ?? "end"} in a memory search`);
    return sql`phraseto_tsquery(${CONFIG}, ${t.slice(1, -1).replaceAll('""', '"')})`;
  };
  const and = (): SQL => {
    let left = primary();
    while (tokens[at] === "AND") {
      at++;
      left = sql`(${left} && ${primary()})`;
    }
    return left;
  };
  const or = (): SQL => {
    let left = and();
    while (tokens[at] === "OR") {
      at++;
      left = sql`(${left} || ${and()})`;
    }
    return left;
  };
  return or();
}

async function vectorDims(db: Db): Promise<number[]> {
  const rows = await db.engine.rows<{ name: string }>(db, sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'memory_vectors_%'`);
  return rows.flatMap((r) => {
    const m = /^memory_vectors_(\d+)$/.exec(r.name);
    return m ? [Number(m[1])] : [];
  });
}

async function ensureVectorTable(db: Db, dims: number): Promise<void> {
  const t = sql.identifier(vectorTable(dims));
  // replicas meeting a new model at once: one creates the table, the other finds it
  await db.engine.batch(db, (q) =>
    [
      sql`SELECT pg_advisory_xact_lock(hashtext('memory_vectors'))`,
      sql`CREATE TABLE IF NOT EXISTS ${t} (
        chunk_id bigint PRIMARY KEY REFERENCES memory_chunks(id) ON DELETE CASCADE,
        user_id text NOT NULL,
        model text NOT NULL,
        embedding real[] NOT NULL)`,
      sql`CREATE INDEX IF NOT EXISTS ${sql.identifier(`${vectorTable(dims)}_user`)} ON ${t} (user_id, model)`,
    ].map((s) => db.engine.exec(q, s)),
  );
}

async function writeDocuments(db: Db, userId: string, docs: DocumentWrite[], _dims: number[], now = Date.now()): Promise<void> {
  const statements: SQL[] = [sql`INSERT INTO memory_owners (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`];
  for (const doc of docs) {
    statements.push(sql`INSERT INTO memory_documents (user_id, path, content, size, created_at, updated_at, tainted)
      VALUES (${userId}, ${doc.path}, ${doc.content}, ${Buffer.byteLength(doc.content, "utf8")}, ${now}, ${now}, ${doc.tainted === true})
      ON CONFLICT (user_id, path) DO UPDATE SET content = excluded.content, size = excluded.size, updated_at = excluded.updated_at, tainted = excluded.tainted`);
    // the chunks' vectors go with them (ON DELETE CASCADE)
    statements.push(sql`DELETE FROM memory_chunks WHERE document_id = ${docId(userId, doc.path)}`);
    if (doc.chunks.length) {
      statements.push(sql`INSERT INTO memory_chunks (document_id, user_id, owner, seq, text)
        SELECT d.id, d.user_id, o.id, j.n - 1, j.v FROM memory_documents d JOIN memory_owners o ON o.user_id = d.user_id,
          jsonb_array_elements_text(${JSON.stringify(doc.chunks)}::jsonb) WITH ORDINALITY AS j(v, n)
        WHERE d.user_id = ${userId} AND d.path = ${doc.path}`);
    }
    if (doc.vectors && doc.vectors.embeddings.length === doc.chunks.length && doc.chunks.length) {
      const table = sql.identifier(vectorTable(doc.vectors.embeddings[0]!.length));
      statements.push(sql`INSERT INTO ${table} (chunk_id, user_id, model, embedding)
        SELECT c.id, c.user_id, ${doc.vectors.model}, j.v::real[] FROM memory_chunks c
          JOIN jsonb_array_elements_text(${JSON.stringify(doc.vectors.embeddings.map(vectorLiteral))}::jsonb) WITH ORDINALITY AS j(v, n) ON j.n - 1 = c.seq
        WHERE c.document_id = ${docId(userId, doc.path)}`);
    }
  }
  await db.engine.batch(db, (q) => statements.map((s) => db.engine.exec(q, s)));
}

async function deleteDocument(db: Db, userId: string, path: string): Promise<boolean> {
  const results = await db.engine.batch(db, (q) => [
    db.engine.exec(q, sql`DELETE FROM memory_chunks WHERE document_id = ${docId(userId, path)}`),
    db.engine.exec(q, sql`DELETE FROM memory_documents WHERE user_id = ${userId} AND path = ${path} RETURNING id`),
  ]);
  return (results.at(-1) as unknown[]).length > 0;
}

async function searchText(db: Db, userId: string, match: string, limit: number): Promise<ChunkHit[]> {
  const rows = await db.engine.rows<{ chunk_id: number; path: string; score: number }>(
    db,
    sql`SELECT c.id AS chunk_id, d.path AS path, -ts_rank_cd(c.search, m.q) AS score
      FROM (SELECT ${tsquery(match)} AS q) AS m, memory_chunks c JOIN memory_documents d ON d.id = c.document_id
      WHERE c.user_id = ${userId} AND c.search @@ m.q
      ORDER BY score, c.id LIMIT ${limit}`,
  );
  return rows.map((r) => ({ chunkId: Number(r.chunk_id), path: r.path, score: Number(r.score) }));
}

async function snippets(db: Db, match: string, chunkIds: number[]): Promise<Map<number, string>> {
  const rows = await db.engine.rows<{ id: number; snippet: string }>(
    db,
    // ts_headline drops what its parser takes for HTML tags: `<` is hidden from it, and given back
    sql`SELECT c.id AS id, replace(ts_headline(${CONFIG}, replace(c.text, '<', ${LT}), m.q, 'StartSel=**, StopSel=**, MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=…'), ${LT}, '<') AS snippet
      FROM (SELECT ${tsquery(match)} AS q) AS m, memory_chunks c
      WHERE c.id IN (${sql.join(chunkIds.map((id) => sql`${id}`), sql`, `)}) AND c.search @@ m.q`,
  );
  return new Map(rows.map((r) => [Number(r.id), r.snippet]));
}

/** Every one of the user's vectors from `model` is compared here: PostgreSQL without an extension has no vector distance. */
async function searchVectors(db: Db, userId: string, model: string, vector: number[], limit: number): Promise<ChunkHit[]> {
  const rows = await db.engine.rows<{ chunk_id: number; path: string; embedding: number[] }>(
    db,
    sql`SELECT v.chunk_id AS chunk_id, d.path AS path, v.embedding AS embedding
      FROM ${sql.identifier(vectorTable(vector.length))} v JOIN memory_chunks c ON c.id = v.chunk_id JOIN memory_documents d ON d.id = c.document_id
      WHERE v.user_id = ${userId} AND v.model = ${model}`,
  );
  const norm = Math.hypot(...vector);
  return rows
    .map((r) => ({ chunkId: Number(r.chunk_id), path: r.path, score: cosineDistance(vector, norm, r.embedding) }))
    .sort((a, b) => a.score - b.score || a.chunkId - b.chunkId)
    .slice(0, limit);
}

function cosineDistance(a: number[], normA: number, b: number[]): number {
  let dot = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA && normB ? 1 - dot / (normA * Math.sqrt(normB)) : 1;
}

async function storeVectors(db: Db, model: string, rows: { chunkId: number; embedding: number[] }[]): Promise<void> {
  const t = sql.identifier(vectorTable(rows[0]!.embedding.length));
  await db.engine.batch(db, (q) =>
    rows.map((r) =>
      db.engine.exec(
        q,
        sql`INSERT INTO ${t} (chunk_id, user_id, model, embedding)
          SELECT c.id, c.user_id, ${model}, ${vectorLiteral(r.embedding)}::real[] FROM memory_chunks c WHERE c.id = ${r.chunkId}
          ON CONFLICT (chunk_id) DO UPDATE SET user_id = excluded.user_id, model = excluded.model, embedding = excluded.embedding`,
      ),
    ),
  );
}

export const pgMemory: MemoryIndex = { vectorDims, ensureVectorTable, writeDocuments, deleteDocument, searchText, snippets, searchVectors, storeVectors };
