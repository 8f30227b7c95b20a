import type { AgentEvent } from "../agent/events";
import type { Agent } from "../agent/turns";
import type { TurnHandle, TurnRequest, TurnResult } from "../agent/turn-types";
import type { CompactionItem } from "../conversation/items";
import { unwrapToolOutput } from "../safety/injection";
import type { ChatEvent, CompactionMark, Decision } from "./chat-wire";

export type { ChatEvent };

type Listener = (event: ChatEvent) => void;

/** Fans a user's turn events out to every open event stream of that user. */
export class ChatEventHub {
  readonly #listeners = new Map<string, Set<Listener>>();
  /** The turns started here that have not ended: their stored response says `shutdown` until they do. */
  readonly #running = new Set<string>();

  isRunning(responseId: string): boolean {
    return this.#running.has(responseId);
  }

  subscribe(userId: string, listener: Listener): () => void {
    let set = this.#listeners.get(userId);
    if (!set) this.#listeners.set(userId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size) this.#listeners.delete(userId);
    };
  }

  publish(userId: string, event: ChatEvent): void {
    for (const listener of this.#listeners.get(userId) ?? []) listener(event);
  }

  /**
   * Starts a turn whose events reach the user's open event streams, from `turn.started` to
   * `turn.completed`; resolves once the agent has accepted it (see Agent.start).
   */
  async start(agent: Agent, req: TurnRequest, decided?: { call_id: string; decision: Decision }): Promise<{ turn: TurnHandle; result: Promise<TurnResult> }> {
    const { userId } = req;
    let waiting: "approval" | "oauth" | null = null;
    const { turn, result } = await agent.start(req, (turn) => {
      this.#running.add(turn.id);
      const ids = { thread_id: turn.threadId, response_id: turn.id };
      this.publish(userId, { type: "turn.started", ...ids });
      // every client showing the prompt learns the decision, whichever one took it
      if (decided) this.publish(userId, { type: "approval.decided", ...ids, ...decided });
      return (ev) => {
        if (ev.type === "approval.required") waiting = "approval";
        if (ev.type === "auth.required") waiting = "oauth";
        const event = chatEvent(ev, ids);
        if (event) this.publish(userId, event);
      };
    });
    const ids = { thread_id: turn.threadId, response_id: turn.id };
    const published = result.then(
      (r) => {
        this.#running.delete(turn.id);
        this.publish(userId, { type: "turn.completed", ...ids, status: r.status, error: r.error, waiting });
        return r;
      },
      (e) => {
        this.#running.delete(turn.id);
        // not the turn's failure (the store is down): the envelope's words, with no turn code
        this.publish(userId, { type: "turn.completed", ...ids, status: "failed", error: { code: null, message: (e as Error).message }, waiting: null });
        throw e;
      },
    );
    published.catch(() => {});
    return { turn, result: published };
  }

  /** Runs a turn to its end, publishing its events (`decided`: the approval it resumes, announced first). */
  async run(agent: Agent, req: TurnRequest, decided?: { call_id: string; decision: Decision }): Promise<TurnResult> {
    return (await this.start(agent, req, decided)).result;
  }
}

function chatEvent(ev: AgentEvent, ids: { thread_id: string; response_id: string }): ChatEvent | undefined {
  switch (ev.type) {
    case "message.started":
      return { type: "message.started", ...ids, item_id: ev.itemId };
    case "text.delta":
      return { type: "message.delta", ...ids, item_id: ev.itemId, delta: ev.delta };
    case "message.completed":
      return { type: "message.completed", ...ids, item_id: ev.item.id, text: ev.item.content, ...(ev.item.status ? { status: ev.item.status } : {}) };
    case "reasoning.delta":
      return { type: "reasoning.delta", ...ids, item_id: ev.itemId, delta: ev.delta };
    case "tool.started":
      return { type: "tool.started", ...ids, call_id: ev.item.call_id, name: ev.item.name, arguments: ev.item.arguments };
    case "tool.completed":
      return { type: "tool.completed", ...ids, call_id: ev.item.call_id, output: unwrapToolOutput(ev.item.output), is_error: ev.isError };
    case "approval.required":
      return { type: "approval.required", ...ids, call_id: ev.call.call_id, tool: ev.call.name, arguments: ev.call.arguments };
    case "auth.required":
      return { type: "auth.required", ...ids, call_id: ev.call.call_id, tool: ev.call.name, extension: ev.extension, connect_url: ev.url };
    case "context.compacted":
      return { type: "thread.compacted", ...ids, compaction: compactionMark(ev.item) };
    default:
      return undefined;
  }
}

export function compactionMark(c: CompactionItem): CompactionMark {
  return {
    type: "compaction",
    id: c.id,
    summary: c.summary,
    summarised_items: c.summarised_items,
    trigger: c.trigger,
    memory_notes: c.memory_notes,
    created_at: c.created_at,
  };
}
