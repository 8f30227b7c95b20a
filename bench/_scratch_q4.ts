import { openDatabase } from "../src/store/db";
const d = await openDatabase("file:/tmp/mscratch/bdb/full-text-100000.db");
const time = async (label: string, sql: string, args: any[]) => { const ts: number[] = []; let r: any; for (let i = 0; i < 7; i++) { const s = performance.now(); r = await d.client.execute({ sql, args }); ts.push(performance.now() - s); } ts.sort((a, b) => a - b); console.log(label, ts[3]!.toFixed(2), r.rows.length); };
for (const w of ['"guitar"', '"concert"', '"Ingrid" AND "dinner"', '("Elena" AND "say") OR ("Elena" AND "invoice") OR ("say" AND "invoice")', '"Elena" OR "say" OR "invoice"']) {
  console.log(w);
  await time(" count", "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", [w]);
  await time(" plain bm25", "SELECT rowid, bm25(memory_fts) s FROM memory_fts WHERE memory_fts MATCH ? ORDER BY s LIMIT 40", [w]);
  await time(" plain rank", "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT 40", [w]);
  await time(" cross join chunks", "SELECT c.id, bm25(memory_fts) s FROM memory_fts CROSS JOIN memory_chunks c ON c.id = memory_fts.rowid WHERE memory_fts MATCH ? AND c.user_id = ? ORDER BY s LIMIT 40", [w, "bench-user"]);
  await time(" cross join + docs", "SELECT c.id, d.path, bm25(memory_fts) s FROM memory_fts CROSS JOIN memory_chunks c ON c.id = memory_fts.rowid JOIN memory_documents d ON d.id = c.document_id WHERE memory_fts MATCH ? AND c.user_id = ? ORDER BY s LIMIT 40", [w, "bench-user"]);
  await time(" subq rank then filter", "SELECT f.rowid, f.s FROM (SELECT rowid, bm25(memory_fts) s FROM memory_fts WHERE memory_fts MATCH ?) f CROSS JOIN memory_chunks c ON c.id = f.rowid WHERE c.user_id = ? ORDER BY f.s LIMIT 40", [w, "bench-user"]);
}
