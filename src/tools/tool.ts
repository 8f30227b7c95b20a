import type { Static, TSchema } from "@sinclair/typebox";
import type { ApprovalPolicy } from "../config/schema";

export interface ToolContext {
  userId: string;
  threadId: string;
  signal: AbortSignal;
  /**
   * The turn has read untrusted content (a web page, an untrusted MCP server's result…): what
   * the tool stores now (a memory document, a file) is marked so and read back as untrusted.
   */
  tainted?: boolean;
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

/** What a tool gives back: text, or text with what is known of where it came from. */
export type ToolOutput = string | { output: string; untrusted?: boolean };

/** A call the user must see and approve whatever the policy: an identity file's change, as a diff. */
export interface Confirmation {
  diff: string;
  /** The identity file the call changes. */
  identityFile: string;
}

/** A built-in, extension or MCP tool: a value with a schema and an `execute`. */
export interface Tool<P extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: P;
  execute(args: Static<P>, ctx: ToolContext): Promise<ToolOutput>;
  /**
   * Every output is untrusted content (the web, an untrusted MCP server, an extension with
   * network access): it taints the turn. Outputs can also say so one by one (`ToolOutput`).
   */
  untrusted?: boolean;
  /**
   * Where a call could carry data out of the box (a host, an MCP server, an extension), or
   * undefined when it cannot: in a tainted turn such a call needs the user's approval.
   */
  egress?(args: Static<P>): string | undefined;
  /** A call the user must approve whatever the policy (identity files), or undefined. */
  confirm?(args: Static<P>, ctx: ToolContext): Promise<Confirmation | undefined>;
  /**
   * Safe to run again: it changes nothing (the read-only built-ins). A call a stopped turn was
   * running when it resumes is run again; any other is told to the model as interrupted.
   */
  repeatable?: boolean;
  /** Only the instance owner's turns may use it (an MCP server scoped to the owner). */
  ownerOnly?: boolean;
  /** The approval policy when the operator sets none (`tools.approval`); `auto` when left out. */
  approval?: ApprovalPolicy;
}

export function defineTool<P extends TSchema>(tool: Tool<P>): Tool<P> {
  return tool;
}

