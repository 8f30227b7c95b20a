import { Elysia } from "elysia";
import { Forbidden, RateLimited } from "../errors";
import type { Principal } from "../auth/principal";
import type { Services } from "./services";

/** Resolves the bearer token of every route of the feature that uses it into `principal`. */
export const requireAuth = (s: Services) =>
  new Elysia({ name: "auth" }).resolve({ as: "scoped" }, async ({ request }) => ({
    principal: await s.auth.authenticate(request.headers.get("authorization")),
  }));

export function requireAdmin(p: Principal): void {
  if (p.role !== "owner" && p.role !== "admin") throw new Forbidden();
}

/** Counts a turn-starting request against the user's shared Responses/chat budget. */
export function takeTurnBudget(s: Services, p: Principal): void {
  const wait = s.turnLimiter.take(p.userId);
  if (wait) throw new RateLimited(wait);
}
