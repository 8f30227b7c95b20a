import { and, asc, desc, eq, gt, isNull, lt, sql } from "drizzle-orm";
import type { ConversationItem } from "../conversation/items";
import type { ExternalTool } from "../conversation/items";
import type { Db } from "./db";
import type { Orm, StoreWrite } from "./engine";
import { notCompaction } from "./compactions";
import { insertRows } from "./insert-rows";
import type { responses, threads } from "./schema";
import { gateData, storedGate, type Gate, type GateData, type GateKind } from "../conversation/gates";

export type ThreadRow = typeof threads.$inferSelect;
export type ResponseRow = typeof responses.$inferSelect;
export type { Gate, GateKind };

/** The thread if it is this user's: another user's thread reads as none, whatever asks. */
export async function ownThread(db: Db, userId: string, threadId: string): Promise<ThreadRow | undefined> {
  const thread = await getThread(db, threadId);
  return thread?.userId === userId ? thread : undefined;
}

export async function getThread(db: Db, id: string): Promise<ThreadRow | undefined> {
  const { threads } = db.t;
  return (await db.select().from(threads).where(eq(threads.id, id)).limit(1))[0];
}

export async function loadItems(db: Db, threadId: string): Promise<ConversationItem[]> {
  const { items } = db.t;
  const rows = await db
    .select({ data: items.data })
    .from(items)
    .where(and(eq(items.threadId, threadId), notCompaction(db)))
    .orderBy(asc(items.seq));
  return rows.map((r) => r.data as ConversationItem);
}

export async function getGate(db: Db, threadId: string): Promise<Gate | undefined> {
  const { gates } = db.t;
  const row = (await db.select().from(gates).where(eq(gates.threadId, threadId)).limit(1))[0];
  return row && storedGate(row);
}

export async function getResponse(db: Db, id: string): Promise<ResponseRow | undefined> {
  const { responses } = db.t;
  return (await db.select().from(responses).where(eq(responses.id, id)).limit(1))[0];
}

/** A response of this user's that was stored and not deleted: what retrieval and chaining may use. */
export async function findResponse(db: Db, id: string, userId: string): Promise<ResponseRow | undefined> {
  const row = await getResponse(db, id);
  return row && row.userId === userId && row.deletedAt === null ? row : undefined;
}

/** A response's items, told apart: what the caller sent and what the turn produced. */
export async function loadResponseItems(db: Db, responseId: string): Promise<{ input: ConversationItem[]; output: ConversationItem[] }> {
  const { items } = db.t;
  const rows = await db
    .select({ data: items.data, input: items.input })
    .from(items)
    .where(eq(items.responseId, responseId))
    .orderBy(asc(items.seq));
  const out = { input: [] as ConversationItem[], output: [] as ConversationItem[] };
  for (const r of rows) (r.input ? out.input : out.output).push(r.data as ConversationItem);
  return out;
}

/** Marks a response deleted: retrieval and chaining no longer find it; the thread keeps its items. */
export async function deleteResponse(db: Db, id: string): Promise<void> {
  const { responses } = db.t;
  await db.update(responses).set({ deletedAt: Math.floor(Date.now() / 1000) }).where(eq(responses.id, id));
}

/** An item of one of this user's stored responses, by id (an `item_reference`), or of one thread. */
export async function findItem(db: Db, itemId: string, userId: string, threadId?: string): Promise<ConversationItem | undefined> {
  const { items, responses, threads } = db.t;
  const row = (
    await db
      .select({ data: items.data })
      .from(items)
      .innerJoin(threads, eq(items.threadId, threads.id))
      .leftJoin(responses, eq(items.responseId, responses.id))
      .where(and(eq(items.id, itemId), eq(threads.userId, userId), isNull(responses.deletedAt), notCompaction(db), threadId ? eq(items.threadId, threadId) : undefined))
      .limit(1)
  )[0];
  return row ? (row.data as ConversationItem) : undefined;
}

/** A page of a thread's items (compactions left out), in `order`, starting after the item `after` (Conversations API). */
export async function pageItems(
  db: Db,
  threadId: string,
  opts: { limit: number; order: "asc" | "desc"; after?: string },
): Promise<{ items: ConversationItem[]; hasMore: boolean } | undefined> {
  const { items } = db.t;
  let from: number | undefined;
  if (opts.after) {
    const at = (await db.select({ seq: items.seq }).from(items).where(and(eq(items.threadId, threadId), eq(items.id, opts.after))).limit(1))[0];
    if (!at) return undefined;
    from = at.seq;
  }
  const rows = await db
    .select({ data: items.data })
    .from(items)
    .where(and(eq(items.threadId, threadId), notCompaction(db), from === undefined ? undefined : opts.order === "asc" ? gt(items.seq, from) : lt(items.seq, from)))
    .orderBy(opts.order === "asc" ? asc(items.seq) : desc(items.seq))
    .limit(opts.limit + 1);
  return { items: rows.slice(0, opts.limit).map((r) => r.data as ConversationItem), hasMore: rows.length > opts.limit };
}

/**
 * Adds items at the end of a thread (creating it, as one of the Responses API's channel, when
 * `create` is given), outside any turn: the caller holds the thread's lock. `responseId` is what the items are filed under.
 */
export async function appendItems(
  db: Db,
  t: { threadId: string; userId: string; responseId: string; items: ConversationItem[]; create?: { metadata: Record<string, string> | null; title?: string } },
): Promise<void> {
  const { items, threads } = db.t;
  const now = Math.floor(Date.now() / 1000);
  const [last] = t.create ? [undefined] : await db.select({ seq: sql<number>`max(${items.seq})` }).from(items).where(eq(items.threadId, t.threadId));
  const start = (last?.seq ?? -1) + 1;
  await db.engine.batch(db, (q) => [
    t.create
      ? q.insert(threads).values({ id: t.threadId, userId: t.userId, title: t.create.title ?? null, metadata: t.create.metadata, channel: "responses", createdAt: now, updatedAt: now })
      : q.update(threads).set({ updatedAt: now }).where(eq(threads.id, t.threadId)),
    ...(t.items.length
      ? [
          q.insert(items).values(
            t.items.map((item, i) => ({
              id: item.id,
              threadId: t.threadId,
              responseId: t.responseId,
              seq: start + i,
              type: item.type,
              data: item,
              input: true,
              createdAt: now,
            })),
          ),
        ]
      : []),
  ]);
}

/** Deletes one item of a thread (not a summary): false when the thread holds no such item. */
export async function deleteItem(db: Db, threadId: string, itemId: string): Promise<boolean> {
  const { items, threads } = db.t;
  const now = Math.floor(Date.now() / 1000);
  const [deleted] = await db.engine.batch(db, (q) => [
    q.delete(items).where(and(eq(items.threadId, threadId), eq(items.id, itemId), notCompaction(db))).returning({ id: items.id }),
    q.update(threads).set({ updatedAt: now }).where(eq(threads.id, threadId)),
  ]);
  return (deleted as unknown[]).length > 0;
}

export async function setThreadMetadata(db: Db, threadId: string, metadata: Record<string, string>): Promise<void> {
  const { threads } = db.t;
  await db.update(threads).set({ metadata }).where(eq(threads.id, threadId));
}

/**
 * Deletes a thread with everything that hangs on it: its items, responses and gate (by the
 * foreign keys), and the link webhook jobs keep to it, so that their conversation starts anew.
 */
export async function deleteThread(db: Db, threadId: string): Promise<void> {
  const { jobs, threads } = db.t;
  await db.engine.batch(db, (q) => [q.update(jobs).set({ threadId: null }).where(eq(jobs.threadId, threadId)), q.delete(threads).where(eq(threads.id, threadId))]);
}

/** Everything one turn writes; committed in a single transaction. */
export interface TurnRecord {
  thread: { id: string; userId: string; isNew: boolean; tools: ExternalTool[] | null; title?: string; channel?: string };
  response: Omit<ResponseRow, "threadId" | "userId" | "deletedAt" | "jobId"> & { jobId?: string | null };
  /** New items with their sequence numbers in the thread, and whether the caller sent them. */
  items: { seq: number; item: ConversationItem; input: boolean }[];
  /** The gate the thread waits on after this turn, or null when it waits on nothing. */
  gate: Gate | null;
  /** `acknowledgeTurn` stored the thread, the response and the input already: they are updated, and `items` are only what the turn produced. */
  acknowledged?: boolean;
}

/**
 * What a turn whose caller is answered before it ends stores before that answer: its thread,
 * its input items, and its response with the outcome it has if the service dies meanwhile.
 * `commitTurn` (with `acknowledged`) then replaces the response and adds what the turn
 * produced. An input that answers the thread's pending call takes the gate along, so that a
 * second answer to it is refused rather than stored twice.
 */
export async function acknowledgeTurn(db: Db, t: Pick<TurnRecord, "thread" | "response" | "items"> & { answersGate: boolean }): Promise<void> {
  const { gates, responses } = db.t;
  await db.engine.batch(db, (q) => [
    threadWrite(q, db.t, t),
    q.insert(responses).values(responseRow(t)),
    ...itemWrites(q, db.t, t),
    ...(t.answersGate ? [q.delete(gates).where(eq(gates.threadId, t.thread.id))] : []),
  ]);
}

/**
 * Stores a turn: its thread, its response, its items and the gate it leaves, in one
 * transaction. Turns that finish together (in the same turn of the event loop, or while the
 * previous commit is being written) are written in one transaction between them, their rows
 * in one statement per table: under load a turn's commit then costs a fraction of one alone
 * (docs/performance.md). A group that fails is written again turn by turn, so that only the
 * turn at fault fails.
 */
export function commitTurn(db: Db, t: TurnRecord): Promise<void> {
  let queue = commitQueues.get(db);
  if (!queue) commitQueues.set(db, (queue = new CommitQueue(db)));
  return queue.add(t);
}

const commitQueues = new WeakMap<Db, CommitQueue>();

class CommitQueue {
  #waiting: { t: TurnRecord; done: PromiseWithResolvers<void> }[] = [];
  #writing = false;
  #scheduled = false;

  constructor(readonly db: Db) {}

  add(t: TurnRecord): Promise<void> {
    const done = Promise.withResolvers<void>();
    this.#waiting.push({ t, done });
    this.#schedule();
    return done.promise;
  }

  #schedule(): void {
    if (this.#writing || this.#scheduled || !this.#waiting.length) return;
    this.#scheduled = true;
    // two turns of the event loop: in the first, what the turns wrote to their streams (the
    // last text deltas) goes out to the sockets; a commit in it would hold those bytes back
    // while SQLite works (it runs on this thread)
    setImmediate(() => setImmediate(() => void this.#write()));
  }

  async #write(): Promise<void> {
    this.#scheduled = false;
    this.#writing = true;
    const group = this.#waiting.splice(0);
    try {
      await writeTurns(this.db, group.map((g) => g.t));
      for (const g of group) g.done.resolve();
    } catch (e) {
      if (group.length === 1) group[0]!.done.reject(e);
      else for (const g of group) await writeTurns(this.db, [g.t]).then(() => g.done.resolve(), g.done.reject);
    } finally {
      this.#writing = false;
      this.#schedule();
    }
  }
}

/** Turns' rows in one transaction: new threads, responses and items each in one insert. */
function writeTurns(db: Db, turns: TurnRecord[]): Promise<unknown> {
  const { gates, responses, threads, items } = db.t;
  return db.engine.batch(db, (q) => {
    const writes: StoreWrite[] = [];
    const fresh = (t: TurnRecord) => t.thread.isNew && !t.acknowledged;
    writes.push(...insertRows(q, db.engine, threads, turns.filter(fresh).map(threadRow)));
    for (const t of turns) if (!fresh(t)) writes.push(threadTouch(q, db.t, t));
    writes.push(...insertRows(q, db.engine, responses, turns.filter((t) => !t.acknowledged).map(responseRow)));
    for (const t of turns) if (t.acknowledged) writes.push(q.update(responses).set(responseRow(t)).where(eq(responses.id, t.response.id)));
    writes.push(...insertRows(q, db.engine, items, turns.flatMap((t) => itemRows(t.thread.id, t.response.id, t.response.createdAt, t.items))));
    for (const t of turns) {
      // a thread this turn made has no gate yet to replace
      if (!fresh(t)) writes.push(q.delete(gates).where(eq(gates.threadId, t.thread.id)));
      if (t.gate) {
        const g = t.gate;
        writes.push(q.insert(gates).values({ threadId: t.thread.id, kind: g.kind, callId: g.callId, responseId: g.responseId, data: gateData(g), createdAt: t.response.createdAt }));
      }
    }
    return writes;
  });
}

/** Items a durable turn has produced so far, stored as it goes (before its commit writes the rest). */
export async function storeTurnItems(
  db: Db,
  t: { threadId: string; responseId: string; createdAt: number; items: { seq: number; item: ConversationItem; input: boolean }[] },
): Promise<void> {
  const { items } = db.t;
  if (!t.items.length) return;
  await db.insert(items).values(itemRows(t.threadId, t.responseId, t.createdAt, t.items));
}

/** The insert of a turn's new items, filed under its response (none when there are none). */
function itemWrites(q: Orm, { items }: Db["t"], t: Pick<TurnRecord, "thread" | "response" | "items">) {
  return t.items.length ? [q.insert(items).values(itemRows(t.thread.id, t.response.id, t.response.createdAt, t.items))] : [];
}

const itemRows = (threadId: string, responseId: string, createdAt: number, rows: TurnRecord["items"]) =>
  rows.map(({ seq, item, input }) => ({ id: item.id, threadId, responseId, seq, type: item.type, data: item, input, createdAt }));

const responseRow = (t: Pick<TurnRecord, "thread" | "response">) => ({ ...t.response, threadId: t.thread.id, userId: t.thread.userId });

/** A new thread inserted, or a known one touched, by a turn. */
function threadWrite(q: Orm, t: Db["t"], turn: Pick<TurnRecord, "thread" | "response" | "acknowledged">) {
  return turn.thread.isNew && !turn.acknowledged ? q.insert(t.threads).values(threadRow(turn)) : threadTouch(q, t, turn);
}

/** The row of a thread a turn made. */
const threadRow = (t: Pick<TurnRecord, "thread" | "response">) => ({
  id: t.thread.id,
  userId: t.thread.userId,
  title: t.thread.title ?? null,
  channel: t.thread.channel ?? null,
  tools: t.thread.tools,
  createdAt: t.response.createdAt,
  updatedAt: t.response.createdAt,
});

/** A known thread, touched by a turn. */
const threadTouch = (q: Orm, { threads }: Db["t"], t: Pick<TurnRecord, "thread" | "response">) =>
  q.update(threads).set({ updatedAt: t.response.createdAt, tools: t.thread.tools }).where(eq(threads.id, t.thread.id));

/** A thread as a user's list shows it (the chat endpoints turn it into their wire shape). */
export interface ThreadListing {
  id: string;
  title: string | null;
  createdAt: number;
  updatedAt: number;
  waiting: GateKind | null;
  channel: string | null;
}

/** A user's threads, most recently active first, with the gate each waits on. */
export async function listThreads(db: Db, userId: string, limit = 200): Promise<ThreadListing[]> {
  const { gates, threads } = db.t;
  const rows = await db
    .select({ id: threads.id, title: threads.title, channel: threads.channel, createdAt: threads.createdAt, updatedAt: threads.updatedAt, waiting: gates.kind })
    .from(threads)
    .leftJoin(gates, eq(gates.threadId, threads.id))
    .where(eq(threads.userId, userId))
    .orderBy(desc(threads.updatedAt), desc(db.engine.insertionOrder(threads)))
    .limit(limit);
  return rows.map((r) => ({ ...r, waiting: r.waiting ?? null }));
}

export interface ApprovalGate {
  threadId: string;
  callId: string;
  tool: string;
  arguments: string;
  /** Where the call could carry data out (from a tainted turn), or an identity file's change. */
  destination?: string;
  diff?: string;
  createdAt: number;
}

/** The tool calls waiting for this user's approval, newest first. */
export async function listApprovalGates(db: Db, userId: string): Promise<ApprovalGate[]> {
  const { gates, threads } = db.t;
  const rows = await db
    .select({ threadId: gates.threadId, callId: gates.callId, data: gates.data, createdAt: gates.createdAt })
    .from(gates)
    .innerJoin(threads, eq(gates.threadId, threads.id))
    .where(and(eq(threads.userId, userId), eq(gates.kind, "approval")))
    // created_at is in seconds: the insertion order orders gates of the same second
    .orderBy(desc(gates.createdAt), desc(db.engine.insertionOrder(gates)));
  return rows.map((r) => {
    const { tool, arguments: args, destination, diff } = (r.data as GateData<"approval">).details;
    return { threadId: r.threadId, callId: r.callId, tool, arguments: args, destination, diff, createdAt: r.createdAt };
  });
}
