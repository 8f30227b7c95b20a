import { and, desc, eq, lt } from "drizzle-orm";
import type { Db } from "./db";
import type { egressLog } from "./schema";

export type EgressEntry = Omit<typeof egressLog.$inferInsert, "id">;
export type EgressRow = typeof egressLog.$inferSelect;

/** Keeps one call that could carry data out of the box and ran. */
export async function recordEgress(db: Db, entry: EgressEntry): Promise<void> {
  const { egressLog } = db.t;
  await db.insert(egressLog).values(entry);
}

/** A user's egress log, newest first; `before` pages back from an entry's id. */
export async function listEgress(db: Db, userId: string, opts: { limit: number; before?: number }): Promise<EgressRow[]> {
  const { egressLog } = db.t;
  return db
    .select()
    .from(egressLog)
    .where(and(eq(egressLog.userId, userId), opts.before !== undefined ? lt(egressLog.id, opts.before) : undefined))
    .orderBy(desc(egressLog.id))
    .limit(opts.limit);
}
