import type { PendingCall } from "../conversation/items";
import type { ToolRegistry } from "../tools/registry";
import type { Confirmation, ToolContext } from "../tools/tool";

/**
 * Why data may go to a destination without asking in a turn that read untrusted content:
 * `allow list` (the operator's `tools.egress.allow`) or `user: always` (the user's own
 * earlier "always allow" of that destination); undefined when the user must be asked.
 */
export type DestinationRule = (destination: string) => "allow list" | "user: always" | undefined;

/** What the user must see before a call runs: where its data would go, the change it makes. */
export interface Review {
  destination?: string;
  diff?: string;
  identityFile?: string;
}

/** The strings and numbers of a call's arguments: what it could carry out. */
function leaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") {
    if (value.trim()) out.push(value);
  } else if (typeof value === "number") out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) leaves(v, out);
  return out;
}

/**
 * What a turn knows of the trust of its content, and what it lets out of the box. The model
 * is assumed to obey whatever it reads, so once untrusted content (a page, an untrusted MCP
 * server's answer, a document written after reading one) is in the turn, every call that
 * could carry data out needs the user's approval, unless the destination is allowed or the
 * call carries nothing but the user's own words (a URL the user wrote, verbatim).
 */
export class TurnTrust {
  #tainted: boolean;

  constructor(
    private readonly o: {
      /** The thread already holds untrusted content. */
      tainted: boolean;
      /** What the user wrote: the turn's messages and the thread's. */
      userWords: string[];
      destinations: DestinationRule;
    },
  ) {
    this.#tainted = o.tainted;
  }

  get tainted(): boolean {
    return this.#tainted;
  }

  /** Untrusted content entered the turn. */
  taint(): void {
    this.#tainted = true;
  }

  /**
   * What a person must see of this call before it runs, or undefined when it may run as the
   * policy says. `cleared` tells why a call with a destination may go (for the egress log).
   */
  async review(tools: ToolRegistry, call: PendingCall, ctx: ToolContext): Promise<{ review?: Review; destination?: string; cleared?: string; confirmation?: Confirmation }> {
    const { destination, confirmation } = await tools.review(call.name, call.arguments, ctx);
    const cleared = destination === undefined ? undefined : this.#clearance(destination, call.arguments);
    const egress = destination !== undefined && cleared === undefined;
    if (!egress && !confirmation) return { destination, cleared, confirmation };
    return {
      destination,
      cleared,
      confirmation,
      review: { ...(egress ? { destination } : {}), ...(confirmation ? { diff: confirmation.diff, identityFile: confirmation.identityFile } : {}) },
    };
  }

  #clearance(destination: string, rawArguments: string): string | undefined {
    if (!this.#tainted) return "untainted turn";
    const rule = this.o.destinations(destination);
    if (rule) return rule;
    let args: unknown;
    try {
      args = JSON.parse(rawArguments || "{}");
    } catch {
      return undefined;
    }
    const words = this.o.userWords.join("\n");
    const carried = leaves(args);
    return carried.every((v) => words.includes(v)) ? "the user's own words" : undefined;
  }
}
