import { openDatabase } from "../src/store/db";
const d = await openDatabase("file:/tmp/mscratch/bdb/full-text-100000.db");
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const time = async (label: string, sql: string, args: any[]) => { const ts: number[] = []; let r: any; for (let i = 0; i < 9; i++) { const s = cpu(); r = await d.client.execute({ sql, args }); ts.push(cpu() - s); } ts.sort((a, b) => a - b); console.log(label.padEnd(26), ts[4]!.toFixed(2), r.rows.length); };
for (const w of ['"guitar"', '"concert"', '"Ingrid" AND "dinner"', '("Elena" AND "say") OR ("Elena" AND "invoice") OR ("say" AND "invoice")', '"Elena" OR "say" OR "invoice"']) {
  console.log(w);
  await time(" count", "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", [w]);
  await time(" plain bm25", "SELECT rowid, bm25(memory_fts) s FROM memory_fts WHERE memory_fts MATCH ? ORDER BY s LIMIT 40", [w]);
  await time(" plain rank", "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT 40", [w]);
  await time(" cross join chunks", "SELECT c.id, bm25(memory_fts) s FROM memory_fts CROSS JOIN memory_chunks c ON c.id = memory_fts.rowid WHERE memory_fts MATCH ? AND c.user_id = ? ORDER BY s LIMIT 40", [w, "bench-user"]);
  await time(" cross join + docs", "SELECT c.id, d.path, bm25(memory_fts) s FROM memory_fts CROSS JOIN memory_chunks c ON c.id = memory_fts.rowid JOIN memory_documents d ON d.id = c.document_id WHERE memory_fts MATCH ? AND c.user_id = ? ORDER BY s LIMIT 40", [w, "bench-user"]);
}
