import { openDatabase } from "../src/store/db";
const d = await openDatabase("file:/tmp/mscratch/bdb/full-text-100000.db");
const sql = `SELECT h.rowid AS chunk_id, d.path AS path, h.score AS score
          FROM (SELECT rowid, bm25(memory_fts, 1.0, 0.0) AS score FROM memory_fts WHERE memory_fts MATCH ? ORDER BY score LIMIT ?) AS h
          CROSS JOIN memory_chunks c ON c.id = h.rowid JOIN memory_documents d ON d.id = c.document_id
          WHERE c.user_id = ?
          ORDER BY h.score`;
const args = ['{owner} : "1" AND {text} : ("guitar")', 40, "bench-user"];
console.log((await d.client.execute({ sql: "EXPLAIN QUERY PLAN " + sql, args })).rows.map((r) => r.detail));
let s = performance.now(); await d.client.execute({ sql, args }); console.log(performance.now() - s);
console.log((await d.client.execute({ sql: "EXPLAIN QUERY PLAN INSERT INTO memory_chunks (document_id, user_id, owner, seq, text) SELECT d.id, d.user_id, o.id, j.key, j.value FROM memory_documents d JOIN memory_owners o ON o.user_id = d.user_id, json_each(?) j WHERE d.user_id = ? AND d.path = ?", args: ["[]", "u", "p"] })).rows.map((r) => r.detail));
