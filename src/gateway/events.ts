import type { TurnBus, TurnEvent, TurnInfo } from "../agent/bus";
import type { Broadcast } from "../store/broadcast";
import type { CompactionItem } from "../conversation/items";
import { sseFrames } from "../http/sse";
import { unwrapToolOutput } from "../safety/injection";
import type { ChatEvent, CompactionMark } from "./chat-wire";

export type { ChatEvent };

/** Hears SSE frames: one chunk for the events of a moment, the same bytes for every stream. */
type Listener = (frames: Uint8Array) => void;
type Delta = Extract<ChatEvent, { type: "message.delta" | "reasoning.delta" }>;

/** How long deltas of one message are gathered into one event for a user's streams. */
export const COALESCE_MS = 50;

/** A chat event of another process's turn (a replica on the same database), for its user. */
const REMOTE = "chat.event";
type Remote = { userId: string; event: ChatEvent };
/** The users with an event stream open in a process, said when one opens, again every WATCH_MS, and when asked (WHO). */
const WATCH = "chat.watch";
const WHO = "chat.who";
const WATCH_MS = 20_000;

/**
 * Every turn of a user, whatever started it (chat, the Responses API, a webhook job, a
 * routine), as chat events on that user's open event streams (GET /api/chat/events): the web
 * UI and the TUI. It hears the agent's bus, and through `broadcast` the turns of the other
 * processes that share the database (replicas), to which it tells this one's; users with no
 * stream open cost a lookup.
 */
export class ChatEventHub {
  readonly #feeds = new Map<string, UserFeed>();
  /** The turns running now: a running turn's stored response says `shutdown` until it ends (history must not show that). */
  readonly #running = new Set<string>();
  /** Users with a stream open in another process, until when (ms): only their turns' every event is told there. */
  readonly #watchedElsewhere = new Map<string, number>();

  constructor(
    bus: TurnBus,
    private readonly broadcast?: Broadcast,
  ) {
    bus.subscribe((turn, event) => {
      // a turn's start and end always (running turns, and other processes' histories, must know it runs); the rest where someone watches
      const bounds = event.type === "turn.started" || event.type === "turn.completed";
      const watched = this.#watchedElsewhere.size > 0 && (this.#watchedElsewhere.get(turn.userId) ?? 0) > Date.now();
      if (!bounds && !watched && !this.#feeds.has(turn.userId)) return;
      const e = chatEvent(turn, event);
      if (!e) return;
      this.#heard(turn.userId, e);
      if (watched || bounds) broadcast?.publish(REMOTE, { userId: turn.userId, event: e } satisfies Remote);
    });
    if (!broadcast) return;
    broadcast.subscribe(REMOTE, (m) => {
      const { userId, event } = m as Remote;
      this.#heard(userId, event);
    });
    broadcast.subscribe(WATCH, (users) => {
      for (const u of users as string[]) this.#watchedElsewhere.set(u, Date.now() + 3 * WATCH_MS);
    });
    broadcast.subscribe(WHO, () => this.#watch([...this.#feeds.keys()]));
    broadcast.publish(WHO, null);
    setInterval(() => {
      this.#watch([...this.#feeds.keys()]);
      const now = Date.now();
      for (const [u, until] of this.#watchedElsewhere) if (until <= now) this.#watchedElsewhere.delete(u);
    }, WATCH_MS).unref?.();
  }

  #watch(users: string[]): void {
    if (users.length) this.broadcast?.publish(WATCH, users);
  }

  #heard(userId: string, e: ChatEvent): void {
    if (e.type === "turn.started") this.#running.add(e.response_id);
    else if (e.type === "turn.completed") this.#running.delete(e.response_id);
    this.#feeds.get(userId)?.push(e);
  }

  isRunning(responseId: string): boolean {
    return this.#running.has(responseId);
  }

  subscribe(userId: string, listener: Listener): () => void {
    let feed = this.#feeds.get(userId);
    if (!feed) {
      this.#feeds.set(userId, (feed = new UserFeed()));
      this.#watch([userId]);
    }
    feed.listeners.add(listener);
    return () => {
      feed.listeners.delete(listener);
      if (!feed.listeners.size && this.#feeds.get(userId) === feed) {
        feed.close();
        this.#feeds.delete(userId);
      }
    };
  }

  /** An event that is no turn's own, for the user's open streams (a decision taken in one of them, for the others). */
  announce(userId: string, event: ChatEvent): void {
    this.#feeds.get(userId)?.push(event);
    if ((this.#watchedElsewhere.get(userId) ?? 0) > Date.now()) this.broadcast?.publish(REMOTE, { userId, event } satisfies Remote);
  }
}

/**
 * One user's open streams. The events of a moment (those sent in one tick) are serialised
 * once, into one chunk that every stream writes as it is. Deltas are gathered for COALESCE_MS, per message: a delta after a quiet
 * moment goes at once, the ones that follow within the window go together, one per message,
 * and any other event sends what was gathered first, so the order within a turn holds.
 */
class UserFeed {
  readonly listeners = new Set<Listener>();
  readonly #pending = new Map<string, Delta>();
  #outbox: ChatEvent[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastDelta = -Infinity;

  push(e: ChatEvent): void {
    if (e.type === "message.delta" || e.type === "reasoning.delta") return this.#delta(e);
    this.#flush();
    this.#send(e);
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #delta(e: Delta): void {
    const key = `${e.response_id} ${e.type} ${e.item_id}`;
    const gathered = this.#pending.get(key);
    if (gathered) {
      gathered.delta += e.delta;
      return;
    }
    const since = performance.now() - this.#lastDelta;
    if (since >= COALESCE_MS && !this.#pending.size) {
      this.#lastDelta = performance.now();
      this.#send(e);
      return;
    }
    this.#pending.set(key, { ...e });
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, Math.max(0, COALESCE_MS - since));
    this.#timer.unref?.();
  }

  #flush(): void {
    if (!this.#pending.size) return;
    const gathered = [...this.#pending.values()];
    this.#pending.clear();
    this.#lastDelta = performance.now();
    for (const e of gathered) this.#send(e);
  }

  #send(e: ChatEvent): void {
    if (this.#outbox.push(e) === 1) queueMicrotask(() => this.#write());
  }

  #write(): void {
    const frames = sseFrames(this.#outbox);
    this.#outbox = [];
    for (const l of this.listeners) l(frames);
  }
}

/** A turn's event as the chat UIs see it; undefined for what they do not show. */
function chatEvent(turn: TurnInfo, ev: TurnEvent): ChatEvent | undefined {
  const ids = { thread_id: turn.threadId, response_id: turn.id };
  switch (ev.type) {
    case "turn.started":
      return {
        type: "turn.started",
        ...ids,
        channel: turn.channel,
        ...(turn.origin?.jobId ? { job_id: turn.origin.jobId } : {}),
        ...(turn.origin?.routineId ? { routine_id: turn.origin.routineId } : {}),
      };
    case "turn.completed":
      if (ev.result) return { type: "turn.completed", ...ids, status: ev.result.status, error: ev.result.error, waiting: ev.waiting };
      // not the turn's failure (the store is down): the envelope's words, with no turn code
      return { type: "turn.completed", ...ids, status: "failed", error: { code: null, message: ev.error?.message ?? "The turn was lost." }, waiting: null };
    case "budget.warning":
      return { type: "budget.warning", ...ids, message: ev.message };
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
      // a channel where nobody answers prompts (the Responses API) fails the turn instead
      if (!turn.surfacesGates) return undefined;
      return {
        type: "approval.required",
        ...ids,
        call_id: ev.call.call_id,
        tool: ev.call.name,
        arguments: ev.call.arguments,
        ...(ev.destination ? { destination: ev.destination } : {}),
        ...(ev.diff ? { diff: ev.diff } : {}),
      };
    case "identity.changed":
      return { type: "identity.changed", ...ids, path: ev.path };
    case "auth.required":
      if (!turn.surfacesGates) return undefined;
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
