import { ChatModel } from "../client/chat-model";
import { ApiError, type ChatClient } from "../client/http";
import type { StreamState } from "../client/sse";
import type { ChatEvent, History, ThreadSummary } from "../gateway/chat-wire";
import { ApprovalPrompt } from "./gates";
import type { Layout } from "./layout";
import { brief } from "./text";
import { Transcript, TUI_WORDING } from "./transcript";

/** What the session needs of the terminal app around it. */
export interface SessionHost {
  layout: Layout;
  log: (message: string) => void;
  /** Something shown changed: draw again (soon). */
  changed: () => void;
  /** Runs a handler; an error is shown and logged, never thrown. */
  guard: (fn: () => unknown) => void;
}

/**
 * The TUI's side of the service: the open conversation, the thread list, the event stream,
 * and the calls that send, stop, compact and open. Keys and drawing are the app's.
 */
export class ChatSession {
  readonly chat = new ChatModel(TUI_WORDING);
  /** The open conversation; its thread id is null for a new one. */
  readonly transcript: Transcript;
  readonly approval: ApprovalPrompt;
  threads: ThreadSummary[] = [];
  title: string | null = null;
  model = "…";
  connection: StreamState = "connecting";
  /** Turns that compacted their thread: its history is read again when they end, to place the mark. */
  readonly #compacted = new Set<string>();
  #wasDisconnected = false;

  constructor(
    readonly client: ChatClient,
    readonly host: SessionHost,
  ) {
    this.transcript = new Transcript(this.chat, null, client.baseUrl);
    this.approval = new ApprovalPrompt({ client, transcript: this.transcript, layout: host.layout, changed: host.changed });
    this.chat.onChange((threadId) => {
      if (threadId === this.threadId) host.changed();
    });
  }

  get threadId(): string | null {
    return this.transcript.threadId;
  }

  get activity(): "approval" | "thinking" | "ready" {
    return this.approval.pending ? "approval" : this.chat.running(this.threadId) ? "thinking" : "ready";
  }

  /** Follows the event stream until `signal` aborts; reads the model and the threads, and opens `threadId`. */
  async start(threadId: string | undefined, signal: AbortSignal): Promise<void> {
    void this.client.follow({
      onEvent: (e) => this.host.guard(() => this.#onEvent(e)),
      onState: (s, detail) => this.host.guard(() => this.#onConnection(s, detail)),
      signal,
    });
    const [status] = await Promise.allSettled([this.client.status(), this.refreshThreads()]);
    if (status.status === "fulfilled") this.model = status.value.llm.model ?? (status.value.llm.configured ? "default" : "no LLM configured");
    else this.fail(status.reason);
    if (threadId) await this.open(threadId);
    this.host.changed();
  }

  notice(text: string, tone: "info" | "error" = "info"): void {
    this.chat.notice(this.threadId, tone, text);
    this.host.layout.stickToEnd();
  }

  fail(e: unknown): void {
    this.host.log(`tui: ${(e as Error).stack ?? String(e)}`);
    this.notice((e as Error).message ?? String(e), "error");
  }

  /** Whether a message can be sent now; if not, says why. */
  canSend(): boolean {
    if (this.chat.running(this.threadId)) {
      this.notice("A reply is still running: wait for it, or press Esc to cancel it.");
      return false;
    }
    if (this.approval.pending) {
      this.notice("This conversation waits for an approval: decide it in the prompt (a approve, d deny, A always allow); your message stays in the box.");
      this.approval.show(true);
      return false;
    }
    return true;
  }

  /** Sends a message in the open conversation; false when the service did not take it. */
  async send(text: string): Promise<boolean> {
    const from = this.threadId;
    const key = this.chat.beginSend(from, text);
    try {
      const r = await this.client.send(text, from);
      // a new conversation's first events may have come before this reply: the model merges them
      const turn = this.chat.accepted(from, key, r.response_id, r.thread_id);
      if (from === null && this.threadId === null) {
        this.transcript.threadId = r.thread_id;
        this.title = brief(text, 40);
      }
      if (turn.stopRequested && turn.running) this.#cancel(r.response_id);
      // a new conversation's prompt may have come before its id did
      if (this.threadId === r.thread_id && this.approval.pending && !this.approval.open) this.approval.show(true);
      void this.refreshThreads();
      return true;
    } catch (e) {
      this.chat.sendFailed(from, key, (e as Error).message);
      return false;
    }
  }

  /** Cancels the open conversation's running turn; false when none runs. */
  stop(): boolean {
    const running = this.chat.running(this.threadId);
    if (!running) return false;
    if (running.stopRequested) return true;
    this.notice("Cancelling…");
    const responseId = this.chat.requestStop(this.threadId);
    // not known yet: the send's reply cancels it
    if (responseId) this.#cancel(responseId);
    return true;
  }

  #cancel(responseId: string): void {
    this.client.cancel(responseId).catch((e) => {
      // 400: it finished meanwhile
      if (!(e instanceof ApiError && e.status === 400)) this.fail(e);
    });
  }

  /** `/compact`: the thread's older turns become a summary for the model; the mark shows where. */
  async compact(): Promise<void> {
    const id = this.threadId;
    if (!id) return this.notice("Nothing to compact yet: this conversation has no turns.");
    this.notice("Compacting: summarising the earlier turns…");
    try {
      const r = await this.client.compact(id);
      if (this.threadId !== id) return;
      await this.#reloadHistory(id);
      this.notice(r.compaction ? `Compacted: ${r.compaction.summarised_items} earlier items are now a summary for the model.` : "Nothing to compact: only the latest turn is here.");
    } catch (e) {
      this.chat.notice(id, "error", `Could not compact: ${(e as Error).message}`);
    }
  }

  /** /retry: the last message answered again; the answer it replaces stays an alternative (/alt). */
  async retry(): Promise<void> {
    const id = this.threadId;
    if (!id || this.chat.running(id)) return this.notice(id ? "Wait for the running reply, or press Esc to cancel it." : "Nothing to answer again yet.");
    try {
      const r = await this.client.regenerate(id);
      this.chat.track(id, r.response_id);
      this.host.layout.stickToEnd();
      await this.#reloadHistory(id);
    } catch (e) {
      this.chat.notice(id, "error", `Could not answer again: ${(e as Error).message}`);
    }
  }

  /** /alt N: alternative N of the last message that has alternatives (the earlier answers kept by /retry or an edit). */
  async alternative(n: number): Promise<void> {
    const id = this.threadId;
    const fork = this.transcript.entries.findLast((i) => i.kind === "user" && i.branch);
    if (!id || !fork || fork.kind !== "user" || !fork.branch) return this.notice("No message here has other answers: /retry makes one.");
    if (n < 1 || n > fork.branch.count) return this.notice(`There are ${fork.branch.count} alternatives: /alt 1 to /alt ${fork.branch.count}.`);
    try {
      await this.chat.load(id, () => this.client.switchBranch(id, fork.id, n));
    } catch (e) {
      this.chat.notice(id, "error", `Could not switch: ${(e as Error).message}`);
    }
  }

  /** Opens a thread (null: a new conversation). */
  async open(id: string | null): Promise<void> {
    this.transcript.threadId = id;
    this.title = null;
    this.approval.show(false);
    if (id) {
      const h = await this.#reloadHistory(id);
      if (this.threadId === id) this.title = h.title;
    } else {
      this.chat.clear(null);
      this.notice("New conversation: type a message and press Enter.");
    }
  }

  /** Ctrl+L: what is shown goes, but for running turns and open prompts. */
  clear(): void {
    this.chat.clear(this.threadId);
  }

  async refreshThreads(): Promise<void> {
    try {
      this.threads = await this.client.threads();
    } catch (e) {
      this.host.log(`tui: listing threads: ${(e as Error).message}`);
    }
    this.host.changed();
  }

  /**
   * Reads the thread's stored history again (the place of a compaction mark is known then)
   * and asks for the approval it waits on, if any.
   */
  async #reloadHistory(id: string): Promise<History> {
    const h = await this.chat.load(id, () => this.client.history(id));
    if (this.threadId === id && this.approval.pending) this.approval.show(true);
    return h;
  }

  #onEvent(e: ChatEvent): void {
    this.chat.apply(e);
    if (e.type === "thread.compacted") {
      this.#compacted.add(e.response_id);
      if (e.thread_id === this.threadId) this.notice("Earlier turns are being summarised to fit the model's context.");
    }
    if (e.type === "turn.completed") {
      if (this.#compacted.delete(e.response_id) && e.thread_id === this.threadId) this.host.guard(() => this.#reloadHistory(e.thread_id));
      void this.refreshThreads();
    }
    if (e.type === "approval.required" && e.thread_id === this.threadId) this.approval.show(true);
    // a turn another channel started (a webhook job, a routine, the API): its thread is listed while it runs
    if (e.type === "turn.started" && e.channel !== undefined && e.channel !== "chat") void this.refreshThreads();
    // decided elsewhere (the web UI, another terminal): the prompt here goes
    if (e.type === "approval.decided" && e.thread_id === this.threadId && this.approval.open && !this.approval.pending) this.approval.show(false);
  }

  #onConnection(state: StreamState, detail?: string): void {
    if (state !== "connected" && state !== "connecting" && this.connection === "connected") {
      this.host.log(`tui: event stream lost: ${detail ?? state}`);
      this.#wasDisconnected = true;
    }
    if (state === "unauthorized" && this.connection !== "unauthorized") this.notice(`The service refused the token (${detail ?? "401"}).`, "error");
    const resync = state === "connected" && this.#wasDisconnected;
    this.connection = state;
    if (resync) {
      this.#wasDisconnected = false;
      this.host.guard(() => this.#resync());
    }
    this.host.changed();
  }

  /** After the event stream came back: what was missed is read from the API. */
  async #resync(): Promise<void> {
    const running = [...this.chat.threads].flatMap(([threadId, t]) =>
      t.live.flatMap((turn) => (turn.running && turn.responseId ? [[threadId, turn.responseId] as const] : [])),
    );
    for (const [threadId, responseId] of running) {
      const r = await this.client.response(responseId).catch(() => undefined);
      if (r && r.status !== "in_progress" && r.status !== "queued") this.chat.ended(threadId, responseId);
    }
    if (this.threadId) await this.#reloadHistory(this.threadId);
    void this.refreshThreads();
  }
}
