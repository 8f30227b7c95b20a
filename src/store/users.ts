import { asc, eq, sql } from "drizzle-orm";
import type { Db } from "./db";
import type { users } from "./schema";

export type Role = "owner" | "admin" | "member";
export type UserRow = typeof users.$inferSelect;

/** The user that the instance token speaks for. */
export const OWNER_ID = "owner";

export async function ensureOwner(db: Db): Promise<void> {
  const { users } = db.t;
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
  const { tokens, users } = db.t;
  const now = new Date().toISOString();
  const row: UserRow = {
    id: user.id,
    email: user.email ?? null,
    displayName: user.displayName ?? null,
    status: "active",
    role: user.role,
    createdAt: now,
    updatedAt: now,
    budgetDailyMicroUsd: null,
    budgetMonthlyMicroUsd: null,
  };
  await db.engine.batch(db, (q) => [
    q.insert(users).values(row),
    q.insert(tokens).values({ id: token.id, userId: user.id, hash: token.hash, createdAt: now }),
  ]);
  return row;
}

export async function findUserByTokenHash(db: Db, hash: string): Promise<UserRow | undefined> {
  const { tokens, users } = db.t;
  const rows = await db
    .select({ user: users })
    .from(tokens)
    .innerJoin(users, eq(tokens.userId, users.id))
    .where(eq(tokens.hash, hash))
    .limit(1);
  return rows[0]?.user;
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  const { users } = db.t;
  return db.select().from(users).orderBy(asc(users.createdAt), asc(users.id));
}

export async function getUser(db: Db, id: string): Promise<UserRow | undefined> {
  const { users } = db.t;
  return (await db.select().from(users).where(eq(users.id, id)).limit(1))[0];
}

export async function updateUser(
  db: Db,
  id: string,
  patch: Partial<Pick<UserRow, "role" | "status" | "displayName" | "budgetDailyMicroUsd" | "budgetMonthlyMicroUsd">>,
): Promise<UserRow | undefined> {
  const { users } = db.t;
  return (
    await db
      .update(users)
      .set({ ...patch, updatedAt: new Date().toISOString() })
      .where(eq(users.id, id))
      .returning()
  )[0];
}

/** Gives the user a new token and revokes every other one (and every SSO session), in one transaction. */
export async function replaceTokens(db: Db, userId: string, token: { id: string; hash: string }): Promise<void> {
  const { ssoSessions, tokens, users } = db.t;
  const now = new Date().toISOString();
  await db.engine.batch(db, (q) => [
    q.delete(tokens).where(eq(tokens.userId, userId)),
    q.delete(ssoSessions).where(eq(ssoSessions.userId, userId)),
    q.insert(tokens).values({ id: token.id, userId, hash: token.hash, createdAt: now }),
    q.update(users).set({ updatedAt: now }).where(eq(users.id, userId)),
  ]);
}

/**
 * Deletes a user and everything stored for them, in one transaction: threads (with their
 * responses, items and gates), memory (documents, chunks, their full-text entries through the
 * triggers, vectors of every dimension count), jobs, tool policies, extension credentials and
 * OAuth flows under way, routines and their runs, tokens, SSO sessions and identities, what the agent wrote in the user's files and the egress log. `vectorDims` lists the memory vector tables.
 */
export async function deleteUserData(db: Db, userId: string, vectorDims: number[]): Promise<void> {
  const byUser = (table: string) => sql`DELETE FROM ${sql.identifier(table)} WHERE user_id = ${userId}`;
  await db.engine.batch(db, (q) =>
    [
      ...vectorDims.map((d) => byUser(`memory_vectors_${d}`)),
      byUser("memory_chunks"),
      byUser("memory_documents"),
      byUser("memory_owners"),
      // responses, items and gates go with their thread (foreign keys, ON DELETE CASCADE)
      byUser("responses"),
      byUser("threads"),
      byUser("jobs"),
      // their runs go with them (ON DELETE CASCADE)
      byUser("routines"),
      byUser("tool_policies"),
      byUser("agent_files"),
      byUser("egress_log"),
      byUser("turn_usage"),
      byUser("extension_credentials"),
      byUser("oauth_states"),
      byUser("tokens"),
      byUser("sso_sessions"),
      byUser("sso_identities"),
      sql`DELETE FROM users WHERE id = ${userId}`,
    ].map((statement) => db.engine.exec(q, statement)),
  );
}
