import { Elysia } from "elysia";
import { Forbidden, RateLimited } from "../errors";
import type { Principal } from "../auth/principal";
import { readJson } from "./body";
import type { Services } from "../services";

const principals = new WeakMap<Request, Principal>();

async function authenticate(s: Services, request: Request): Promise<Principal> {
  let principal = principals.get(request);
  if (!principal) principals.set(request, (principal = await s.auth.authenticate(request.headers.get("authorization"))));
  return principal;
}

/**
 * Resolves the bearer token of every route of the feature that uses it into `principal`,
 * before the route's query or body is validated: a caller without a token learns nothing.
 */
export const requireAuth = (s: Services) =>
  new Elysia({ name: "auth" }).derive({ as: "scoped" }, async ({ request }) => ({ principal: await authenticate(s, request) }));

/**
 * A route's JSON body parser that checks the token first (and what else `allowed` asks of the
 * caller, such as admin rights), since parsing and validation come before everything else.
 */
export const authedJson =
  (s: Services, allowed?: (p: Principal) => void) =>
  async ({ request }: { request: Request }): Promise<unknown> => {
    const principal = await authenticate(s, request);
    allowed?.(principal);
    return readJson(request);
  };

export function requireAdmin(p: Principal): void {
  if (p.role !== "owner" && p.role !== "admin") throw new Forbidden();
}

/** Counts a turn-starting request against the user's shared Responses/chat budget. */
export async function takeTurnBudget(s: Services, p: Principal): Promise<void> {
  const wait = await s.turnLimiter.take(p.userId);
  if (wait) throw new RateLimited(wait);
}
