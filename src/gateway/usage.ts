import { Elysia } from "elysia";
import { requireAuth } from "../http/auth";
import type { Services } from "../services";
import { usageFor } from "../usage/report";
import { UsageQuery, UsageReport } from "../usage/wire";

/** GET /api/usage: what turns cost, by day, user, model, channel or routine. */
export function usageRoutes(s: Services) {
  return new Elysia({ name: "usage" })
    .use(requireAuth(s))
    .get(
      "/api/usage",
      ({ principal, query }) => usageFor({ db: s.db, budgets: s.budgets, ledger: s.agent.deps.usage?.ledger }, { userId: principal.userId, admin: principal.role !== "member" }, query),
      { query: UsageQuery, response: { 200: UsageReport } },
    );
}
