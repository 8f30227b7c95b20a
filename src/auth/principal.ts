import { AuthFailure } from "../errors";
import type { Db } from "../store/db";
import { findUserByTokenHash, OWNER_ID, type Role } from "../store/users";
import { hashToken, sameSecret } from "./tokens";

export interface Principal {
  userId: string;
  role: Role;
  /** True for the instance token: operator rights, including configuration. */
  operator: boolean;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 1000;

/** Resolves bearer tokens to principals: the instance token, or a per-user token's hash. */
export class Authenticator {
  readonly #cache = new Map<string, { principal: Principal; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly instanceToken: string,
  ) {}

  async authenticate(authorization: string | null | undefined): Promise<Principal> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
    if (!token) throw AuthFailure.unauthorized();
    if (sameSecret(token, this.instanceToken)) return { userId: OWNER_ID, role: "owner", operator: true };
    const hash = hashToken(token);
    const cached = this.#cache.get(hash);
    if (cached && cached.until > Date.now()) return cached.principal;
    let user;
    try {
      user = await findUserByTokenHash(this.db, hash);
    } catch {
      throw AuthFailure.storeDown();
    }
    if (user?.status !== "active") throw AuthFailure.unauthorized();
    const principal: Principal = { userId: user.id, role: user.role, operator: false };
    if (this.#cache.size >= CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(hash, { principal, until: Date.now() + CACHE_TTL_MS });
    return principal;
  }

  /** Forgets the user's cached tokens: a suspension, a role change or a revocation applies to the next request. */
  forget(userId: string): void {
    for (const [hash, entry] of this.#cache) if (entry.principal.userId === userId) this.#cache.delete(hash);
  }
}
