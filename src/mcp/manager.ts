import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/mcp";
import type { ApprovalPolicy } from "../config/schema";
import { mcpToolDescription } from "../safety/tool-description";
import { jsonSchema } from "../tools/json-schema";
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

  constructor(
    servers: Record<string, McpServerConfig>,
    private readonly registry: ToolRegistry,
    log: (message: string) => void,
  ) {
    for (const [name, config] of Object.entries(servers)) {
      if (config.disabled) continue;
      const { McpConnection } = loadConnection();
      this.#servers.set(name, new McpConnection(name, config, { tools: (tools) => this.#sync(name, tools), log }));
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

  status(): McpServerStatus[] {
    return [...this.#servers.values()].map((s) => s.status());
  }

  /** The approval policy of a tool nobody set one for: MCP tools of untrusted servers ask. */
  readonly defaultPolicy = (tool: string): ApprovalPolicy => {
    const owner = this.#tools.get(tool)?.server ?? this.#serverByPrefix(tool);
    if (!owner) return "auto";
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
    const mine = new Map<string, string>();
    for (const [agentName, owner] of this.#tools) if (owner.server === server) mine.set(owner.tool, agentName);
    const listed = new Map(tools.map((t) => [t.name, t]));
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
  }
}

function agentTool(name: string, server: McpConnection, tool: McpTool): Tool {
  return {
    name,
    description: mcpToolDescription(server, tool.description || tool.title || `The ${tool.name} tool of the MCP server ${server.name}.`),
    parameters: jsonSchema(tool.inputSchema),
    execute: (args, ctx) => server.call(tool.name, args as Record<string, unknown>, ctx.signal),
  };
}

/**
 * The MCP client (the SDK with its schemas) is loaded on first use: a service with no MCP
 * server configured starts faster and idles smaller without it.
 */
export const loadConnection = () => require("./connection") as typeof import("./connection");
