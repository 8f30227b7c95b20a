import { Value } from "@sinclair/typebox/value";
import { TurnError } from "../errors";
import type { ToolSpec } from "../llm/types";
import { schemaProblems } from "../schema-problems";
import { jsonSchemaProblem } from "./json-schema";
import type { Confirmation, Tool, ToolContext } from "./tool";

/** Tool output longer than this is cut, here and only here, with a marker saying so. */
export const MAX_TOOL_OUTPUT_CHARS = 32_000;

export function truncateOutput(output: string, max = MAX_TOOL_OUTPUT_CHARS): string {
  if (output.length <= max) return output;
  return `${output.slice(0, max)}\n[output truncated: ${output.length - max} more characters]`;
}

/** Errors only a defect throws: the tool did not fail, it broke. */
const crashed = (e: unknown) => e instanceof TypeError || e instanceof ReferenceError || e instanceof RangeError;

/** Name prefixes reserved for agent capabilities; caller tools may not use them. */
export const RESERVED_PREFIXES = ["mission_", "skill_", "memory_"] as const;

/** Every registered action: built-in, extension and MCP tools share one name space. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  readonly #reserved: string[] = [];
  /** The specs as the model is offered them, made again when a tool comes or goes. */
  #specs: readonly ToolSpec[] | undefined;

  register(tool: Tool): this {
    if (this.#tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.#tools.set(tool.name, tool);
    this.#specs = undefined;
    return this;
  }

  unregister(name: string): void {
    this.#tools.delete(name);
    this.#specs = undefined;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Reserves a name prefix for tools that register later (an MCP server still starting). */
  reservePrefix(prefix: string): void {
    if (!this.#reserved.includes(prefix)) this.#reserved.push(prefix);
  }

  /** True when a caller tool of this name would shadow a registered action. */
  isRegisteredAction(name: string): boolean {
    return this.#tools.has(name) || [...RESERVED_PREFIXES, ...this.#reserved].some((p) => name.startsWith(p));
  }

  /** The same objects from one change of the registry to the next (their sizes are measured once: context/estimate.ts). */
  specs(): readonly ToolSpec[] {
    this.#specs ??= [...this.#tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters as unknown as Record<string, unknown>,
    }));
    return this.#specs;
  }

  /** The tool and its arguments, checked; or what is wrong with the call, as text for the model. */
  #checked(name: string, rawArguments: string): { tool: Tool; args: unknown } | { error: string } {
    const tool = this.#tools.get(name);
    if (!tool) return { error: `Error: there is no tool named ${name}.` };
    let args: unknown;
    try {
      args = rawArguments.trim() ? JSON.parse(rawArguments) : {};
    } catch {
      return { error: `Error: the arguments for ${name} are not valid JSON.` };
    }
    if (!Value.Check(tool.parameters, args)) {
      // named by JSON pointer (`/city`), as Ajv names them for raw JSON Schemas
      const problems =
        jsonSchemaProblem(tool.parameters, args) ??
        schemaProblems(tool.parameters, args, 3)
          .map((p) => `${p.pointer || "(root)"} ${p.says.replace(/\.$/, "")}`)
          .join("; ");
      return { error: `Error: invalid arguments for ${name}: ${problems}.` };
    }
    return { tool, args };
  }

  /**
   * What a person must know of a call before it runs: where it could send data, and the
   * change it would make that needs approval whatever the policy. Nothing for a call that
   * cannot run (its error is the model's to read).
   */
  async review(name: string, rawArguments: string, ctx: ToolContext): Promise<{ destination?: string; confirmation?: Confirmation }> {
    const checked = this.#checked(name, rawArguments);
    if ("error" in checked) return {};
    const { tool, args } = checked;
    return { destination: tool.egress?.(args), confirmation: await tool.confirm?.(args, ctx) };
  }

  /** Validates the arguments and runs the tool; every failure becomes text for the model. */
  async run(name: string, rawArguments: string, ctx: ToolContext): Promise<{ output: string; isError: boolean; untrusted: boolean }> {
    const checked = this.#checked(name, rawArguments);
    if ("error" in checked) return { output: checked.error, isError: true, untrusted: false };
    const { tool, args } = checked;
    try {
      const out = await tool.execute(args, ctx);
      const text = typeof out === "string" ? out : out.output;
      const untrusted = tool.untrusted === true || (typeof out !== "string" && out.untrusted === true);
      return { output: truncateOutput(text), isError: false, untrusted };
    } catch (e) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? e;
      // a tool that crashed (a bug, not a failure it reports) fails the turn rather than confuse the model
      if (crashed(e)) throw new TurnError("tool_error", `The tool ${name} crashed: ${(e as Error).message}`);
      // a failure's message may quote what the tool read (a page's error text): as untrusted as its output
      return { output: truncateOutput(`Error: ${name} failed: ${(e as Error).message ?? String(e)}`), isError: true, untrusted: tool.untrusted === true };
    }
  }
}
