import type { ChatModel } from "../client/chat-model";
import { pendingApproval, type ViewItem } from "../client/conversation";
import { ApiError } from "../client/http";
import { announcer } from "./announcer";
import { api } from "./api";
import { itemView, type ItemActions, type ItemPlace, type ItemView } from "./chat-items";
import { Composer } from "./composer";
import { h } from "./dom";
import { ThreadActions } from "./thread-actions";
import { ThreadList } from "./thread-list";
import type { ChatEvent, Decision } from "./wire";

/** The chat screen: conversations on the side, the open one in the middle, the composer below. */
export class ChatView {
  readonly el: HTMLElement;
  readonly list: ThreadList;
  readonly composer: Composer;
  #model: ChatModel;
  #current: string | null = null;
  #views = new Map<string, { view: ItemView; sig: string }>();
  #frame = 0;
  #loading = false;
  #loadError: string | null = null;
  /** The approval prompts last given the focus and said, so that each is once. */
  #focusedPrompt: string | null = null;
  #announcedPrompt: string | null = null;
  /** Whether this screen is the one shown (it names the page then). */
  shown = false;
  #modelName: string | null = null;

  #title = h("h1", { class: "conv-title", dir: "auto", tabindex: -1 });
  #modelLabel = h("span", { class: "model-label muted small" });
  #messages = h("div", { class: "messages", role: "region", "aria-label": "Messages" });
  #empty = h(
    "div",
    { class: "empty" },
    h("h2", { text: "What can I help with?" }),
    h("p", { text: "Ask anything. Tool calls and approvals show up here as they happen." }),
  );
  #headActions = new ThreadActions({
    title: () => this.list.title(this.#current) ?? "",
    rename: (title) => void this.#saveRename(title),
    remove: () => void this.#deleteThread(),
    changed: () => this.#render(),
  });
  #toggle = h("button", {
    type: "button",
    class: "ghost icon drawer-toggle",
    "aria-label": "Show conversations",
    "aria-controls": "conversations",
    "aria-expanded": "false",
    text: "☰",
  });

  constructor(model: ChatModel) {
    this.#model = model;
    model.onChange((threadId) => {
      if (threadId === this.#current) this.#schedule();
    });
    this.list = new ThreadList({
      open: (id) => void this.open(id, true),
      current: () => this.#current,
      openApproval: (id) => void this.open(id, true, "approval"),
    });
    this.composer = new Composer({
      submit: (text, editing) => void (editing ? this.#again(text) : this.#send(text)),
      stop: () => this.stop(),
      lastMessage: () => (this.#idle() ? this.#lastUser()?.text : undefined),
      blocked: () => (this.#pending() ? "A tool call waits for your decision above: approve or deny it, then send." : null),
      showBlocker: () => this.#focusPrompt(true),
    });

    this.#toggle.addEventListener("click", () => this.#drawer(!this.el.classList.contains("drawer-open")));
    const backdrop = h("div", { class: "backdrop", onclick: () => this.#drawer(false) });
    const head = h("div", { class: "conv-head" }, this.#toggle, h("div", { class: "conv-heading" }, this.#title, this.#modelLabel), ...this.#headActions.els);
    const main = h("section", { class: "conversation", "aria-labelledby": "conv-title" }, head, this.#messages, this.composer.el);
    this.#title.id = "conv-title";
    this.el = h("div", { class: "screen chat" }, this.list.el, backdrop, main);
    this.el.addEventListener("keydown", (e) => this.#key(e));
  }

  get current(): string | null {
    return this.#current;
  }

  /** The model that answers (from /api/status), named in the conversation's header. */
  set modelName(name: string) {
    this.#modelName = name;
    this.#schedule();
  }

  /**
   * Shows a thread (null: a new conversation) and loads what the server has stored. The focus
   * goes to the message box, or to the approval prompt the thread waits on (`focus`).
   */
  async open(threadId: string | null, push = false, focus: "input" | "approval" | "none" = "input"): Promise<void> {
    this.#drawer(false, false);
    this.#headActions.askDelete(false, false);
    this.#headActions.askRename(false, false);
    if (this.composer.editing) this.composer.cancelEdit();
    if (push) history.pushState(null, "", threadId ? `/?thread=${encodeURIComponent(threadId)}` : "/");
    const changed = threadId !== this.#current;
    this.#current = threadId;
    if (changed) {
      this.#views.clear();
      this.#messages.replaceChildren();
      this.#focusedPrompt = null;
    }
    this.#loadError = null;
    this.list.render();
    this.#render();
    if (focus !== "none") this.composer.focus();
    if (threadId === null) {
      if (changed) announcer.say("New conversation.");
      return;
    }
    await this.reload(threadId);
    if (changed) announcer.say(`Opened conversation: ${this.list.title(threadId) ?? "untitled"}.`);
    if (focus === "approval") this.#focusPrompt(true);
  }

  /** Reloads a thread's stored history (after a reconnect, or when it is opened). */
  async reload(threadId: string): Promise<void> {
    this.#loading = true;
    this.#render();
    try {
      await this.#model.load(threadId, () => api.history(threadId));
    } catch (e) {
      // a new thread is stored before its first answer; a 404 now means it was deleted
      const pending = e instanceof ApiError && e.status === 404 && this.#model.running(threadId);
      if (!pending && threadId === this.#current) this.#loadError = (e as Error).message;
    } finally {
      this.#loading = false;
      this.#render();
    }
  }

  async refreshThreads(): Promise<void> {
    await this.list.refresh();
    this.#schedule();
  }

  /** Every event of this user, from the shared stream. */
  handle(e: ChatEvent): void {
    this.#model.apply(e);
    const here = e.thread_id === this.#current;
    if (e.type === "thread.compacted" && here) void this.reload(e.thread_id);
    if (here && e.type === "message.started") announcer.say("Answering…");
    if (here && e.type === "turn.completed") this.#announceEnd(e);
    if (e.type === "approval.required" || e.type === "approval.decided") void this.refreshThreads();
    if (e.type === "turn.completed" || (e.type === "turn.started" && !this.list.threads.some((t) => t.id === e.thread_id))) {
      void this.refreshThreads();
    }
  }

  /** Stops the running answer of the open conversation (Stop, Esc). */
  stop(): void {
    if (!this.#model.running(this.#current)) return;
    this.composer.stopping();
    const responseId = this.#model.requestStop(this.#current);
    if (responseId) void this.#cancel(this.#current, responseId);
  }

  /** Ctrl+K: the search box (in the drawer on a phone). */
  focusSearch(): void {
    this.#drawer(true, false);
    this.list.search.focus();
    this.list.search.select();
  }

  async #send(text: string): Promise<void> {
    if (text.toLowerCase() === "/compact") return this.#compact();
    const from = this.#current;
    const key = this.#model.beginSend(from, text);
    try {
      const accepted = await api.send(text, from);
      const turn = this.#model.accepted(from, key, accepted.response_id, accepted.thread_id);
      if (this.#current === from && from === null) {
        this.#current = accepted.thread_id;
        history.replaceState(null, "", `/?thread=${encodeURIComponent(accepted.thread_id)}`);
        // the thread is stored before the 202: listed now, not once the answer ends
        const now = new Date().toISOString();
        this.list.added({ id: accepted.thread_id, title: text.slice(0, 80), channel: "chat", created_at: now, updated_at: now, waiting: null });
        this.#render();
        void this.refreshThreads();
      }
      if (turn.stopRequested && turn.running) void this.#cancel(accepted.thread_id, accepted.response_id);
    } catch (e) {
      this.#model.sendFailed(from, key, (e as Error).message);
      if (!this.composer.input.value) this.composer.input.value = text;
    }
  }

  /** Regenerate (no text), or the last message edited: the answer it replaces stays one arrow away. */
  async #again(edited?: string): Promise<void> {
    const id = this.#current;
    if (id === null) return;
    try {
      const accepted = edited === undefined ? await api.regenerate(id) : await api.edit(id, edited);
      this.#model.track(id, accepted.response_id);
      await this.reload(id);
    } catch (e) {
      this.#model.notice(id, "error", `Could not ${edited === undefined ? "answer again" : "send the edit"}: ${(e as Error).message}`);
      if (edited !== undefined && !this.composer.input.value) this.composer.edit(edited);
    }
    this.composer.focus();
  }

  async #switchBranch(itemId: string, branch: number): Promise<void> {
    const id = this.#current;
    if (id === null) return;
    try {
      await this.#model.load(id, () => api.switchBranch(id, itemId, branch));
      announcer.say(`Showing alternative ${branch}.`);
    } catch (e) {
      this.#model.notice(id, "error", `Could not switch: ${(e as Error).message}`);
    }
  }

  /** `/compact`: summarise the thread's older turns now; the mark shows where. */
  async #compact(): Promise<void> {
    const threadId = this.#current;
    if (threadId === null) return this.#model.notice(null, "info", "Nothing to compact yet: this conversation has no turns.");
    this.composer.status("Compacting…");
    try {
      const r = await api.compact(threadId);
      await this.reload(threadId);
      this.#model.notice(
        threadId,
        "info",
        r.compaction ? `Compacted: ${r.compaction.summarised_items} earlier items are now a summary for the model. The whole conversation stays here.` : "Nothing to compact: only the latest turn is here.",
      );
    } catch (e) {
      this.#model.notice(threadId, "error", `Could not compact: ${(e as Error).message}`);
    } finally {
      this.composer.status("");
    }
  }

  async #cancel(threadId: string | null, responseId: string): Promise<void> {
    try {
      await api.cancel(responseId);
    } catch (e) {
      // it may have finished on its own just now; the stream says how it ended
      if (!(e instanceof ApiError && e.status === 400)) this.#model.notice(threadId, "error", `Could not stop: ${(e as Error).message}`);
    }
  }

  async #decide(threadId: string, callId: string, decision: Decision): Promise<void> {
    // the reply comes when the continued turn ends; its events stream in meanwhile
    this.#model.updateApproval(threadId, callId, { decided: decision, busy: true, error: null });
    // the buttons go: the focus goes back to the message box, not to the page
    this.composer.focus();
    try {
      await api.decide(threadId, decision);
      this.#model.updateApproval(threadId, callId, { busy: false });
    } catch (e) {
      this.#model.updateApproval(threadId, callId, { decided: null, busy: false, error: (e as Error).message });
    }
    void this.refreshThreads();
  }

  /** The approval prompt the thread waits on is said once, when it is first shown (live, or on opening the thread). */
  #announcePrompt(): void {
    const pending = this.#pending();
    if (!pending || this.#announcedPrompt === pending.callId) return;
    this.#announcedPrompt = pending.callId;
    announcer.say(`Approval needed: the agent wants to run ${pending.tool}.`, true);
  }

  /** The focus on the approval prompt the thread waits on (once per prompt, unless `again`). */
  #focusPrompt(again = false): void {
    const pending = this.#pending();
    if (!pending || (!again && this.#focusedPrompt === pending.callId)) return;
    const card = this.#messages.querySelector<HTMLElement>(`[data-call-id="${CSS.escape(pending.callId)}"] .approval-title`);
    if (!card) return;
    this.#focusedPrompt = pending.callId;
    card.focus();
    card.scrollIntoView({ block: "center" });
  }

  #announceEnd(e: Extract<ChatEvent, { type: "turn.completed" }>): void {
    if (e.waiting === "approval") return; // said by approval.required
    if (e.status === "failed") return announcer.say(e.error?.code === "cancelled" ? "Answer stopped." : `The answer failed: ${e.error?.message ?? ""}`);
    const answer = this.#model.items(this.#current).findLast((i) => i.kind === "assistant");
    const text = answer?.kind === "assistant" ? answer.text.replace(/\s+/g, " ").slice(0, 400) : "";
    announcer.say(text ? `Answer complete: ${text}` : "Answer complete.");
  }

  #drawer(open: boolean, focus = true): void {
    const wasOpen = this.el.classList.contains("drawer-open");
    this.el.classList.toggle("drawer-open", open);
    this.#toggle.setAttribute("aria-expanded", String(open));
    this.#toggle.setAttribute("aria-label", open ? "Hide conversations" : "Show conversations");
    if (!focus || wasOpen === open) return;
    if (open) this.list.newChat.focus();
    else this.#toggle.focus();
  }

  async #saveRename(title: string): Promise<void> {
    const id = this.#current;
    if (!id) return;
    try {
      await api.rename(id, title);
      this.#headActions.askRename(false);
      await this.refreshThreads();
      this.#render();
      announcer.say(`Renamed to ${title}.`);
    } catch (e) {
      this.#model.notice(id, "error", `Could not rename: ${(e as Error).message}`);
    }
  }

  /** Deletes the open conversation on the server (its turns, responses and gates), then starts a new one. */
  async #deleteThread(): Promise<void> {
    const id = this.#current;
    if (!id) return;
    const title = this.list.title(id);
    try {
      await api.deleteThread(id);
    } catch (e) {
      this.#model.notice(id, "error", `Could not delete: ${(e as Error).message}`);
      this.#headActions.askDelete(false);
      return;
    }
    this.list.removed(id);
    await this.open(null, true, "none");
    this.composer.focus();
    announcer.say(`Deleted ${title ? `“${title}”` : "the conversation"}.`);
    void this.refreshThreads();
  }

  /** Esc closes what is open (the drawer, a confirmation), else stops a running answer. */
  #key(e: KeyboardEvent): void {
    if (e.key !== "Escape" || e.defaultPrevented) return;
    if (this.el.classList.contains("drawer-open")) return (e.preventDefault(), this.#drawer(false));
    if (this.#headActions.escape()) return e.preventDefault();
    if (this.#model.running(this.#current)) return (e.preventDefault(), this.stop());
  }

  #pending() {
    return this.#current ? pendingApproval(this.#model.items(this.#current)) : undefined;
  }

  #idle(): boolean {
    return this.#current !== null && !this.#model.running(this.#current) && !this.#pending();
  }

  #lastUser() {
    return this.#model.items(this.#current).findLast((i) => i.kind === "user");
  }

  #schedule(): void {
    if (!this.#frame) this.#frame = requestAnimationFrame(() => ((this.#frame = 0), this.#render()));
  }

  readonly #actions: ItemActions = {
    decide: (t, c, d) => void this.#decide(t, c, d),
    regenerate: () => void this.#again(),
    edit: (text) => this.composer.edit(text),
    switchBranch: (itemId, branch) => void this.#switchBranch(itemId, branch),
  };

  #render(): void {
    const id = this.#current;
    const items = this.#model.items(id);
    const title = this.list.title(id) || (items.find((i) => i.kind === "user") as { text?: string } | undefined)?.text?.slice(0, 80) || "";
    this.#title.textContent = id === null ? "New chat" : title || "Conversation";
    this.#modelLabel.textContent = this.#modelName ? `Answers by ${this.#modelName}` : "";
    this.#headActions.show(id !== null);
    if (this.shown) document.title = `${id === null ? "New chat" : title || "Conversation"} · service`;

    const box = this.#messages;
    const nearBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
    const extra: HTMLElement[] = [];
    if (this.#loadError) extra.push(h("div", { class: "notice error", role: "alert", text: `Could not load this conversation: ${this.#loadError}` }));
    else if (this.#loading && !items.length) extra.push(h("div", { class: "loading", text: "Loading…" }));
    else if (!items.length) extra.push(this.#empty);

    const places = placesOf(items, this.#idle());
    const seen = new Set<string>();
    const nodes: HTMLElement[] = [];
    items.forEach((item, i) => {
      seen.add(item.id);
      const place = places[i]!;
      const sig = `${signature(item)}|${place.idle}|${place.lastUser}|${place.lastAnswer}|${place.lastEnding}`;
      let entry = this.#views.get(item.id);
      if (!entry) {
        entry = { view: itemView(item, this.#actions), sig: "" };
        this.#views.set(item.id, entry);
      }
      if (entry.sig !== sig) {
        entry.view.update(item, place);
        entry.sig = sig;
      }
      nodes.push(entry.view.el);
    });
    for (const key of this.#views.keys()) if (!seen.has(key)) this.#views.delete(key);
    const wanted = [...nodes, ...extra];
    // move only what is out of place, so open <details>, selections and the focus survive
    wanted.forEach((node, i) => {
      if (box.children[i] !== node) box.insertBefore(node, box.children[i] ?? null);
    });
    while (box.children.length > wanted.length) box.lastElementChild!.remove();
    if (nearBottom) box.scrollTop = box.scrollHeight;

    const running = !!this.#model.running(id);
    this.composer.setRunning(running);
    this.composer.refresh();
    // a prompt that has just come in, in the conversation the person is looking at, is said and takes the focus
    if (this.shown) this.#announcePrompt();
    if (!running && this.shown && document.activeElement === this.composer.input) this.#focusPrompt();
  }
}

/** Which actions each item offers: Edit on the last user message, Regenerate on the last answer, Retry after a failure. */
function placesOf(items: ViewItem[], idle: boolean): ItemPlace[] {
  const lastUser = items.findLastIndex((i) => i.kind === "user");
  const lastAnswer = items.findLastIndex((i) => i.kind === "assistant");
  const last = items.length - 1;
  const endingAt = items[last]?.kind === "notice" && items[last]!.id.startsWith("end-") && lastUser >= 0 ? last : -1;
  return items.map((_, i) => ({
    idle,
    lastUser: i === lastUser,
    lastAnswer: i === lastAnswer && lastAnswer > lastUser && endingAt < 0,
    lastEnding: i === endingAt,
  }));
}

function signature(item: ViewItem): string {
  switch (item.kind) {
    case "assistant":
      return `${item.streaming}|${item.cutShort}|${item.text}`;
    case "reasoning":
      return `${item.streaming}|${item.text.length}`;
    case "tool":
      return `${item.output === null}|${item.isError}|${item.refused}|${item.output?.length ?? 0}`;
    case "approval":
      return `${item.decided}|${item.busy}|${item.error}`;
    case "user":
      return `${item.branch?.current}/${item.branch?.count}`;
    case "connect":
      return item.url;
    case "notice":
      return item.text;
    default:
      return "static";
  }
}
