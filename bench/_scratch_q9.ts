import { openDatabase } from "../src/store/db";
import { searchText } from "../src/store/memory";
const d = await openDatabase("file:/tmp/mscratch/bdb/full-text-100000.db");
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const time = async (label: string, fn: () => Promise<any>) => { const ts: number[] = []; let r: any; for (let i = 0; i < 15; i++) { const s = cpu(); r = await fn(); ts.push(cpu() - s); } ts.sort((a, b) => a - b); console.log(label.padEnd(30), ts[7]!.toFixed(2)); return r; };
for (const [all, any] of [['"Ingrid" AND "dinner"', '"Ingrid" OR "dinner"'], ['"guitar"', '"guitar"']]) {
  const ids = (await searchText(d.db, "bench-user", all!, 10)).map((h) => h.chunkId);
  const m = `{text} : (${any})`;
  await time("IN", () => d.client.execute({ sql: `SELECT rowid, snippet(memory_fts, 0, '**', '**', '…', 24) FROM memory_fts WHERE memory_fts MATCH ? AND rowid IN (${ids.join(",")})`, args: [m] }));
  await time("IN no snippet", () => d.client.execute({ sql: `SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? AND rowid IN (${ids.join(",")})`, args: [m] }));
  await time("UNION ALL =", () => d.client.execute({ sql: ids.map(() => `SELECT rowid, snippet(memory_fts, 0, '**', '**', '…', 24) FROM memory_fts WHERE memory_fts MATCH ? AND rowid = ?`).join(" UNION ALL "), args: ids.flatMap((id) => [m, id]) }));
  await time("10 x =", () => Promise.all(ids.map((id) => d.client.execute({ sql: `SELECT rowid, snippet(memory_fts, 0, '**', '**', '…', 24) FROM memory_fts WHERE memory_fts MATCH ? AND rowid = ?`, args: [m, id] }))));
  console.log((await d.client.execute({ sql: `EXPLAIN QUERY PLAN SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? AND rowid IN (${ids.join(",")})`, args: [m] })).rows.map((r) => r.detail));
}
