import { AuthFailure } from "../errors";
import type { Db } from "../store/db";
import { findUserBySessionHash } from "../store/sessions";
import { findUserByTokenHash, OWNER_ID, type Role, type UserRow } from "../store/users";
import { timingSafeEqual } from "node:crypto";
import { hashToken, SESSION_TOKEN_PREFIX, tokenDigest } from "./tokens";

export interface Principal {
  userId: string;
  role: Role;
  /** True for the instance token: operator rights, including configuration. */
  operator: boolean;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 1000;

/** The token of an `Authorization: Bearer …` header. */
export const bearerOf = (authorization: string | null | undefined) => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];

/** Resolves bearer tokens to principals: the instance token, a per-user token's hash, or an SSO session bearer's. */
export class Authenticator {
  readonly #cache = new Map<string, { principal: Principal; until: number }>();
  /** The instance token's digest: a bearer is hashed once, and the digest compared in constant time. */
  readonly #instanceDigest: Buffer;

  constructor(
    private readonly db: Db,
    instanceToken: string,
  ) {
    this.#instanceDigest = tokenDigest(instanceToken);
  }

  async authenticate(authorization: string | null | undefined): Promise<Principal> {
    const token = bearerOf(authorization);
    if (!token) throw AuthFailure.unauthorized();
    const digest = tokenDigest(token);
    if (timingSafeEqual(digest, this.#instanceDigest)) return { userId: OWNER_ID, role: "owner", operator: true };
    const hash = digest.toString("hex");
    const cached = this.#cache.get(hash);
    if (cached && cached.until > Date.now()) return cached.principal;
    let found: { user: UserRow; expiresAt?: number } | undefined;
    try {
      if (token.startsWith(SESSION_TOKEN_PREFIX)) found = await findUserBySessionHash(this.db, hash);
      else {
        const user = await findUserByTokenHash(this.db, hash);
        found = user && { user };
      }
    } catch {
      throw AuthFailure.storeDown();
    }
    if (found?.user.status !== "active") throw AuthFailure.unauthorized();
    const principal: Principal = { userId: found.user.id, role: found.user.role, operator: false };
    if (this.#cache.size >= CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(hash, { principal, until: Math.min(Date.now() + CACHE_TTL_MS, found.expiresAt ?? Infinity) });
    return principal;
  }

  /** Forgets one token (a session that was signed out). */
  forgetToken(token: string): void {
    this.#cache.delete(hashToken(token));
  }

  /** Forgets the user's cached tokens: a suspension, a role change or a revocation applies to the next request. */
  forget(userId: string): void {
    for (const [hash, entry] of this.#cache) if (entry.principal.userId === userId) this.#cache.delete(hash);
  }
}
