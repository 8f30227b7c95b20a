import { and, desc, eq, lt } from "drizzle-orm";
import type { GateData } from "../conversation/gates";
import type { Db } from "./db";
import type { extensionCredentials, oauthStates, } from "./schema";

export type CredentialRow = typeof extensionCredentials.$inferSelect;
export type OAuthStateRow = typeof oauthStates.$inferSelect;

/** The user id of a credential that belongs to the instance (an API key). */
export const INSTANCE = "";

export async function getCredential(db: Db, extension: string, userId: string): Promise<CredentialRow | undefined> {
  const { extensionCredentials } = db.t;
  return (
    await db
      .select()
      .from(extensionCredentials)
      .where(and(eq(extensionCredentials.extension, extension), eq(extensionCredentials.userId, userId)))
      .limit(1)
  )[0];
}

export async function putCredential(db: Db, row: Omit<CredentialRow, "updatedAt">): Promise<void> {
  const { extensionCredentials } = db.t;
  const values = { ...row, updatedAt: Date.now() };
  await db
    .insert(extensionCredentials)
    .values(values)
    .onConflictDoUpdate({
      target: [extensionCredentials.extension, extensionCredentials.userId],
      set: { kind: values.kind, secret: values.secret, expiresAt: values.expiresAt, updatedAt: values.updatedAt },
    });
}

export async function deleteCredential(db: Db, extension: string, userId: string): Promise<void> {
  const { extensionCredentials } = db.t;
  await db.delete(extensionCredentials).where(and(eq(extensionCredentials.extension, extension), eq(extensionCredentials.userId, userId)));
}

/** Every credential of an extension (removing it), or every instance API key (redaction). */
export async function listCredentials(db: Db, filter: { extension?: string; userId?: string }): Promise<CredentialRow[]> {
  const { extensionCredentials } = db.t;
  const conditions = [
    ...(filter.extension !== undefined ? [eq(extensionCredentials.extension, filter.extension)] : []),
    ...(filter.userId !== undefined ? [eq(extensionCredentials.userId, filter.userId)] : []),
  ];
  return db.select().from(extensionCredentials).where(and(...conditions));
}

export async function deleteCredentials(db: Db, extension: string): Promise<void> {
  const { extensionCredentials, oauthStates } = db.t;
  await db.delete(extensionCredentials).where(eq(extensionCredentials.extension, extension));
  await db.delete(oauthStates).where(eq(oauthStates.extension, extension));
}

export async function putOAuthState(db: Db, row: OAuthStateRow): Promise<void> {
  const { oauthStates } = db.t;
  await db.insert(oauthStates).values(row);
}

/** Takes the state out: each one answers a single callback. Older than `maxAgeMs`: gone too. */
export async function takeOAuthState(db: Db, stateHash: string, maxAgeMs: number): Promise<OAuthStateRow | undefined> {
  const { oauthStates } = db.t;
  const cutoff = Date.now() - maxAgeMs;
  const rows = await db.delete(oauthStates).where(eq(oauthStates.stateHash, stateHash)).returning();
  await db.delete(oauthStates).where(lt(oauthStates.createdAt, cutoff));
  const row = rows[0];
  return row && row.createdAt >= cutoff ? row : undefined;
}

export interface OAuthGate {
  threadId: string;
  callId: string;
  extension: string;
}

/** The threads of this user that wait for an extension to be connected, oldest first. */
export async function listOAuthGates(db: Db, userId: string, extension?: string): Promise<OAuthGate[]> {
  const { gates, threads } = db.t;
  const rows = await db
    .select({ threadId: gates.threadId, callId: gates.callId, data: gates.data })
    .from(gates)
    .innerJoin(threads, eq(gates.threadId, threads.id))
    .where(and(eq(threads.userId, userId), eq(gates.kind, "oauth")))
    .orderBy(desc(gates.createdAt));
  return rows
    .map((r) => ({ threadId: r.threadId, callId: r.callId, extension: (r.data as GateData<"oauth">).details.extension }))
    .filter((g) => extension === undefined || g.extension === extension)
    .reverse();
}
