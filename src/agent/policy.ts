import type { ApprovalPolicy, Config } from "../config/schema";
import type { Db } from "../store/db";
import { setUserPolicy, userPolicies } from "../store/policies";
import { OWNER_ID } from "../store/users";
import type { DestinationRule } from "./trust";
import { TOOL_SEARCH } from "../tools/builtin/tool-search";
import { couldMatchPrefix, matchesAny, matchesPattern, mostSpecific } from "../tools/patterns";

const STRICTNESS: Record<ApprovalPolicy, number> = { auto: 0, ask: 1, deny: 2 };
const stricter = (a: ApprovalPolicy, b: ApprovalPolicy) => (STRICTNESS[b] > STRICTNESS[a] ? b : a);

/**
 * The operator's policy of a tool: from `tools.approval`, whose keys are names or `*` globs
 * (the exact name wins, then the longest glob; of two globs as long, the stricter policy),
 * made `ask` by a pattern of `tools.ask` (TOOLS_ASK) unless it is `deny`.
 */
export function operatorPolicy(tools: Pick<Config["tools"], "approval" | "ask">): (tool: string) => ApprovalPolicy | undefined {
  const rule = mostSpecific(tools.approval, stricter);
  return (tool) => {
    const set = rule(tool);
    return set !== "deny" && matchesAny(tools.ask, tool) ? "ask" : set;
  };
}

/** Every pattern of the operator's tool rules: `tools.approval`'s keys and `tools.ask`. */
export const approvalPatterns = (tools: Pick<Config["tools"], "approval" | "ask">) => [...new Set([...Object.keys(tools.approval), ...tools.ask])];

/**
 * The approval policy of a tool for a user: the operator's `deny` always wins; otherwise the
 * user's own "always allow" overrides the configured `ask`; tools with no policy run freely
 * unless their source asks otherwise (`defaults`, e.g. untrusted MCP servers). `tool_search`
 * runs nothing and names only tools the policy lets through: it needs no approval.
 */
export function approvalPolicies(
  db: Db,
  config: Config,
  defaults: (tool: string) => ApprovalPolicy = () => "auto",
  /** Tools only the instance owner's turns may use (MCP servers scoped to the owner): denied to others. */
  ownerOnly: (tool: string) => boolean = () => false,
) {
  const operator = operatorPolicy(config.tools);
  /** A user's policy, made from the user's own decisions as read. */
  const policyOf = (userId: string, mine: Record<string, ApprovalPolicy>) => {
    const owner = userId === OWNER_ID;
    return (tool: string): ApprovalPolicy => {
      if (tool === TOOL_SEARCH) return "auto";
      if (!owner && ownerOnly(tool)) return "deny";
      const set = operator(tool);
      if (set === "deny") return "deny";
      return (Object.hasOwn(mine, tool) ? mine[tool] : undefined) ?? set ?? defaults(tool);
    };
  };
  // each user's own decisions, read once, and the policy made of them: one function until they
  // change, which they do only through allowAlways (and forget), so that what each turn offers
  // the model is worked out once per function (agent/offer.ts)
  const known = new Map<string, Promise<{ mine: Record<string, ApprovalPolicy>; policy: (tool: string) => ApprovalPolicy }>>();
  const read = (userId: string) => {
    let found = known.get(userId);
    if (!found) {
      known.set(userId, (found = userPolicies(db, userId).then((mine) => ({ mine, policy: policyOf(userId, mine) }))));
      found.catch(() => known.delete(userId));
    }
    return found;
  };
  return {
    async policies(userId: string): Promise<(tool: string) => ApprovalPolicy> {
      return (await read(userId)).policy;
    },
    /**
     * Where this user's calls may send data without asking in a turn that read untrusted
     * content: the operator's `tools.egress.allow`, and each destination the user answered
     * "always" for (a decision per destination, never per tool).
     */
    async destinations(userId: string): Promise<DestinationRule> {
      const { mine } = await read(userId);
      return (destination) =>
        matchesAny(config.tools.egress.allow, destination) ? "allow list" : mine[egressKey(destination)] === "auto" ? "user: always" : undefined;
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

/** The key a user's "always allow" of a destination is kept under, beside tool names. */
export const egressKey = (destination: string) => `egress:${destination}`;

/** Where the tools a pattern may name come from: each MCP server's prefix, and when it has listed its tools. */
export interface ToolSources {
  /** The names registered now (built-in, extension, and MCP tools listed so far). */
  names(): string[];
  servers: { prefix: string; listed: Promise<void> }[];
}

/**
 * Warns once of each pattern of `tools.approval` and `tools.ask` that matches no tool: at once
 * when it cannot name an MCP server's tool, else once every server it could name has listed
 * its tools (a server that never comes up leaves it unjudged).
 */
export async function warnUnmatchedApproval(tools: Pick<Config["tools"], "approval" | "ask">, sources: ToolSources, warn: (message: string) => void): Promise<void> {
  await Promise.all(
    approvalPatterns(tools).map(async (pattern) => {
      const matches = () => sources.names().some((n) => matchesPattern(pattern, n));
      if (matches()) return;
      await Promise.all(sources.servers.filter((s) => couldMatchPrefix(pattern, s.prefix)).map((s) => s.listed));
      if (!matches()) warn(unmatchedApprovalMessage(pattern));
    }),
  );
}

export const unmatchedApprovalMessage = (pattern: string) =>
  `tool approval rule "${pattern}" matches no tool, so it has no effect (MCP tools are named mcp__<server>__<tool>)`;
