import { Forbidden, InvalidRequest } from "../errors";
import type { Db } from "../store/db";
import { GROUPS, usageReport, type GroupBy, type UsageTotals } from "../store/usage";
import type { Budgets } from "./budgets";
import type { UsageLedger } from "./ledger";
import type { UsageQuery, UsageReport } from "./wire";

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A moment a query names: a date (`2026-11-24`, the local day: its start for `from`, its end
 * for `to`) or an ISO 8601 date-time.
 */
function moment(value: string, field: string, edge: "start" | "end"): number {
  const ms = DATE.test(value) ? new Date(`${value}T00:00:00`).getTime() + (edge === "end" ? 86_400_000 - 1 : 0) : Date.parse(value);
  if (!Number.isFinite(ms)) throw new InvalidRequest(`\`${field}\` must be a date (YYYY-MM-DD) or an ISO 8601 date-time, not '${value}'.`);
  return ms;
}

const wire = (t: UsageTotals) => ({
  turns: t.turns,
  input_tokens: t.inputTokens,
  cached_tokens: t.cachedTokens,
  output_tokens: t.outputTokens,
  reasoning_tokens: t.reasoningTokens,
  cost_usd: t.costMicroUsd / 1e6,
});

/**
 * What turns cost, for a caller: admins and owners see every user's (or one's, with
 * `user_id`), others their own. By default from the start of this month until now, by day.
 */
export async function usageFor(
  deps: { db: Db; budgets?: Budgets; ledger?: UsageLedger },
  caller: { userId: string; admin: boolean },
  q: UsageQuery,
  now = Date.now(),
): Promise<UsageReport> {
  const groupBy = (q.group_by ?? "day") as GroupBy;
  if (!GROUPS.includes(groupBy)) throw new InvalidRequest(`\`group_by\` must be one of ${GROUPS.join(", ")}, not '${q.group_by}'.`);
  const start = new Date(now);
  const from = q.from ? moment(q.from, "from", "start") : new Date(start.getFullYear(), start.getMonth(), 1).getTime();
  const to = q.to ? moment(q.to, "to", "end") : now;
  if (from > to) throw new InvalidRequest("`from` must not be after `to`.");
  if (!caller.admin && q.user_id !== undefined && q.user_id !== caller.userId) throw new Forbidden("Only an admin or owner sees other users' usage.");
  const userId = caller.admin ? q.user_id : caller.userId;
  await deps.ledger?.flush();
  const report = await usageReport(deps.db, { from, to, groupBy, userId });
  const budgets = (await deps.budgets?.status(caller.userId, now)) ?? [];
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    group_by: groupBy,
    rows: report.rows.map((r) => ({ key: r.key, ...wire(r) })),
    total: wire(report.total),
    budgets: budgets.map((b) => ({ scope: b.scope, period: b.period, limit_usd: b.limitUsd, spent_usd: b.spentUsd })),
  };
}
