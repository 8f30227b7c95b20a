// What `bench:tail` reads of the service: JavaScriptCore's own reports on stderr, and SQLite's
// wal-index, each turned into events with the client's time of each.

/** Something that can hold a turn up, seen by the client at `at` (its `performance.now()`). */
export interface EngineEvent {
  at: number;
  kind: "full" | "eden" | "compile";
}

/**
 * JavaScriptCore's reports as they arrive on the service's stderr: a collection's line
 * (`BUN_JSC_logGC=1`) ends with `END]` and names its kind (`=> EdenCollection`) before that;
 * an optimising compile (`BUN_JSC_reportDFGCompileTimes=1`) prints `Optimized … using DFG`.
 * The compiler's thread writes beside the collector's, so their pieces interleave: each word
 * is counted where it arrives, and a collection takes the last kind named before its end.
 */
export class EngineLog {
  readonly events: EngineEvent[] = [];
  #kind: "full" | "eden" = "eden";
  // a word cut between two reads is found with the start of the next
  #tail = "";

  feed(text: string, at: number): void {
    const seen = this.#tail + text;
    for (const m of seen.matchAll(/=> (Eden|Full)Collection|END\]|Optimized /g)) {
      if (m.index + m[0].length <= this.#tail.length) continue; // counted with the read before
      if (m[1]) this.#kind = m[1] === "Full" ? "full" : "eden";
      else this.events.push({ at, kind: m[0] === "END]" ? this.#kind : "compile" });
    }
    this.#tail = seen.slice(-24);
  }
}

/** How many frames of the log SQLite has copied into the database (`nBackfill`, in the -shm file's checkpoint info). */
export function backfilled(shm: Uint8Array): number {
  if (shm.byteLength < 100) return 0;
  // the wal-index is in the machine's own byte order: two 48-byte headers, then nBackfill
  return new DataView(shm.buffer, shm.byteOffset, shm.byteLength).getUint32(96, true);
}

export type Cause = "SQLite's checkpoint" | "a full collection" | "a young collection" | "an optimising compile" | "none of these";
export const CAUSES: Cause[] = ["SQLite's checkpoint", "a full collection", "a young collection", "an optimising compile", "none of these"];
/** The engine's events, in the order of `CAUSES`, and the cause each one is. */
const BY_KIND: [EngineEvent["kind"], Cause][] = [
  ["full", "a full collection"],
  ["eden", "a young collection"],
  ["compile", "an optimising compile"],
];

/**
 * What held each slow turn up. A turn owns the events from its start to the next turn's (a
 * report can arrive just after the answer it delayed); a checkpoint is known by the log's
 * copy having grown during the turn. Where several came together, the first cause listed
 * in `CAUSES` is the one counted.
 */
export function causes(turns: { start: number; ms: number; checkpoint: boolean }[], events: EngineEvent[], overMs: number): Map<Cause, number[]> {
  const out = new Map<Cause, number[]>(CAUSES.map((c) => [c, []]));
  const sorted = [...events].sort((a, b) => a.at - b.at);
  let e = 0;
  for (const [i, t] of turns.entries()) {
    while (e < sorted.length && sorted[e]!.at < t.start) e++;
    if (t.ms <= overMs) continue;
    const until = turns[i + 1]?.start ?? Infinity;
    const kinds = new Set<EngineEvent["kind"]>();
    for (let j = e; j < sorted.length && sorted[j]!.at < until; j++) kinds.add(sorted[j]!.kind);
    const cause = t.checkpoint ? "SQLite's checkpoint" : (BY_KIND.find(([kind]) => kinds.has(kind))?.[1] ?? "none of these");
    out.get(cause)!.push(t.ms);
  }
  return out;
}
