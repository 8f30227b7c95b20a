import type { Static, TSchema } from "@sinclair/typebox";

export interface ToolContext {
  userId: string;
  threadId: string;
  signal: AbortSignal;
}

/** A built-in, extension or MCP tool: a value with a schema and an `execute`. */
export interface Tool<P extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: P;
  execute(args: Static<P>, ctx: ToolContext): Promise<string>;
}

export function defineTool<P extends TSchema>(tool: Tool<P>): Tool<P> {
  return tool;
}

