import { eq } from "drizzle-orm";
import type { ApprovalPolicy } from "../config/schema";
import type { Db } from "./db";

export async function userPolicies(db: Db, userId: string): Promise<Record<string, ApprovalPolicy>> {
  const { toolPolicies } = db.t;
  const rows = await db.select().from(toolPolicies).where(eq(toolPolicies.userId, userId));
  return Object.fromEntries(rows.map((r) => [r.tool, r.policy]));
}

export async function setUserPolicy(db: Db, userId: string, tool: string, policy: ApprovalPolicy): Promise<void> {
  const { toolPolicies } = db.t;
  await db
    .insert(toolPolicies)
    .values({ userId, tool, policy, updatedAt: Date.now() })
    .onConflictDoUpdate({ target: [toolPolicies.userId, toolPolicies.tool], set: { policy, updatedAt: Date.now() } });
}
