// bench/tail-causes.ts: what held the slowest turns up, from JavaScriptCore's reports and SQLite's wal-index.
import { expect, test } from "bun:test";
import { backfilled, causes, EngineLog } from "../../bench/tail-causes";

// as Bun 1.4.5 writes them (BUN_JSC_logGC=1, BUN_JSC_reportDFGCompileTimes=1), the compiler's
// thread's words landing inside the collector's line
const eden = "[GC<0x4d631080118>: START M 27528kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=16 b=129 i#1:N<CsMsrShDMsm(130)SrbBcs> 0+0 => 13680kb, p=1.042196ms (max 4.032197), cycle 1.020263ms END]\nGC END!\n[GC<0x4d631080118>: epilogue 0.066129ms]\n";
const full = "[GC<0x4d631080118>: START M 30112kb => FullCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=8 b=141 => 12100kb, p=9.342651ms (max 9.342651), cycle 9.342651ms END]\nGC END!\n";
const compile = "Optimized rawItemTokens#ENIuA3:[0x28e0e8b3660->0x28e0e4a03a0->0x28e0da3e580, NoneFunctionCall, 293 (StrictMode)] using DFG with DFG into 1216 bytes in 0.347208 ms.\n";

test("collections by their kind and compiles, each at the time its report arrived", () => {
  const log = new EngineLog();
  log.feed(eden, 10);
  log.feed(compile + full, 20);
  expect(log.events).toEqual([
    { at: 10, kind: "eden" },
    { at: 20, kind: "compile" },
    { at: 20, kind: "full" },
  ]);
});

test("a report cut between two reads counts once, at the read that completes it; interleaved words from the other thread count too", () => {
  const log = new EngineLog();
  const cut = eden.indexOf("END]") + 2;
  log.feed(eden.slice(0, eden.indexOf("=> Eden") + 5), 1);
  log.feed(eden.slice(eden.indexOf("=> Eden") + 5, cut), 2);
  log.feed(eden.slice(cut) + "Optim", 3);
  log.feed("ized #B52rTp:[...] using DFG with DFG into 1184 bytes in 0.33 ms.\n", 4);
  expect(log.events).toEqual([
    { at: 3, kind: "eden" },
    { at: 4, kind: "compile" },
  ]);
});

test("the log's copy into the database is read from the -shm file's checkpoint info", () => {
  const shm = new Uint8Array(32768);
  new DataView(shm.buffer).setUint32(96, 4012, true);
  expect(backfilled(shm)).toBe(4012);
  expect(backfilled(new Uint8Array(0))).toBe(0);
});

test("each slow turn gets one cause: the checkpoint first, then a full collection, a young one, a compile, or none", () => {
  const turns = [
    { start: 0, ms: 0.5, checkpoint: false }, // an eden here, but a fast turn: not counted
    { start: 1, ms: 12, checkpoint: true }, // a compile too: the checkpoint counts
    { start: 20, ms: 2.2, checkpoint: false }, // an eden reported just after the answer, before the next turn
    { start: 30, ms: 2.5, checkpoint: false }, // a compile
    { start: 40, ms: 9, checkpoint: false }, // a full collection and a compile
    { start: 50, ms: 2.1, checkpoint: false }, // nothing seen
    { start: 60, ms: 1.9, checkpoint: false }, // under the line
  ];
  const events = [
    { at: 0.4, kind: "eden" as const },
    { at: 5, kind: "compile" as const },
    { at: 22.5, kind: "eden" as const },
    { at: 31, kind: "compile" as const },
    { at: 45, kind: "compile" as const },
    { at: 44, kind: "full" as const },
  ];
  const out = causes(turns, events, 2);
  expect(Object.fromEntries(out)).toEqual({
    "SQLite's checkpoint": [12],
    "a full collection": [9],
    "a young collection": [2.2],
    "an optimising compile": [2.5],
    "none of these": [2.1],
  });
});
