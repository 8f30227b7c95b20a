// `service doctor`'s checks of the tools: each configured MCP server started (or connected
// to), its tools listed and it stopped again; then every tool pattern of config.json
// (`tools.approval`, a server's `tools` and `excludeTools`) checked against the tools there are.
import { couldMatchPrefix, matchesPattern } from "../tools/patterns";
import type { McpServerConfig } from "../config/mcp";
import type { Paths } from "../config/load";
import type { Config } from "../config/schema";
import { approvalPatterns, unmatchedApprovalMessage } from "../agent/policy";
import { extensionToolName } from "../extensions/manifest";
import { listInstalled } from "../extensions/installed";
import { loadConnection, offeredBy, toolListProblems } from "../mcp/manager";
import { mcpServerPrefix, mcpToolName } from "../mcp/names";
import { builtinToolNames } from "../tools/builtin";
import type { Check } from "./doctor";

export async function toolChecks(config: Config, paths: Paths): Promise<Check[]> {
  const servers = Object.entries(config.mcpServers);
  /** The tools each server that came up lists, by their own names. */
  const listed = new Map<string, string[]>();
  const checks = await Promise.all(
    servers.map(async ([name, server]): Promise<Check> => {
      const what = `mcp ${name}`;
      if (server.disabled) return { verdict: "skip", what, detail: "disabled" };
      const where = "url" in server ? server.url : server.command;
      const r = await listTools(name, server);
      if ("error" in r) return { verdict: "fail", what, detail: `${where}: ${r.error}` };
      listed.set(name, r.tools);
      const offered = r.tools.filter(offeredBy(server)).length;
      const count = `${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}`;
      return { verdict: "ok", what, detail: `${where}: up, ${count}${offered < r.tools.length ? `, ${offered} offered (tools, excludeTools)` : ""}` };
    }),
  );
  const rules = ruleCheck(config, paths, listed);
  return rules ? [...checks, rules] : checks;
}

/** Starts (or connects to) one server, lists its tools and stops it. */
async function listTools(name: string, server: McpServerConfig): Promise<{ tools: string[] } | { error: string }> {
  const { McpConnection } = loadConnection();
  let tools: string[] = [];
  const connection = new McpConnection(name, server, { tools: (t) => void (tools = t.map((x) => x.name)), log: () => {} });
  connection.start();
  await connection.firstAttempt;
  const error = connection.state === "ready" ? undefined : (connection.error ?? "did not come up");
  await connection.stop();
  return error ? { error } : { tools };
}

/** One line for every tool pattern of config.json: a failure names those that match no tool. */
function ruleCheck(config: Config, paths: Paths, listed: Map<string, string[]>): Check | undefined {
  const what = "tool rules";
  const patterns = approvalPatterns(config.tools);
  const problems: string[] = [];
  let count = patterns.length;
  for (const [name, tools] of listed) {
    const server = config.mcpServers[name]!;
    count += (server.tools?.length ?? 0) + (server.excludeTools?.length ?? 0);
    problems.push(...toolListProblems(name, server, tools));
  }
  const names = [
    ...builtinToolNames(config, paths),
    ...listInstalled(paths.home).flatMap((e) => (e.enabled && e.manifest ? e.manifest.tools.map((t) => extensionToolName(e.name, t.name)) : [])),
    ...[...listed].flatMap(([name, tools]) => tools.filter(offeredBy(config.mcpServers[name]!)).map((t) => mcpToolName(name, t))),
  ];
  // what a server that is down or disabled offers is not known: patterns that may name its tools are not judged
  const unknown = Object.keys(config.mcpServers).filter((name) => !listed.has(name)).map(mcpServerPrefix);
  for (const pattern of patterns) {
    if (names.some((n) => matchesPattern(pattern, n)) || unknown.some((prefix) => couldMatchPrefix(pattern, prefix))) continue;
    problems.push(unmatchedApprovalMessage(pattern));
  }
  if (problems.length) return { verdict: "fail", what, detail: problems.join("; ") };
  return count ? { verdict: "ok", what, detail: `${count} pattern${count === 1 ? "" : "s"}, each matches a tool` } : undefined;
}
