import type { InputItem } from "../../agent/turn-types";
import { InvalidRequest } from "../../errors";

/** How long, and how many, responses made with `store: false` are remembered. */
const KEEP_MS = 60 * 60_000;
const MAX = 10_000;

/**
 * The responses made lately with `store: false`: their ids, users and the caller-tool call each
 * ended on, nothing of their content, in this process's memory (an hour, at most 10,000). A
 * request continuing one cannot be served from its thread, which was never stored; but a
 * stateless replay that repeats that call and adds its output (LlamaIndex's
 * `trackPreviousResponses`, whose default is `store: false`) holds all it needs, and is served
 * from its input alone. After a restart such a response is unknown, as any other.
 */
export class UnstoredResponses {
  readonly #made = new Map<string, { userId: string; at: number; awaited?: string }>();

  remember(id: string, userId: string): void {
    const now = Date.now();
    this.#made.set(id, { userId, at: now });
    for (const [key, v] of this.#made) {
      if (this.#made.size <= MAX && now - v.at < KEEP_MS) break;
      this.#made.delete(key);
    }
  }

  /** The response ended waiting for the output of this caller-tool call. */
  ended(id: string, awaited: string | undefined): void {
    const v = this.#made.get(id);
    if (v && awaited) v.awaited = awaited;
  }

  /**
   * Whether a request continuing `previousResponseId` with this input is served from its input
   * alone: it continues this user's unstored response by replaying the call it ended on and
   * that call's output. A resume of an unstored response that does not replay the call cannot
   * be served at all: a 400 that says why, not a response that is not found.
   */
  servesAlone(previousResponseId: string | null | undefined, userId: string, input: { messages: InputItem[]; resumes: boolean }): boolean {
    const v = previousResponseId ? this.#made.get(previousResponseId) : undefined;
    if (!v || v.userId !== userId || Date.now() - v.at >= KEEP_MS) return false;
    if (input.resumes) {
      throw new InvalidRequest(
        `Response ${previousResponseId} was made with store: false, so nothing of it was kept to continue from: send the whole conversation in \`input\` ` +
          "(the function_call with its function_call_output), or make the requests with store: true.",
      );
    }
    const replays = (type: "function_call" | "function_call_output") => input.messages.some((m) => m.type === type && m.call_id === v.awaited);
    return v.awaited !== undefined && replays("function_call") && replays("function_call_output");
  }
}
