import { openDatabase } from "../src/store/db";
const d = await openDatabase("file:/tmp/mscratch/bdb/full-text-100000.db");
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const time = async (label: string, sql: string, args: any[]) => { const ts: number[] = []; let r: any; for (let i = 0; i < 5; i++) { const s = cpu(); r = await d.client.execute({ sql, args }); ts.push(cpu() - s); } ts.sort((a, b) => a - b); console.log(label.padEnd(26), ts[2]!.toFixed(2), r.rows.length); };
const owner = Number((await d.client.execute("SELECT id FROM memory_owners WHERE user_id = 'bench-user'")).rows[0]![0]);
console.log("owner", owner);
for (const w of ['"guitar"', '"Ingrid" AND "dinner"']) {
  console.log(w);
  await time(" count text only", "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", [`{text} : (${w})`]);
  await time(" count owner only", "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", [`{owner} : "${owner}"`]);
  await time(" count owner+text", "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", [`{owner} : "${owner}" AND {text} : (${w})`]);
  await time(" bm25 text only", "SELECT rowid, bm25(memory_fts, 1.0, 0.0) s FROM memory_fts WHERE memory_fts MATCH ? ORDER BY s LIMIT 40", [`{text} : (${w})`]);
  await time(" bm25 owner+text", "SELECT rowid, bm25(memory_fts, 1.0, 0.0) s FROM memory_fts WHERE memory_fts MATCH ? ORDER BY s LIMIT 40", [`{owner} : "${owner}" AND {text} : (${w})`]);
  await time(" bm25 owner+text (text first)", "SELECT rowid, bm25(memory_fts, 1.0, 0.0) s FROM memory_fts WHERE memory_fts MATCH ? ORDER BY s LIMIT 40", [`{text} : (${w}) AND {owner} : "${owner}"`]);
}
