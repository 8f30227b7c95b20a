import type { Static, TSchema } from "@sinclair/typebox";
import type { ApprovalPolicy } from "../config/schema";

export interface ToolContext {
  userId: string;
  threadId: string;
  signal: AbortSignal;
  /** The turn's tools, for tool_search: what it finds is offered in the model's next step. */
  tools?: ToolFinder;
}

/** Finds the tools of a turn by what they do; the ones found are offered in the model's next step. */
export interface ToolFinder {
  /** The best matches, at most `limit`: those offered from now on, and the names of those there was no room for. */
  find(query: string, limit: number): Found;
  /** How many tools there are to find. */
  readonly count: number;
}

export interface Found {
  offered: { name: string; description: string }[];
  more: string[];
}

/** A built-in, extension or MCP tool: a value with a schema and an `execute`. */
export interface Tool<P extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: P;
  execute(args: Static<P>, ctx: ToolContext): Promise<string>;
  /** The approval policy when the operator sets none (`tools.approval`); `auto` when left out. */
  approval?: ApprovalPolicy;
}

export function defineTool<P extends TSchema>(tool: Tool<P>): Tool<P> {
  return tool;
}

