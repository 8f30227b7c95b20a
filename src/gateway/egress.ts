import { Elysia } from "elysia";
import { InvalidRequest } from "../errors";
import { requireAuth } from "../http/auth";
import { isoFromMs } from "../http/time";
import type { Services } from "../services";
import { listEgress, type EgressRow } from "../store/egress";
import { EgressList, type EgressRecord } from "./egress-wire";

const MAX_LIMIT = 200;

const record = (r: EgressRow): EgressRecord => ({
  id: r.id,
  tool: r.tool,
  destination: r.destination,
  thread_id: r.threadId,
  response_id: r.responseId,
  approved_by: r.approvedBy,
  created_at: isoFromMs(r.createdAt),
});

/** GET /api/egress?limit=&before=: the caller's own egress log, newest first. */
export function egressRoutes(s: Services) {
  return new Elysia({ name: "egress" })
    .use(requireAuth(s))
    .get("/api/egress", async ({ request, principal }) => {
      const params = new URL(request.url).searchParams;
      const limit = integer(params.get("limit"), "limit", 50, MAX_LIMIT);
      const before = params.has("before") ? integer(params.get("before"), "before", 0, Number.MAX_SAFE_INTEGER) : undefined;
      const rows = await listEgress(s.db, principal.userId, { limit: limit + 1, before });
      return { egress: rows.slice(0, limit).map(record), has_more: rows.length > limit };
    }, { response: EgressList });
}

function integer(raw: string | null, name: string, fallback: number, max: number): number {
  if (raw === null || raw === "") return fallback;
  if (!/^\d{1,16}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw new InvalidRequest(`\`${name}\` must be an integer from 1 to ${max}.`);
  return Number(raw);
}
