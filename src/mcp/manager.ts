import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/mcp";
import type { ApprovalPolicy } from "../config/schema";
import type { Logger } from "../log";
import { mcpToolDescription } from "../safety/tool-description";
import { jsonSchema } from "../tools/json-schema";
import { matchesAny, unmatchedPatterns } from "../tools/patterns";
import type { ToolRegistry } from "../tools/registry";
import type { Tool } from "../tools/tool";
import type { McpConnection } from "./connection";
import type { McpServerStatus } from "./status";
import { mcpServerPrefix, mcpToolName } from "./names";

/**
 * The configured MCP servers. Each server's tools are registered as agent tools named
 * `mcp__<server>__<tool>` once it is ready, and follow its list changes and restarts.
 */
export class McpManager {
  readonly #servers = new Map<string, McpConnection>();
  /** Agent tool name → the server and the server's own name for the tool. */
  readonly #tools = new Map<string, { server: string; tool: string }>();
  /** Per configured server, settled once it has listed its tools (never, for a disabled one). */
  readonly #listed = new Map<string, PromiseWithResolvers<void>>();
  /** The servers that have listed their tools once (their patterns were checked then). */
  readonly #checked = new Set<string>();

  constructor(
    servers: Record<string, McpServerConfig>,
    private readonly registry: ToolRegistry,
    private readonly log: Pick<Logger, "info" | "warn">,
  ) {
    for (const [name, config] of Object.entries(servers)) {
      this.#listed.set(name, Promise.withResolvers());
      if (config.disabled) continue;
      const { McpConnection } = loadConnection();
      this.#servers.set(name, new McpConnection(name, config, { tools: (tools) => this.#sync(name, tools), log: log.info, warn: log.warn }));
      // caller tools may not take these names, even before the server is up
      registry.reservePrefix(mcpServerPrefix(name));
    }
  }

  /** Starts every server in the background; their tools appear as each one gets ready. */
  start(): void {
    for (const server of this.#servers.values()) server.start();
  }

  /**
   * Waits, at most `maxMs`, for the servers whose first start is still under way, so that a
   * turn sees their tools and the approval rules that go with them.
   */
  async ready(maxMs: number, signal?: AbortSignal): Promise<void> {
    const starting = [...this.#servers.values()].filter((s) => s.state === "starting");
    if (!starting.length || maxMs <= 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort = () => {};
    await Promise.race([
      Promise.all(starting.map((s) => s.firstAttempt)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
        onAbort = resolve;
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }

  /**
   * Every configured server's tool name prefix, and a promise that settles once it has listed
   * its tools (a disabled server's never does): what a pattern naming its tools waits for.
   */
  listings(): { prefix: string; listed: Promise<void> }[] {
    return [...this.#listed].map(([name, p]) => ({ prefix: mcpServerPrefix(name), listed: p.promise }));
  }

  status(): McpServerStatus[] {
    return [...this.#servers.values()].map((s) => s.status());
  }

  /**
   * The approval policy of a tool nobody set one for: MCP tools of untrusted servers ask, also
   * before their server has listed them. A name its server does not offer (not listed, or left
   * out by `tools`/`excludeTools`) needs no approval: there is nothing to run.
   */
  readonly defaultPolicy = (tool: string): ApprovalPolicy => {
    const listed = this.#tools.get(tool)?.server;
    const owner = listed ?? this.#serverByPrefix(tool);
    if (!owner || (!listed && this.#checked.has(owner))) return "auto";
    return this.#servers.get(owner)?.trusted ? "auto" : "ask";
  };

  /** The server a tool name belongs to by its prefix, for tools not (or no longer) listed. */
  #serverByPrefix(tool: string): string | undefined {
    for (const name of this.#servers.keys()) if (tool.startsWith(mcpServerPrefix(name))) return name;
    return undefined;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#servers.values()].map((s) => s.stop()));
  }

  #sync(server: string, tools: McpTool[]): void {
    const connection = this.#servers.get(server)!;
    // its patterns are checked against its first list
    if (!this.#checked.has(server)) {
      this.#checked.add(server);
      for (const problem of toolListProblems(server, connection.config, tools.map((t) => t.name))) this.log.warn(problem);
    }
    const offers = offeredBy(connection.config);
    const mine = new Map<string, string>();
    for (const [agentName, owner] of this.#tools) if (owner.server === server) mine.set(owner.tool, agentName);
    const listed = new Map(tools.filter((t) => offers(t.name)).map((t) => [t.name, t]));
    for (const [tool, agentName] of mine) {
      if (listed.has(tool)) continue;
      this.registry.unregister(agentName);
      this.#tools.delete(agentName);
    }
    for (const tool of listed.values()) {
      let agentName = mine.get(tool.name);
      // re-registered every time: the description or schema may have changed
      if (agentName) this.registry.unregister(agentName);
      else {
        agentName = mcpToolName(server, tool.name, (n) => this.registry.get(n) !== undefined || this.#tools.has(n));
        this.#tools.set(agentName, { server, tool: tool.name });
      }
      this.registry.register(agentTool(agentName, connection, tool));
    }
    connection.toolCount = listed.size;
    this.#listed.get(server)!.resolve();
  }
}

/** Whether a server offers a tool of its own name, by its `tools` and `excludeTools`. */
export function offeredBy(config: Pick<McpServerConfig, "tools" | "excludeTools">): (tool: string) => boolean {
  const { tools: allow, excludeTools: exclude = [] } = config;
  return (tool) => (!allow || matchesAny(allow, tool)) && !matchesAny(exclude, tool);
}

/** What is wrong with a server's `tools` and `excludeTools` given the tools it lists: patterns that match none. */
export function toolListProblems(server: string, config: Pick<McpServerConfig, "tools" | "excludeTools">, listed: string[]): string[] {
  const some = `${listed.slice(0, 6).join(", ")}${listed.length > 6 ? ", …" : ""}`;
  return (["tools", "excludeTools"] as const).flatMap((key) =>
    unmatchedPatterns(config[key] ?? [], listed).map(
      (p) => `mcpServers.${server}.${key}: "${p}" matches none of the server's ${listed.length} tools${listed.length ? ` (${some})` : ""}`,
    ),
  );
}

function agentTool(name: string, server: McpConnection, tool: McpTool): Tool {
  const { config } = server;
  return {
    name,
    description: mcpToolDescription(server, tool.description || tool.title || `The ${tool.name} tool of the MCP server ${server.name}.`),
    parameters: jsonSchema(tool.inputSchema),
    execute: (args, ctx) => server.call(tool.name, args as Record<string, unknown>, ctx.signal),
    // what an untrusted server answers is anyone's text; any server may pass on what it is sent
    untrusted: !server.trusted,
    egress: config.egress === false ? undefined : () => `mcp:${server.name}`,
    ownerOnly: config.scope !== "all",
  };
}

/**
 * The MCP client (the SDK with its schemas) is loaded on first use: a service with no MCP
 * server configured starts faster and idles smaller without it.
 */
export const loadConnection = () => require("./connection") as typeof import("./connection");
