import { and, eq } from "drizzle-orm";
import type { Db } from "./db";

/** What the agent wrote in a user's files folder, by content hash (see `agentFiles`). */
export function agentFileRecords(db: Db) {
  const { agentFiles } = db.t;
  return {
    async wrote(userId: string, path: string, sha256: string, tainted: boolean): Promise<void> {
      await db
        .insert(agentFiles)
        .values({ userId, path, sha256, tainted, writtenAt: Date.now() })
        .onConflictDoUpdate({ target: [agentFiles.userId, agentFiles.path], set: { sha256, tainted, writtenAt: Date.now() } });
    },
    /** Whether the agent wrote exactly this content for the user in a turn that had read nothing untrusted. */
    async trusted(userId: string, sha256: string): Promise<boolean> {
      const row = await db
        .select({ path: agentFiles.path })
        .from(agentFiles)
        .where(and(eq(agentFiles.userId, userId), eq(agentFiles.sha256, sha256), eq(agentFiles.tainted, false)))
        .limit(1);
      return row.length > 0;
    },
    async forget(userId: string, path: string): Promise<void> {
      await db.delete(agentFiles).where(and(eq(agentFiles.userId, userId), eq(agentFiles.path, path)));
    },
  };
}

export type AgentFileRecords = ReturnType<typeof agentFileRecords>;
