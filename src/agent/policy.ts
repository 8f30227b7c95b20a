import type { ApprovalPolicy, Config } from "../config/schema";
import type { Db } from "../store/db";
import { setUserPolicy, userPolicies } from "../store/policies";

/**
 * The approval policy of a tool for a user: the operator's `deny` always wins; otherwise the
 * user's own "always allow" overrides the configured `ask`; tools with no policy run freely
 * unless their source asks otherwise (`defaults`, e.g. untrusted MCP servers).
 */
export function approvalPolicies(db: Db, config: Config, defaults: (tool: string) => ApprovalPolicy = () => "auto") {
  // each user's own decisions, read once: they change only through allowAlways (and forget)
  const known = new Map<string, Promise<Record<string, ApprovalPolicy>>>();
  return {
    async policies(userId: string): Promise<(tool: string) => ApprovalPolicy> {
      let read = known.get(userId);
      if (!read) {
        known.set(userId, (read = userPolicies(db, userId)));
        read.catch(() => known.delete(userId));
      }
      const mine = await read;
      return (tool) => {
        const operator = config.tools.approval[tool];
        if (operator === "deny") return "deny";
        return mine[tool] ?? operator ?? defaults(tool);
      };
    },
    async allowAlways(userId: string, tool: string): Promise<void> {
      known.delete(userId);
      await setUserPolicy(db, userId, tool, "auto");
      known.delete(userId);
    },
    /** Forgets what was read of a user (the user was deleted). */
    forget: (userId: string) => void known.delete(userId),
  };
}
