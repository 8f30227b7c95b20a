import type { ChatEvent, Decision, History } from "./wire";

/** One thing shown in a conversation. */
export type ViewItem =
  | { kind: "user"; id: string; text: string }
  | { kind: "assistant"; id: string; text: string; streaming: boolean }
  | { kind: "tool"; id: string; callId: string; name: string; arguments: string; output: string | null; isError: boolean }
  | { kind: "approval"; id: string; threadId: string; callId: string; tool: string; arguments: string; decided: Decision | null; busy: boolean; error: string | null }
  | { kind: "connect"; id: string; callId: string; tool: string; extension: string; url: string }
  | { kind: "notice"; id: string; tone: "error" | "info"; text: string }
  /** Where the model's view of the thread starts to be a summary of the items above. */
  | { kind: "compaction"; id: string; summary: string; summarisedItems: number; memoryNotes: number };

/** A turn seen live: sent from here, or announced on the event stream. */
export interface LiveTurn {
  /** The response id once known; a local key until the send is accepted. */
  key: string;
  responseId: string | null;
  items: ViewItem[];
  running: boolean;
  /** Stop was pressed before the response id was known. */
  stopRequested: boolean;
}

export interface ThreadState {
  /** What the server had stored when the thread was last loaded. */
  history: ViewItem[];
  /** Turns since then, in order; finished ones are dropped on the next load. */
  live: LiveTurn[];
}

/** Shown under an answer that was stored cut short. */
export const CUT_SHORT = "This answer was cut short.";

const emptyThread = (): ThreadState => ({ history: [], live: [] });

let counter = 0;
const localId = (prefix: string) => `${prefix}-${++counter}`;

/**
 * The chat screen's model: threads by id, plus a draft for a thread not created yet. Events
 * and replies may arrive in any order (the event stream often announces a turn before the
 * send request returns); the model puts them together by response id.
 */
export class ChatModel {
  readonly threads = new Map<string, ThreadState>();
  draft: ThreadState = emptyThread();
  #listeners = new Set<(threadId: string | null) => void>();

  onChange(fn: (threadId: string | null) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #changed(threadId: string | null): void {
    for (const fn of this.#listeners) fn(threadId);
  }

  thread(id: string | null): ThreadState {
    if (id === null) return this.draft;
    let t = this.threads.get(id);
    if (!t) this.threads.set(id, (t = emptyThread()));
    return t;
  }

  items(id: string | null): ViewItem[] {
    const t = this.thread(id);
    return [...t.history, ...t.live.flatMap((turn) => turn.items)];
  }

  running(id: string | null): LiveTurn | undefined {
    return this.thread(id).live.find((t) => t.running);
  }

  /** A message the user is sending; returns the local key of its turn. */
  beginSend(threadId: string | null, text: string): string {
    const key = localId("send");
    this.thread(threadId).live.push({ key, responseId: null, items: [{ kind: "user", id: localId("user"), text }], running: true, stopRequested: false });
    this.#changed(threadId);
    return key;
  }

  /**
   * The send was accepted. Moves a draft's turn to its new thread and merges it with whatever
   * the event stream already delivered for the same response. Returns the turn.
   */
  accepted(fromThread: string | null, key: string, responseId: string, threadId: string): LiveTurn {
    const source = this.thread(fromThread);
    const i = source.live.findIndex((t) => t.key === key);
    const turn = i >= 0 ? source.live.splice(i, 1)[0]! : { key, responseId: null, items: [], running: true, stopRequested: false };
    if (fromThread === null) this.draft = emptyThread();
    const target = this.thread(threadId);
    const early = target.live.findIndex((t) => t.responseId === responseId);
    turn.key = responseId;
    turn.responseId = responseId;
    if (early >= 0) {
      const seen = target.live[early]!;
      turn.items.push(...seen.items);
      turn.running = seen.running;
      target.live[early] = turn;
    } else {
      target.live.push(turn);
    }
    this.#changed(threadId);
    return turn;
  }

  sendFailed(threadId: string | null, key: string, message: string): void {
    const turn = this.thread(threadId).live.find((t) => t.key === key);
    if (!turn) return;
    turn.running = false;
    turn.items.push({ kind: "notice", id: localId("notice"), tone: "error", text: message });
    this.#changed(threadId);
  }

  /** A notice at the end of a thread (errors of actions that are not part of a turn). */
  notice(threadId: string | null, tone: "error" | "info", text: string): void {
    this.thread(threadId).live.push({ key: localId("notice"), responseId: null, items: [{ kind: "notice", id: localId("notice"), tone, text }], running: false, stopRequested: false });
    this.#changed(threadId);
  }

  /** Replaces the stored part of a thread; keeps only the turns still running. */
  loadHistory(threadId: string, h: History): void {
    const t = this.thread(threadId);
    const items: ViewItem[] = h.items.flatMap((i): ViewItem[] => {
      if (i.type === "compaction") return [{ kind: "compaction", id: i.id, summary: i.summary, summarisedItems: i.summarised_items, memoryNotes: i.memory_notes }];
      if (i.type === "tool_call") return [{ kind: "tool", id: i.id, callId: i.call_id, name: i.name, arguments: i.arguments, output: i.output, isError: false }];
      if (i.role === "user") return [{ kind: "user", id: i.id, text: i.content }];
      return [
        { kind: "assistant", id: i.id, text: i.content, streaming: false },
        ...(i.status === "incomplete" ? [{ kind: "notice" as const, id: `cut-${i.id}`, tone: "info" as const, text: CUT_SHORT }] : []),
      ];
    });
    if (h.waiting?.kind === "approval") {
      items.push(approvalItem(threadId, h.waiting.call_id, h.waiting.tool ?? "a tool", h.waiting.arguments ?? ""));
    } else if (h.waiting?.kind === "oauth") {
      const w = h.waiting;
      items.push(connectItem(w.call_id, w.tool ?? "a tool", w.extension ?? "an extension", w.connect_url ?? ""));
    }
    t.history = items;
    t.live = t.live.filter((turn) => turn.running);
    this.#changed(threadId);
  }

  apply(e: ChatEvent): void {
    const t = this.thread(e.thread_id);
    let turn = t.live.find((x) => x.responseId === e.response_id);
    if (!turn) {
      turn = { key: e.response_id, responseId: e.response_id, items: [], running: true, stopRequested: false };
      t.live.push(turn);
    }
    const items = turn.items;
    const find = <K extends ViewItem["kind"]>(kind: K, pred: (i: Extract<ViewItem, { kind: K }>) => boolean) =>
      items.find((i): i is Extract<ViewItem, { kind: K }> => i.kind === kind && pred(i as Extract<ViewItem, { kind: K }>));

    switch (e.type) {
      case "turn.started":
        turn.running = true;
        break;
      case "message.started":
        if (!find("assistant", (i) => i.id === e.item_id)) items.push({ kind: "assistant", id: e.item_id, text: "", streaming: true });
        break;
      case "message.delta": {
        const m = find("assistant", (i) => i.id === e.item_id);
        if (m) m.text += e.delta;
        else items.push({ kind: "assistant", id: e.item_id, text: e.delta, streaming: true });
        break;
      }
      case "message.completed": {
        const m = find("assistant", (i) => i.id === e.item_id);
        if (m) Object.assign(m, { text: e.text, streaming: false });
        else items.push({ kind: "assistant", id: e.item_id, text: e.text, streaming: false });
        break;
      }
      case "tool.started":
        if (!find("tool", (i) => i.callId === e.call_id)) {
          items.push({ kind: "tool", id: e.call_id, callId: e.call_id, name: e.name, arguments: e.arguments, output: null, isError: false });
        }
        // the call runs, so a connection it waited for has been made (perhaps in another tab)
        dropConnect(t, e.call_id);
        break;
      case "tool.completed": {
        const c = find("tool", (i) => i.callId === e.call_id);
        if (c) Object.assign(c, { output: e.output, isError: e.is_error });
        break;
      }
      case "approval.required":
        if (!find("approval", (i) => i.callId === e.call_id)) items.push(approvalItem(e.thread_id, e.call_id, e.tool, e.arguments));
        break;
      case "auth.required":
        if (!find("connect", (i) => i.callId === e.call_id)) items.push(connectItem(e.call_id, e.tool, e.extension, e.connect_url));
        break;
      case "thread.compacted":
        break; // the chat view reloads the thread's history, which places the mark
      case "turn.completed":
        turn.running = false;
        for (const i of items) if (i.kind === "assistant") i.streaming = false;
        if (e.status === "failed" && e.error) {
          const cancelled = e.error.code === "cancelled";
          items.push({ kind: "notice", id: localId("notice"), tone: cancelled ? "info" : "error", text: cancelled ? "Stopped." : e.error.message });
        }
        break;
    }
    this.#changed(e.thread_id);
  }

  /** Finds an approval prompt anywhere in a thread. */
  approval(threadId: string, callId: string): Extract<ViewItem, { kind: "approval" }> | undefined {
    return this.items(threadId).find((i): i is Extract<ViewItem, { kind: "approval" }> => i.kind === "approval" && i.callId === callId);
  }

  updateApproval(threadId: string, callId: string, patch: Partial<Pick<Extract<ViewItem, { kind: "approval" }>, "decided" | "busy" | "error">>): void {
    const a = this.approval(threadId, callId);
    if (!a) return;
    Object.assign(a, patch);
    this.#changed(threadId);
  }
}

function dropConnect(t: { history: ViewItem[]; live: LiveTurn[] }, callId: string): void {
  const keep = (i: ViewItem) => !(i.kind === "connect" && i.callId === callId);
  t.history = t.history.filter(keep);
  for (const turn of t.live) turn.items = turn.items.filter(keep);
}

function approvalItem(threadId: string, callId: string, tool: string, args: string): ViewItem {
  return { kind: "approval", id: `approval-${callId}`, threadId, callId, tool, arguments: args, decided: null, busy: false, error: null };
}

function connectItem(callId: string, tool: string, extension: string, url: string): ViewItem {
  return { kind: "connect", id: `connect-${callId}`, callId, tool, extension, url };
}
