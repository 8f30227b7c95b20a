import type { ApprovalPolicy } from "../config/schema";
import { rawToolTokens } from "../context/estimate";
import type { ConversationItem } from "../conversation/items";
import type { ToolSpec } from "../llm/types";
import { TOOL_SEARCH, toolSearchTool } from "../tools/builtin/tool-search";
import { rankTools } from "../tools/rank";
import type { ToolRegistry } from "../tools/registry";
import type { ToolFinder } from "../tools/tool";

/** The tools may take this share of the context window before they are offered on demand. */
const TOOLS_SHARE = 1 / 4;

export interface OfferInput {
  registry: ToolRegistry;
  /** The caller's tools (Responses API): always offered, and counted. */
  external: ToolSpec[];
  policy: (tool: string) => ApprovalPolicy;
  /** The model's context window, in tokens. */
  window: number;
}

/**
 * What a turn's model steps are offered. Every tool the user's policy does not deny, while
 * they take at most a quarter of the context window (the project's own estimate); past that
 * the service's tools are offered on demand: `tool_search`, the tools it found and the tools
 * called in this turn (newest first, within that quarter), beside the caller's tools.
 */
export class ToolOffer implements ToolFinder {
  /** Names found or called in this turn, the newest last. */
  readonly #found = new Set<string>();
  /** How many of the turn's items were looked at for calls. */
  #seen = 0;

  constructor(private readonly o: OfferInput) {}

  /** The service's tools the user may call: every registered one but tool_search and those denied. */
  #catalog(): ToolSpec[] {
    return this.o.registry.specs().filter((t) => t.name !== TOOL_SEARCH && this.o.policy(t.name) !== "deny");
  }

  get count(): number {
    return this.#catalog().length;
  }

  /** The tools of the next model step, given the turn's items so far. */
  specs(produced: readonly ConversationItem[] = []): ToolSpec[] {
    const catalog = this.#catalog();
    const budget = Math.floor(this.o.window * TOOLS_SHARE);
    if (rawToolTokens(catalog) + rawToolTokens(this.o.external) <= budget) return [...catalog, ...this.o.external];
    for (const item of produced.slice(this.#seen)) if (item.type === "function_call") this.#note(item.name);
    this.#seen = produced.length;
    const search = searchSpec(catalog);
    let room = budget - rawToolTokens([search, ...this.o.external]);
    const byName = new Map(catalog.map((t) => [t.name, t]));
    const picked: ToolSpec[] = [];
    for (const name of [...this.#found].reverse()) {
      const spec = byName.get(name);
      if (!spec) continue;
      const cost = rawToolTokens([spec]);
      // the newest one is offered even when it alone takes more
      if (picked.length && cost > room) continue;
      picked.push(spec);
      room -= cost;
    }
    return [search, ...picked.reverse(), ...this.o.external];
  }

  find(query: string, limit: number): ToolSpec[] {
    const found = rankTools(this.#catalog(), query, limit);
    // the best match becomes the newest, the last to give way when room runs out
    for (const t of found.toReversed()) this.#note(t.name);
    return found;
  }

  #note(name: string): void {
    this.#found.delete(name);
    this.#found.add(name);
  }
}

/** tool_search as offered: its description ends with the families of tools there are to find. */
function searchSpec(catalog: ToolSpec[]): ToolSpec {
  const tool = toolSearchTool;
  const families = [...new Set(catalog.map((t) => family(t.name)))];
  return {
    name: tool.name,
    description: `${tool.description}\nTools there are: ${families.join(", ")}.`,
    parameters: tool.parameters as unknown as Record<string, unknown>,
  };
}

/** `mcp__memory__*` for an MCP server's tools (`ext__<name>__*` an extension's), `file_*` for file_read. */
function family(name: string): string {
  const scoped = /^((?:mcp|ext)__.+?__)/.exec(name)?.[1];
  if (scoped) return `${scoped}*`;
  const underscore = name.indexOf("_");
  return underscore > 0 ? `${name.slice(0, underscore + 1)}*` : name;
}
