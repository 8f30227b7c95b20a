import { and, asc, eq, gte, ne, sql } from "drizzle-orm";
import type { ConversationItem } from "../conversation/items";
import type { CompactionItem } from "../conversation/items";
import type { Db } from "./db";
import type { ThreadRow } from "./conversations";

/** A stored item with its place in the thread. */
export interface Placed<T> {
  seq: number;
  item: T;
}

/** What a turn needs of its thread: the latest summary, the items after it, and the next seq. */
export interface ThreadContextRows {
  compaction: CompactionItem | undefined;
  history: Placed<ConversationItem>[];
  nextSeq: number;
  /** How many rows were read (older compactions in the range included). */
  read: number;
}

/**
 * Reads a thread from its latest compaction on: one range over the (thread, seq) index,
 * however long the thread is. Items a summary stands for are not read. The compaction lies
 * in that range: it was stored after the items it keeps (first_kept_seq <= its seq).
 */
export async function loadThreadContext(
  db: Db,
  thread: Pick<ThreadRow, "id" | "contextSeq" | "compactionSeq">,
  fromSeq = thread.contextSeq,
): Promise<ThreadContextRows> {
  const { items } = db.t;
  const rows = await db
    .select({ seq: items.seq, type: items.type, data: items.data })
    .from(items)
    .where(and(eq(items.threadId, thread.id), gte(items.seq, fromSeq)))
    .orderBy(asc(items.seq));
  let compaction: CompactionItem | undefined;
  const history: Placed<ConversationItem>[] = [];
  for (const r of rows) {
    if (r.type !== "compaction") history.push({ seq: r.seq, item: r.data as ConversationItem });
    else if (r.seq === thread.compactionSeq) compaction = r.data as CompactionItem;
  }
  const last = rows.at(-1)?.seq ?? (await maxSeq(db, thread.id));
  return { compaction, history, nextSeq: last === null ? 0 : last + 1, read: rows.length };
}

/** How many items lie at or after `fromSeq`, and the last seq: a cheap check of a copy in memory. */
export async function rangeStats(db: Db, threadId: string, fromSeq: number): Promise<{ count: number; last: number | null }> {
  const { items } = db.t;
  const row = (
    await db
      .select({ count: sql<number>`count(*)`, last: sql<number | null>`max(${items.seq})` })
      .from(items)
      .where(and(eq(items.threadId, threadId), gte(items.seq, fromSeq)))
  )[0];
  return { count: Number(row?.count ?? 0), last: row?.last ?? null };
}

async function maxSeq(db: Db, threadId: string): Promise<number | null> {
  const { items } = db.t;
  const row = (await db.select({ max: sql<number | null>`max(${items.seq})` }).from(items).where(eq(items.threadId, threadId)))[0];
  return row?.max ?? null;
}

/**
 * Stores a compaction at `seq` and points the thread at it, in one transaction. It belongs
 * to no response (its `response_id` is its own id), so no response shows it and discarding
 * a response never takes it along.
 */
export async function storeCompaction(db: Db, threadId: string, item: CompactionItem, seq: number): Promise<void> {
  const { items, threads } = db.t;
  await db.engine.batch(db, (q) => [
    q.insert(items).values({
      id: item.id,
      threadId,
      responseId: item.id,
      seq,
      type: "compaction",
      data: item,
      createdAt: item.created_at,
    }),
    q.update(threads).set({ compactionSeq: seq, contextSeq: item.first_kept_seq }).where(eq(threads.id, threadId)),
  ]);
}

/** Every item of a thread with the compactions among them, in order: what a person reads. */
export async function loadTimeline(db: Db, threadId: string): Promise<Placed<ConversationItem | CompactionItem>[]> {
  const { items } = db.t;
  const rows = await db
    .select({ seq: items.seq, data: items.data })
    .from(items)
    .where(eq(items.threadId, threadId))
    .orderBy(asc(items.seq));
  return rows.map((r) => ({ seq: r.seq, item: r.data }));
}

/** The `type` condition that leaves compactions out of a thread's conversation items. */
export const notCompaction = (db: Db) => ne(db.t.items.type, "compaction");
