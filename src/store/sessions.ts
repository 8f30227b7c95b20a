import { and, asc, eq, gt, lte, sql } from "drizzle-orm";
import type { Db } from "./db";
import type { ssoIdentities, ssoSessions, users } from "./schema";
import type { UserRow } from "./users";

/** The user whose unexpired session bearer has this hash, and when the session ends. */
export async function findUserBySessionHash(db: Db, hash: string, now = Date.now()): Promise<{ user: UserRow; expiresAt: number } | undefined> {
  const { ssoSessions, users } = db.t;
  const rows = await db
    .select({ user: users, expiresAt: ssoSessions.expiresAt })
    .from(ssoSessions)
    .innerJoin(users, eq(ssoSessions.userId, users.id))
    .where(and(eq(ssoSessions.hash, hash), gt(ssoSessions.expiresAt, now)))
    .limit(1);
  return rows[0];
}

/**
 * Stores a new session and how the user signed in, with the user when they are new, all or
 * nothing; sessions that have expired are forgotten on the way.
 */
export async function startSession(
  db: Db,
  p: { session: typeof ssoSessions.$inferInsert; identity: typeof ssoIdentities.$inferInsert; newUser?: typeof users.$inferInsert },
): Promise<void> {
  const { ssoIdentities, ssoSessions, users } = db.t;
  const { session, identity } = p;
  await db.engine.batch(db, (q) => [
    ...(p.newUser ? [q.insert(users).values(p.newUser)] : []),
    q.delete(ssoSessions).where(lte(ssoSessions.expiresAt, session.createdAt)),
    q.insert(ssoSessions).values(session),
    q
      .insert(ssoIdentities)
      .values(identity)
      .onConflictDoUpdate({
        target: [ssoIdentities.userId, ssoIdentities.provider],
        set: { subject: identity.subject, email: identity.email, lastSignInAt: identity.lastSignInAt },
      }),
  ]);
}

/** Ends one session; true when there was one. */
export async function deleteSessionByHash(db: Db, hash: string): Promise<boolean> {
  const { ssoSessions } = db.t;
  return (await db.delete(ssoSessions).where(eq(ssoSessions.hash, hash)).returning({ id: ssoSessions.id })).length > 0;
}

/** Ends every session of the user (suspended, given a new token). */
export async function deleteUserSessions(db: Db, userId: string): Promise<void> {
  const { ssoSessions } = db.t;
  await db.delete(ssoSessions).where(eq(ssoSessions.userId, userId));
}

/** Users whose email is this one, case aside, oldest first. */
export async function findUsersByEmail(db: Db, email: string): Promise<UserRow[]> {
  const { users } = db.t;
  return db
    .select()
    .from(users)
    .where(sql`lower(${users.email}) = ${email.toLowerCase()}`)
    .orderBy(asc(users.createdAt), asc(users.id));
}

/** How each user signs in: `token` when they hold a per-user token, then the providers they used. */
export async function signInMethods(db: Db): Promise<Map<string, string[]>> {
  const { ssoIdentities, tokens } = db.t;
  const out = new Map<string, string[]>();
  const add = (userId: string, method: string) => {
    const list = out.get(userId) ?? [];
    if (!list.includes(method)) list.push(method);
    out.set(userId, list);
  };
  for (const t of await db.selectDistinct({ userId: tokens.userId }).from(tokens)) add(t.userId, "token");
  for (const i of await db.select().from(ssoIdentities).orderBy(asc(ssoIdentities.lastSignInAt))) add(i.userId, i.provider);
  return out;
}
