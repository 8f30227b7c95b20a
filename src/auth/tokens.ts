import { randomBytes, timingSafeEqual } from "node:crypto";

/** A fresh secret: 32 random bytes as hex, with an optional recognisable prefix. */
export function newToken(prefix = ""): string {
  return prefix + randomBytes(32).toString("hex");
}

/** SSO session bearers start with this; per-user tokens with `svc_` (auth/users.ts). */
export const SESSION_TOKEN_PREFIX = "sso_";

/**
 * A token's SHA-256 digest: what is stored of a user's token, and what the instance token is
 * compared by. Every authenticated request makes one: with `node:crypto`'s `createHash`
 * (which makes a stream object for each hash) each young-generation collection under such
 * requests took 0.5 ms longer than with Bun's hasher (docs/performance.md).
 */
export function tokenDigest(token: string): Buffer {
  return Bun.CryptoHasher.hash("sha256", token);
}

export function hashToken(token: string): string {
  return tokenDigest(token).toString("hex");
}

/** Constant-time equality of two strings (hashed first so lengths never leak). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(tokenDigest(a), tokenDigest(b));
}
