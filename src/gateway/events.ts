import type { AgentEvent } from "../agent/loop";
import type { Turn, TurnResult } from "../agent/turns";
import type { CompactionItem } from "../context/compaction";
import { unwrapToolOutput } from "../safety/injection";
import type { ChatEvent, CompactionMark } from "./chat-wire";

export type { ChatEvent };

type Listener = (event: ChatEvent) => void;

/** Fans a user's turn events out to every open event stream of that user. */
export class ChatEventHub {
  readonly #listeners = new Map<string, Set<Listener>>();

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

  /** Runs a turn to its end, publishing its events; resolves to its result. */
  async runPublished(userId: string, turn: Turn): Promise<TurnResult> {
    const ids = { thread_id: turn.threadId, response_id: turn.id };
    this.publish(userId, { type: "turn.started", ...ids });
    const run = turn.run();
    let waiting: "approval" | "oauth" | null = null;
    for (;;) {
      let next;
      try {
        next = await run.next();
      } catch (e) {
        const error = { code: "server_error", message: (e as Error).message };
        this.publish(userId, { type: "turn.completed", ...ids, status: "failed", error, waiting: null });
        throw e;
      }
      if (next.done) {
        const r = next.value;
        this.publish(userId, { type: "turn.completed", ...ids, status: r.status, error: r.error, waiting });
        return r;
      }
      const event = chatEvent(next.value, ids);
      if (next.value.type === "approval.required") waiting = "approval";
      if (next.value.type === "auth.required") waiting = "oauth";
      if (event) this.publish(userId, event);
    }
  }
}

function chatEvent(ev: AgentEvent, ids: { thread_id: string; response_id: string }): ChatEvent | undefined {
  switch (ev.type) {
    case "message.started":
      return { type: "message.started", ...ids, item_id: ev.itemId };
    case "text.delta":
      return { type: "message.delta", ...ids, item_id: ev.itemId, delta: ev.delta };
    case "message.completed":
      return { type: "message.completed", ...ids, item_id: ev.item.id, text: ev.item.content };
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
