import type { ApprovalPolicy } from "../config/schema";
import type { ContextBudget } from "../context/budget";
import { rawToolTokens } from "../context/estimate";
import type { ConversationItem } from "../conversation/items";
import type { ToolSpec } from "../llm/types";
import { TOOL_SEARCH, toolSearchTool } from "../tools/builtin/tool-search";
import { rankTools } from "../tools/rank";
import type { ToolRegistry } from "../tools/registry";
import type { Found, ToolFinder } from "../tools/tool";

export interface OfferInput {
  registry: ToolRegistry;
  /** The caller's tools (Responses API): always offered, and counted. */
  external: ToolSpec[];
  policy: (tool: string) => ApprovalPolicy;
  /** The context window, and what a request's prompt may take of it. */
  budget: Pick<ContextBudget, "window" | "prompt">;
}

/**
 * What a turn's model steps are offered: every tool the user's policy does not deny, while
 * they take at most a quarter of the context window (the project's own estimate). Past that
 * the service's tools are offered on demand, within a quarter of what a prompt may take:
 * `tool_search`, the tools its latest search found, then the tools called in this turn
 * (newest first), beside the caller's tools, which are always offered.
 */
export class ToolOffer implements ToolFinder {
  /** What the latest search found (and could offer), best first. */
  #found: string[] = [];
  /** Tools called in this turn, newest last. */
  readonly #called = new Set<string>();
  /** How many of the turn's items were looked at for calls. */
  #seen = 0;

  constructor(private readonly o: OfferInput) {}

  /**
   * The service's tools the user may call: every registered one but tool_search and those
   * denied, worked out again when a tool is registered or gone (the registry's list is then a
   * new one) or the policy changed (a new function).
   */
  #catalog(): ToolSpec[] {
    const { registry, policy } = this.o;
    const specs = registry.specs();
    const kept = catalogs.get(policy);
    if (kept?.from === specs) return kept.allowed;
    const allowed = specs.filter((t) => t.name !== TOOL_SEARCH && policy(t.name) !== "deny");
    catalogs.set(policy, { from: specs, allowed });
    return allowed;
  }

  get count(): number {
    return this.#catalog().length;
  }

  /**
   * The tools of the next model step, given the turn's items so far: the same array from turn
   * to turn while the user's catalog is offered whole and the caller brings none (its JSON is
   * then made once: llm/request-body.ts).
   */
  specs(produced: readonly ConversationItem[] = []): readonly ToolSpec[] {
    const catalog = this.#catalog();
    if (rawToolTokens(catalog) + rawToolTokens(this.o.external) <= this.o.budget.window / 4) return this.o.external.length ? [...catalog, ...this.o.external] : catalog;
    for (const item of produced.slice(this.#seen)) {
      if (item.type !== "function_call") continue;
      this.#called.delete(item.name);
      this.#called.add(item.name);
    }
    this.#seen = produced.length;
    const search = searchSpec(catalog);
    const byName = new Map(catalog.map((t) => [t.name, t]));
    const wanted = [...new Set([...this.#found, ...[...this.#called].reverse()])].flatMap((n) => byName.get(n) ?? []);
    return [search, ...fit(wanted, this.#room(search)), ...this.o.external];
  }

  find(query: string, limit: number): Found {
    const catalog = this.#catalog();
    const ranked = rankTools(catalog, query, limit);
    const offered = fit(ranked, this.#room(searchSpec(catalog)));
    this.#found = offered.map((t) => t.name);
    return { offered, more: ranked.filter((t) => !offered.includes(t)).map((t) => t.name) };
  }

  /** Raw tokens left for found and called tools beside tool_search and the caller's tools. */
  #room(search: ToolSpec): number {
    return Math.floor(this.o.budget.prompt / 4) - rawToolTokens([search, ...this.o.external]);
  }
}

/**
 * The catalog each policy function last allowed, and the registry's list it was made from: a
 * user's policy is one function until it changes (agent/policy.ts), so a user's turns filter
 * the registry once, not twice a turn each.
 */
const catalogs = new WeakMap<(tool: string) => ApprovalPolicy, { from: readonly ToolSpec[]; allowed: ToolSpec[] }>();

/** The tools, in order, that fit in `room` raw tokens; the first one always does. */
function fit(tools: ToolSpec[], room: number): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const t of tools) {
    const cost = rawToolTokens([t]);
    if (out.length && cost > room) continue;
    out.push(t);
    room -= cost;
  }
  return out;
}

/** tool_search as offered: its description ends with the families of tools there are to find. */
function searchSpec(catalog: ToolSpec[]): ToolSpec {
  const families = [...new Set(catalog.map((t) => family(t.name)))];
  return {
    name: toolSearchTool.name,
    description: `${toolSearchTool.description}\nTools there are: ${families.join(", ")}.`,
    parameters: toolSearchTool.parameters as unknown as Record<string, unknown>,
  };
}

/** `mcp__memory__*` for an MCP server's tools (`ext__<name>__*` an extension's), `file_*` for file_read. */
function family(name: string): string {
  const scoped = /^((?:mcp|ext)__.+?__)/.exec(name)?.[1];
  if (scoped) return `${scoped}*`;
  const underscore = name.indexOf("_");
  return underscore > 0 ? `${name.slice(0, underscore + 1)}*` : name;
}
