import { and, countDistinct, eq, gte, lte, sql, sum } from "drizzle-orm";
import type { Db } from "./db";
import { insertRows } from "./insert-rows";
import type { turnUsage } from "./schema";

export type UsageRow = typeof turnUsage.$inferInsert;

/** The local date of a moment, as `turn_usage.day` keeps it: YYYY-MM-DD. */
export function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** The first day of the local month of `day`. */
export const monthStart = (day: string) => `${day.slice(0, 7)}-01`;

export async function insertUsage(db: Db, rows: UsageRow[]): Promise<void> {
  const { turnUsage } = db.t;
  // flat SQL: a write carries up to 256 turns' rows, and drizzle's builder spent about a microsecond a value
  if (rows.length) await db.engine.batch(db, (q) => insertRows(q, db.engine, turnUsage, rows));
}

/** What was spent (micro-USD) on `day` and in its month: by one user, or by everyone. */
export async function spent(db: Db, day: string, userId?: string): Promise<{ day: number; month: number }> {
  const { turnUsage } = db.t;
  const [row] = await db
    .select({
      day: sql<number>`coalesce(sum(case when ${turnUsage.day} = ${day} then ${turnUsage.costMicroUsd} end), 0)`,
      month: sql<number>`coalesce(sum(${turnUsage.costMicroUsd}), 0)`,
    })
    .from(turnUsage)
    .where(and(gte(turnUsage.day, monthStart(day)), userId === undefined ? undefined : eq(turnUsage.userId, userId)));
  return { day: Number(row?.day ?? 0), month: Number(row?.month ?? 0) };
}

export const GROUPS = ["day", "user", "model", "channel", "routine"] as const;
export type GroupBy = (typeof GROUPS)[number];

const keys = (turnUsage: Db["t"]["turnUsage"]) =>
  ({
    day: turnUsage.day,
    user: turnUsage.userId,
    model: turnUsage.model,
    channel: turnUsage.channel,
    routine: turnUsage.routineId,
  }) as const;

export interface UsageTotals {
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costMicroUsd: number;
}

/**
 * Usage between two moments (`from` and `to` as ms since the epoch, both included), grouped;
 * one user's or everyone's. A turn that more than one model answered counts once in `turns`
 * of the total, and once for each of its models when grouped by model.
 */
export async function usageReport(
  db: Db,
  q: { from: number; to: number; groupBy: GroupBy; userId?: string },
): Promise<{ rows: (UsageTotals & { key: string | null })[]; total: UsageTotals }> {
  const { turnUsage } = db.t;
  const where = and(gte(turnUsage.createdAt, q.from), lte(turnUsage.createdAt, q.to), q.userId === undefined ? undefined : eq(turnUsage.userId, q.userId));
  const totals = {
    turns: countDistinct(turnUsage.responseId),
    inputTokens: sum(turnUsage.inputTokens),
    cachedTokens: sum(turnUsage.cachedTokens),
    outputTokens: sum(turnUsage.outputTokens),
    reasoningTokens: sum(turnUsage.reasoningTokens),
    costMicroUsd: sum(turnUsage.costMicroUsd),
  };
  const key = keys(turnUsage)[q.groupBy];
  const [rows, [total]] = await Promise.all([
    db.select({ key, ...totals }).from(turnUsage).where(where).groupBy(key).orderBy(key),
    db.select(totals).from(turnUsage).where(where),
  ]);
  const numbers = (r: Record<keyof UsageTotals, unknown>): UsageTotals => ({
    turns: Number(r.turns ?? 0),
    inputTokens: Number(r.inputTokens ?? 0),
    cachedTokens: Number(r.cachedTokens ?? 0),
    outputTokens: Number(r.outputTokens ?? 0),
    reasoningTokens: Number(r.reasoningTokens ?? 0),
    costMicroUsd: Number(r.costMicroUsd ?? 0),
  });
  return { rows: rows.map((r) => ({ key: r.key, ...numbers(r) })), total: numbers(total ?? ({} as Record<keyof UsageTotals, unknown>)) };
}
