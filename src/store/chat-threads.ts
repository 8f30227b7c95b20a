// What the chat UIs read and change of a user's threads beyond the turns themselves: search,
// renaming, and the approval decisions a thread's record shows.
import { and, desc, eq, exists, isNotNull, or, sql } from "drizzle-orm";
import type { GateData } from "../conversation/gates";
import type { ApprovalDecision } from "../conversation/items";
import type { Db } from "./db";
import type { ThreadListing } from "./conversations";

/**
 * A user's threads whose title or one of whose messages holds `query` (case-insensitive),
 * most recently active first, shaped as `listThreads` shapes them.
 */
export async function searchThreads(db: Db, userId: string, query: string, limit = 200): Promise<ThreadListing[]> {
  const { gates, items, threads } = db.t;
  const q = query.toLowerCase();
  const inMessages = db
    .select({ one: sql`1` })
    .from(items)
    .where(and(eq(items.threadId, threads.id), eq(items.type, "message"), db.engine.contains(sql`lower(${db.engine.jsonText(items.data, "content")})`, q)));
  const rows = await db
    .select({ id: threads.id, title: threads.title, channel: threads.channel, createdAt: threads.createdAt, updatedAt: threads.updatedAt, waiting: gates.kind })
    .from(threads)
    .leftJoin(gates, eq(gates.threadId, threads.id))
    .where(and(eq(threads.userId, userId), or(db.engine.contains(sql`lower(coalesce(${threads.title}, ''))`, q), exists(inMessages))))
    .orderBy(desc(threads.updatedAt), desc(db.engine.insertionOrder(threads)))
    .limit(limit);
  return rows.map((r) => ({ ...r, waiting: r.waiting ?? null }));
}

export async function renameThread(db: Db, threadId: string, title: string): Promise<void> {
  const { threads } = db.t;
  await db.update(threads).set({ title }).where(eq(threads.id, threadId));
}

/** A person's answer to an approval prompt, kept in the `meta` of the turn it resumed. */
export interface DecisionRecord {
  call_id: string;
  tool: string;
  arguments: string;
  decision: ApprovalDecision;
  /** The user who decided (the thread's owner: only they can). */
  decided_by: string;
  /** Where the call's data would have gone, and an identity file's change, as the prompt showed them. */
  destination?: string;
  diff?: string;
}

/** The approval decisions taken on a thread, each with when (Unix seconds), oldest first. */
export async function approvalDecisions(db: Db, threadId: string): Promise<(DecisionRecord & { decided_at: number })[]> {
  const { responses } = db.t;
  const rows = await db
    .select({ meta: responses.meta, createdAt: responses.createdAt })
    .from(responses)
    .where(and(eq(responses.threadId, threadId), isNotNull(responses.meta), sql`${db.engine.jsonText(responses.meta, "approval", "call_id")} is not null`))
    .orderBy(responses.createdAt);
  return rows.map((r) => ({ ...(r.meta!.approval as DecisionRecord), decided_at: r.createdAt }));
}

/** The thread's failed turns (stopped ones too), each with the id of the last item it left, if any. */
export async function failedTurns(db: Db, threadId: string): Promise<{ id: string; error: { code: string; message: string } | null; lastItem: string | null }[]> {
  const { items, responses } = db.t;
  const last = db
    .select({ id: items.id })
    .from(items)
    .where(eq(items.responseId, responses.id))
    .orderBy(desc(items.seq))
    .limit(1);
  return db
    .select({ id: responses.id, error: responses.error, lastItem: sql<string | null>`(${last})` })
    .from(responses)
    .where(and(eq(responses.threadId, threadId), eq(responses.status, "failed")));
}

/**
 * What the approval prompt a thread waits on shows besides the call, read from the gate as
 * stored: where the data would go, and an identity file's change (empty when it has neither).
 */
export async function promptFacts(db: Db, threadId: string): Promise<{ destination?: string; diff?: string }> {
  const { gates } = db.t;
  const [row] = await db.select({ kind: gates.kind, data: gates.data }).from(gates).where(eq(gates.threadId, threadId));
  if (row?.kind !== "approval") return {};
  const { destination, diff } = (row.data as GateData<"approval">).details;
  return { ...(destination ? { destination } : {}), ...(diff ? { diff } : {}) };
}
