import type { ChatEvent, History } from "../gateway/chat-wire";
import {
  applyEvent,
  cleared,
  EMPTY_THREAD,
  itemsOf,
  liveTurn,
  withApproval,
  withHistory,
  type ItemOf,
  type LiveTurn,
  type ThreadView,
  type ViewItem,
  type Wording,
} from "./conversation";

let counter = 0;
const localId = (prefix: string) => `${prefix}-${++counter}`;

/**
 * What a chat UI shows: threads by id, plus a draft for a thread not created yet. Events and
 * replies may arrive in any order (the event stream often announces a turn before the send
 * request returns); the model puts them together by response id. The views it holds are
 * replaced, never changed, so a UI may keep the items it last drew and compare.
 */
export class ChatModel {
  readonly threads = new Map<string, ThreadView>();
  draft: ThreadView = EMPTY_THREAD;
  readonly #listeners = new Set<(threadId: string | null) => void>();
  /** Counts the turns that have ended (see `load`). */
  #clock = 0;

  constructor(readonly words: Wording = { cancelled: "Stopped." }) {}

  onChange(fn: (threadId: string | null) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  thread(id: string | null): ThreadView {
    return (id === null ? this.draft : this.threads.get(id)) ?? EMPTY_THREAD;
  }

  #set(id: string | null, changed: ThreadView): void {
    // a turn that has just ended is stamped, so that a history read before it was stored does not drop it
    const view = changed.live.some((t) => !t.running && t.endedAt === undefined)
      ? { ...changed, live: changed.live.map((t) => (t.running || t.endedAt !== undefined ? t : { ...t, endedAt: ++this.#clock })) }
      : changed;
    if (id === null) this.draft = view;
    else this.threads.set(id, view);
    for (const fn of this.#listeners) fn(id);
  }

  #update(id: string | null, change: (t: ThreadView) => ThreadView): void {
    this.#set(id, change(this.thread(id)));
  }

  /** Changes the live turn with this key (or response id); false when there is none. */
  #updateTurn(id: string | null, key: string, change: (turn: LiveTurn) => LiveTurn): boolean {
    const t = this.thread(id);
    const at = t.live.findIndex((turn) => turn.key === key || turn.responseId === key);
    if (at < 0) return false;
    this.#set(id, { ...t, live: t.live.with(at, change(t.live[at]!)) });
    return true;
  }

  items(id: string | null): ViewItem[] {
    return itemsOf(this.thread(id));
  }

  running(id: string | null): LiveTurn | undefined {
    return this.thread(id).live.find((t) => t.running);
  }

  /** A message the user is sending; returns the local key of its turn. */
  beginSend(threadId: string | null, text: string): string {
    const key = localId("send");
    this.#update(threadId, (t) => ({ ...t, live: [...t.live, liveTurn(key, null, [{ kind: "user", id: localId("user"), text }])] }));
    return key;
  }

  /**
   * The send was accepted. Moves a draft's turn to its new thread and merges it with whatever
   * the event stream already delivered for the same response. Returns the turn.
   */
  accepted(fromThread: string | null, key: string, responseId: string, threadId: string): LiveTurn {
    const source = this.thread(fromThread);
    const sent = source.live.find((t) => t.key === key) ?? liveTurn(key, null);
    if (fromThread === null) this.draft = EMPTY_THREAD;
    else this.threads.set(fromThread, { ...source, live: source.live.filter((t) => t !== sent) });
    const target = this.thread(threadId);
    const early = target.live.findIndex((t) => t.responseId === responseId);
    const seen = target.live[early];
    const turn: LiveTurn = seen
      ? { ...sent, key: responseId, responseId, items: [...sent.items, ...seen.items], running: seen.running }
      : { ...sent, key: responseId, responseId };
    this.#set(threadId, { ...target, live: seen ? target.live.with(early, turn) : [...target.live, turn] });
    return turn;
  }

  /** A turn the service started for this thread (regenerate, edit): shown as running until its events end it. */
  track(threadId: string, responseId: string): void {
    if (this.thread(threadId).live.some((t) => t.responseId === responseId)) return;
    this.#update(threadId, (t) => ({ ...t, live: [...t.live, liveTurn(responseId, responseId)] }));
  }

  sendFailed(threadId: string | null, key: string, message: string): void {
    const notice: ViewItem = { kind: "notice", id: localId("notice"), tone: "error", text: message };
    this.#updateTurn(threadId, key, (turn) => ({ ...turn, running: false, items: [...turn.items, notice] }));
  }

  /**
   * Stop was asked for the thread's running turn: its response id to cancel now, or null when
   * not known yet (`accepted` gives back the turn with `stopRequested` set: cancel it then).
   */
  requestStop(threadId: string | null): string | null {
    const turn = this.running(threadId);
    if (!turn) return null;
    this.#updateTurn(threadId, turn.key, (t) => ({ ...t, stopRequested: true }));
    return turn.responseId;
  }

  /** A turn found over without its last event (the event stream was down when it ended). */
  ended(threadId: string, responseId: string): void {
    this.#updateTurn(threadId, responseId, (t) => ({ ...t, running: false }));
  }

  /** A notice at the end of a thread: in its running turn, or on its own. */
  notice(threadId: string | null, tone: "error" | "info", text: string): void {
    const notice: ViewItem = { kind: "notice", id: localId("notice"), tone, text };
    const running = this.running(threadId);
    if (running && this.#updateTurn(threadId, running.key, (turn) => ({ ...turn, items: [...turn.items, notice] }))) return;
    this.#update(threadId, (t) => ({ ...t, live: [...t.live, { ...liveTurn(localId("notice"), null, [notice]), running: false }] }));
  }

  /**
   * Replaces the stored part of a thread with the history `read` gives; keeps the turns still
   * running, and those that end while it is read (the history may not hold them yet).
   */
  async load(threadId: string, read: () => Promise<History>): Promise<History> {
    const asOf = this.#clock;
    const h = await read();
    this.#update(threadId, (t) => withHistory(t, threadId, h, this.words, asOf));
    return h;
  }

  /** Replaces the stored part of a thread; keeps only the turns still running. */
  loadHistory(threadId: string, h: History): void {
    this.#update(threadId, (t) => withHistory(t, threadId, h, this.words));
  }

  /** Forgets what is shown of a thread but its running turns and open prompts. */
  clear(threadId: string | null): void {
    this.#update(threadId, cleared);
  }

  apply(e: ChatEvent): void {
    this.#update(e.thread_id, (t) => applyEvent(t, e, this.words));
  }

  /** Finds an approval prompt anywhere in a thread. */
  approval(threadId: string, callId: string): ItemOf<"approval"> | undefined {
    return this.items(threadId).find((i): i is ItemOf<"approval"> => i.kind === "approval" && i.callId === callId);
  }

  updateApproval(threadId: string, callId: string, patch: Partial<Pick<ItemOf<"approval">, "decided" | "busy" | "error">>): void {
    this.#update(threadId, (t) => withApproval(t, callId, patch));
  }
}
