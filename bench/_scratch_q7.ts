import { openDatabase } from "../src/store/db";
import { MemoryService } from "../src/memory/service";
process.env.BENCH_MEMORY_SIZES = "0";
const { QS } = await import("./_scratch_build.ts");
const d = await openDatabase("file:/tmp/mscratch/bdb/full-text-100000.db");
const m = new MemoryService({ db: d.db });
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
for (const q of QS.slice(0, 30)) await m.search("bench-user", q, 10);
const cls: Record<number, number[]> = {}; const all: number[] = [];
QS.forEach(() => {});
let i = 0;
for (const q of QS) { const s = cpu(); await m.search("bench-user", q, 10); const t = cpu() - s; (cls[i++ % 5] ??= []).push(t); all.push(t); }
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(2);
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!.toFixed(2);
console.log("all cpu p50", med(all), "p99", p99(all)); for (const [k, v] of Object.entries(cls)) console.log("class", k, med(v), p99(v));
