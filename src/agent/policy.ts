import type { ApprovalPolicy, Config } from "../config/schema";
import type { Db } from "../store/db";
import { setUserPolicy, userPolicies } from "../store/policies";

/**
 * The approval policy of a tool for a user: the operator's `deny` always wins; otherwise the
 * user's own "always allow" overrides the configured `ask`; tools with no policy run freely
 * unless their source asks otherwise (`defaults`, e.g. untrusted MCP servers).
 */
export function approvalPolicies(db: Db, config: Config, defaults: (tool: string) => ApprovalPolicy = () => "auto") {
  return {
    async policies(userId: string): Promise<(tool: string) => ApprovalPolicy> {
      const mine = await userPolicies(db, userId);
      return (tool) => {
        const operator = config.tools.approval[tool];
        if (operator === "deny") return "deny";
        return mine[tool] ?? operator ?? defaults(tool);
      };
    },
    allowAlways: (userId: string, tool: string) => setUserPolicy(db, userId, tool, "auto"),
  };
}
