// The branches of a thread (regenerate, edit and resend, and the 1/2 arrows between the
// answers). `items` holds the current branch only, so what the model reads, the Responses
// and Conversations APIs and every other reader see just that; the other branches wait in
// `branch_items`. Callers hold the thread's lock (Agent.withThread) around each change.
import { and, asc, desc, eq, gt, inArray, lt, ne, sql } from "drizzle-orm";
import type { CompactionItem, ConversationItem, ImageRef } from "../conversation/items";
import type { Db } from "./db";
import type { Orm } from "./engine";
import type { items, } from "./schema";

type ItemRow = typeof items.$inferSelect;

/** Where the thread's last turn was set aside, to put it back if its replacement cannot start. */
export interface Forked {
  fork: string;
  /** The branch set aside. */
  branch: number;
  /** The user message that started it (what a regenerate sends again). */
  message: { content: string; images?: ImageRef[] };
}

/** A fork as a person sees it: which of how many alternatives is shown. */
export interface ForkState {
  current: number;
  count: number;
}

/**
 * Sets the thread's last turn aside (from its last user message on) as an alternative, and
 * opens a new branch at the same place for the turn that replaces it. Undefined when the
 * thread has no user message.
 */
export async function forkLastTurn(db: Db, threadId: string): Promise<Forked | undefined> {
  const { forks, items } = db.t;
  const [start] = await db
    .select({ seq: items.seq, data: items.data })
    .from(items)
    .where(and(eq(items.threadId, threadId), eq(items.type, "message"), sql`${db.engine.jsonText(items.data, "role")} = 'user'`))
    .orderBy(desc(items.seq))
    .limit(1);
  if (!start) return undefined;
  const fork = await itemBefore(db, threadId, start.seq);
  const state = await forkState(db, threadId, fork);
  const branch = state?.current ?? 1;
  const count = state?.count ?? 1;
  const tail = await tailFrom(db, threadId, start.seq);
  await db.engine.batch(db, (q) => [
    ...setAside(q, db.t, threadId, tail, fork, branch),
    q
      .insert(forks)
      .values({ threadId, fork, current: count + 1, count: count + 1 })
      .onConflictDoUpdate({ target: [forks.threadId, forks.fork], set: { current: count + 1, count: count + 1 } }),
  ]);
  await pointAtLatestCompaction(db, threadId);
  const message = start.data as Extract<ConversationItem, { type: "message" }>;
  return { fork, branch, message: { content: message.content, ...(message.images ? { images: message.images } : {}) } };
}

/** Undoes `forkLastTurn` when the new branch got nothing: the turn set aside comes back. */
export async function unfork(db: Db, threadId: string, forked: Forked): Promise<void> {
  const { forks, items } = db.t;
  const state = await forkState(db, threadId, forked.fork);
  if (!state) return;
  const tail = await tailAfter(db, threadId, forked.fork);
  const back = await branchBack(db, threadId, forked.fork, forked.branch);
  await db.engine.batch(db, (q) => [
    ...(tail.length ? [q.delete(items).where(inArray(items.id, tail.map((r) => r.id)))] : []),
    ...bringBack(q, db.t, back),
    state.count - 1 > 1
      ? q.update(forks).set({ current: forked.branch, count: state.count - 1 }).where(and(eq(forks.threadId, threadId), eq(forks.fork, forked.fork)))
      : q.delete(forks).where(and(eq(forks.threadId, threadId), eq(forks.fork, forked.fork))),
  ]);
  await pointAtLatestCompaction(db, threadId);
}

/**
 * Shows alternative `branch` at the fork that item `itemId` starts (the current branch goes
 * aside); what follows it comes along. False when the item starts no fork or there is no
 * such branch.
 */
export async function switchBranch(db: Db, threadId: string, itemId: string, branch: number): Promise<boolean> {
  const { forks, items } = db.t;
  const [start] = await db.select({ seq: items.seq }).from(items).where(and(eq(items.threadId, threadId), eq(items.id, itemId))).limit(1);
  if (!start) return false;
  const fork = await itemBefore(db, threadId, start.seq);
  const state = await forkState(db, threadId, fork);
  if (!state || !Number.isInteger(branch) || branch < 1 || branch > state.count) return false;
  if (branch === state.current) return true;
  const tail = await tailFrom(db, threadId, start.seq);
  const back = await branchBack(db, threadId, fork, branch);
  await db.engine.batch(db, (q) => [
    ...setAside(q, db.t, threadId, tail, fork, state.current),
    ...bringBack(q, db.t, back),
    q.update(forks).set({ current: branch }).where(and(eq(forks.threadId, threadId), eq(forks.fork, fork))),
  ]);
  await pointAtLatestCompaction(db, threadId);
  return true;
}

/** Every fork of the thread, by the id of the item before it ("" at the thread's start). */
export async function forksOf(db: Db, threadId: string): Promise<Map<string, ForkState>> {
  const { forks } = db.t;
  const rows = await db.select().from(forks).where(eq(forks.threadId, threadId));
  return new Map(rows.map((r) => [r.fork, { current: r.current, count: r.count }]));
}

async function forkState(db: Db, threadId: string, fork: string): Promise<ForkState | undefined> {
  const { forks } = db.t;
  const [row] = await db.select({ current: forks.current, count: forks.count }).from(forks).where(and(eq(forks.threadId, threadId), eq(forks.fork, fork)));
  return row;
}

/** The id of the conversation item before `seq` (compactions are not items of the conversation), or "". */
async function itemBefore(db: Db, threadId: string, seq: number): Promise<string> {
  const { items } = db.t;
  const [row] = await db
    .select({ id: items.id })
    .from(items)
    .where(and(eq(items.threadId, threadId), lt(items.seq, seq), ne(items.type, "compaction")))
    .orderBy(desc(items.seq))
    .limit(1);
  return row?.id ?? "";
}

/**
 * The current branch from `seq` on. A compaction made later that summarises only what lies
 * before `seq` stays: it holds for every branch from there.
 */
async function tailFrom(db: Db, threadId: string, seq: number): Promise<ItemRow[]> {
  const { items } = db.t;
  const rows = await db.select().from(items).where(and(eq(items.threadId, threadId), sql`${items.seq} >= ${seq}`)).orderBy(asc(items.seq));
  return rows.filter((r) => r.type !== "compaction" || (r.data as CompactionItem).first_kept_seq > seq);
}

/** The current branch after a fork: everything after the item that names it. */
async function tailAfter(db: Db, threadId: string, fork: string): Promise<ItemRow[]> {
  const { items } = db.t;
  const [at] = fork ? await db.select({ seq: items.seq }).from(items).where(eq(items.id, fork)) : [{ seq: -1 }];
  return at ? db.select().from(items).where(and(eq(items.threadId, threadId), gt(items.seq, at.seq))).orderBy(asc(items.seq)) : [];
}

/** The writes that move rows of `items` into `branch_items` as alternative `branch` of `fork`. */
function setAside(q: Orm, { branchItems, items }: Db["t"], threadId: string, rows: ItemRow[], fork: string, branch: number) {
  if (!rows.length) return [];
  return [
    q.insert(branchItems).values(rows.map((r) => ({ ...r, threadId, fork, branch }))),
    q.delete(items).where(inArray(items.id, rows.map((r) => r.id))),
  ];
}

/**
 * Alternative `branch` of `fork` as it comes back at the end of the thread: its rows in
 * `branch_items`, and as `items` rows. Its items get seqs after any the thread has used, so
 * that no copy of the thread kept in memory (ThreadCache) takes it for the branch it
 * replaces; a compaction among them keeps pointing at the same item.
 */
async function branchBack(db: Db, threadId: string, fork: string, branch: number): Promise<{ ids: string[]; restored: ItemRow[] }> {
  const { branchItems, items } = db.t;
  const rows = await db
    .select()
    .from(branchItems)
    .where(and(eq(branchItems.threadId, threadId), eq(branchItems.fork, fork), eq(branchItems.branch, branch)))
    .orderBy(asc(branchItems.seq));
  if (!rows.length) return { ids: [], restored: [] };
  const [used] = await db
    .select({ max: sql<number | null>`max(seq)` })
    .from(sql`(select ${items.seq} as seq from ${items} where ${items.threadId} = ${threadId} union all select ${branchItems.seq} from ${branchItems} where ${branchItems.threadId} = ${threadId}) as used`);
  const base = (used?.max ?? -1) + 1;
  const renumbered = new Map(rows.map((r, i) => [r.seq, base + i]));
  const restored = rows.map(({ fork: _fork, branch: _branch, ...r }) => {
    const data = r.data.type === "compaction" ? ({ ...r.data, first_kept_seq: renumbered.get(r.data.first_kept_seq) ?? r.data.first_kept_seq } satisfies CompactionItem) : r.data;
    return { ...r, seq: renumbered.get(r.seq)!, data };
  });
  return { ids: rows.map((r) => r.id), restored };
}

/** The writes that put a branch back (see branchBack). */
function bringBack(q: Orm, { branchItems, items }: Db["t"], back: { ids: string[]; restored: ItemRow[] }) {
  if (!back.ids.length) return [];
  return [q.delete(branchItems).where(inArray(branchItems.id, back.ids)), q.insert(items).values(back.restored)];
}

/** The thread's summary pointers follow the latest compaction on its current branch (or none). */
async function pointAtLatestCompaction(db: Db, threadId: string): Promise<void> {
  const { items, threads } = db.t;
  const [latest] = await db
    .select({ seq: items.seq, data: items.data })
    .from(items)
    .where(and(eq(items.threadId, threadId), eq(items.type, "compaction")))
    .orderBy(desc(items.seq))
    .limit(1);
  const c = latest?.data as CompactionItem | undefined;
  await db.update(threads).set({ compactionSeq: latest?.seq ?? null, contextSeq: c?.first_kept_seq ?? 0 }).where(eq(threads.id, threadId));
}

