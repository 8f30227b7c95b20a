import { eq } from "drizzle-orm";
import type { Db } from "./db";
import { tokens, users } from "./schema";

export type Role = "owner" | "admin" | "member";
export type UserRow = typeof users.$inferSelect;

/** The user that the instance token speaks for. */
export const OWNER_ID = "owner";

export async function ensureOwner(db: Db): Promise<void> {
  const now = new Date().toISOString();
  await db
    .insert(users)
    .values({ id: OWNER_ID, role: "owner", displayName: "Owner", createdAt: now, updatedAt: now })
    .onConflictDoNothing();
}

export async function createUserWithToken(
  db: Db,
  user: { id: string; role: Role; email?: string; displayName?: string },
  token: { id: string; hash: string },
): Promise<UserRow> {
  const now = new Date().toISOString();
  const row: UserRow = {
    id: user.id,
    email: user.email ?? null,
    displayName: user.displayName ?? null,
    status: "active",
    role: user.role,
    createdAt: now,
    updatedAt: now,
  };
  await db.batch([
    db.insert(users).values(row),
    db.insert(tokens).values({ id: token.id, userId: user.id, hash: token.hash, createdAt: now }),
  ]);
  return row;
}

export async function findUserByTokenHash(db: Db, hash: string): Promise<UserRow | undefined> {
  const rows = await db
    .select({ user: users })
    .from(tokens)
    .innerJoin(users, eq(tokens.userId, users.id))
    .where(eq(tokens.hash, hash))
    .limit(1);
  return rows[0]?.user;
}
