import type { ThreadRow } from "../store/conversations";
import type { Db } from "../store/db";
import { loadThreadContext, rangeStats, type ThreadContextRows } from "../store/compactions";

interface Entry {
  contextSeq: number;
  compactionSeq: number | null;
  rows: ThreadContextRows;
  /** Rows at or after contextSeq in the database when this copy was made, compactions included. */
  stored: number;
}

/**
 * The recently used threads' context in memory, so that a turn reads only the items stored
 * since the last one. Each use checks the copy against the database (the thread's pointers,
 * and the count and last seq of its rows) and reads it again whole when anything else changed
 * it (a compaction, a deleted response). At most `max` threads are kept.
 */
export class ThreadCache {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly max = 16) {}

  get size(): number {
    return this.#entries.size;
  }

  async load(db: Db, thread: Pick<ThreadRow, "id" | "contextSeq" | "compactionSeq">): Promise<ThreadContextRows> {
    const cached = this.#entries.get(thread.id);
    this.#entries.delete(thread.id);
    let entry: Entry | undefined;
    if (cached && cached.contextSeq === thread.contextSeq && cached.compactionSeq === thread.compactionSeq) {
      const added = await loadThreadContext(db, thread, cached.rows.nextSeq);
      const stats = await rangeStats(db, thread.id, thread.contextSeq);
      const stored = cached.stored + added.read;
      const history = [...cached.rows.history, ...added.history];
      if (stats.count === stored && stats.last === added.nextSeq - 1 && added.read === added.history.length) {
        entry = { ...cached, stored, rows: { ...cached.rows, history, nextSeq: added.nextSeq, read: stored } };
      }
    }
    if (!entry) {
      const rows = await loadThreadContext(db, thread);
      entry = { contextSeq: thread.contextSeq, compactionSeq: thread.compactionSeq, rows, stored: rows.read };
    }
    this.#entries.set(thread.id, entry);
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
    return { ...entry.rows, history: [...entry.rows.history] };
  }
}
