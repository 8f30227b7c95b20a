import type { ChatModel } from "../client/chat-model";
import type { ViewItem } from "../client/conversation";
import { ApiError } from "../client/http";
import { api } from "./api";
import { itemView, type ItemView } from "./chat-items";
import { ago, fill, h } from "./dom";
import type { ChatEvent, Decision, ThreadSummary } from "./wire";

/** The chat screen: conversations on the side, the open one in the middle, the composer below. */
export class ChatView {
  readonly el: HTMLElement;
  #model: ChatModel;
  #current: string | null = null;
  #threads: ThreadSummary[] = [];
  #threadsError: string | null = null;
  #views = new Map<string, { view: ItemView; sig: string }>();
  #frame = 0;
  #loading = false;
  #loadError: string | null = null;

  #list = h("ul", { class: "thread-list", "aria-label": "Conversations" });
  #title = h("h1", { class: "conv-title" });
  #messages = h("div", { class: "messages", role: "log", "aria-live": "polite", "aria-label": "Messages" });
  #empty = h(
    "div",
    { class: "empty" },
    h("h2", { text: "What can I help with?" }),
    h("p", { text: "Ask anything. Tool calls and approvals show up here as they happen." }),
  );
  #input = h("textarea", { rows: 1, placeholder: "Message the agent…", "aria-label": "Message", enterKeyHint: "send" });
  #send = h("button", { type: "submit", class: "primary send", text: "Send" });
  #stop = h("button", { type: "button", class: "danger stop", text: "Stop", hidden: true });
  #status = h("p", { class: "composer-status", role: "status" });
  #delete = h("button", { type: "button", class: "ghost delete-chat", text: "Delete" });
  #confirmDelete = h("span", { class: "confirm-delete", hidden: true });

  constructor(model: ChatModel) {
    this.#model = model;
    model.onChange((threadId) => {
      if (threadId === this.#current) this.#schedule();
    });
    const composer = h(
      "form",
      { class: "composer", onsubmit: (e: Event) => (e.preventDefault(), this.#submit()) },
      h("div", { class: "composer-box" }, this.#input, this.#send, this.#stop),
      this.#status,
    );
    this.#input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.#submit();
      }
    });
    this.#input.addEventListener("input", () => this.#grow());
    this.#stop.addEventListener("click", () => this.#stopTurn());

    const side = h(
      "aside",
      { class: "sidebar threads", "aria-label": "Conversations" },
      h("div", { class: "sidebar-head" }, h("button", { type: "button", class: "primary new-chat", text: "New chat", onclick: () => this.open(null, true) })),
      this.#list,
    );
    const toggle = h("button", {
      type: "button",
      class: "ghost icon drawer-toggle",
      "aria-label": "Show conversations",
      text: "☰",
      onclick: () => this.el.classList.toggle("drawer-open"),
    });
    const backdrop = h("div", { class: "backdrop", onclick: () => this.el.classList.remove("drawer-open") });
    this.#delete.addEventListener("click", () => this.#askDelete(true));
    fill(
      this.#confirmDelete,
      h("span", { class: "small", text: "Delete this conversation for good?" }),
      h("button", { type: "button", class: "danger", text: "Delete conversation", onclick: () => void this.#deleteThread() }),
      h("button", { type: "button", class: "ghost", text: "Keep", onclick: () => this.#askDelete(false) }),
    );
    const head = h("div", { class: "conv-head" }, toggle, this.#title, this.#delete, this.#confirmDelete);
    const main = h("section", { class: "conversation" }, head, this.#messages, composer);
    this.el = h("div", { class: "screen chat" }, side, backdrop, main);
  }

  get current(): string | null {
    return this.#current;
  }

  /** Shows a thread (null: a new conversation) and loads what the server has stored. */
  async open(threadId: string | null, push = false): Promise<void> {
    this.el.classList.remove("drawer-open");
    this.#confirmDelete.hidden = true;
    if (push) history.pushState(null, "", threadId ? `/?thread=${encodeURIComponent(threadId)}` : "/");
    const changed = threadId !== this.#current;
    this.#current = threadId;
    if (changed) {
      this.#views.clear();
      this.#messages.replaceChildren();
    }
    this.#loadError = null;
    this.#renderThreads();
    this.#render();
    if (threadId === null) {
      this.#input.focus();
      return;
    }
    await this.reload(threadId);
  }

  /** Reloads a thread's stored history (after a reconnect, or when it is opened). */
  async reload(threadId: string): Promise<void> {
    this.#loading = true;
    this.#render();
    try {
      this.#model.loadHistory(threadId, await api.history(threadId));
    } catch (e) {
      // a thread's first turn is stored when it ends: until then the server does not know it
      const pending = e instanceof ApiError && e.status === 404 && this.#model.running(threadId);
      if (!pending && threadId === this.#current) this.#loadError = (e as Error).message;
    } finally {
      this.#loading = false;
      this.#render();
    }
  }

  async refreshThreads(): Promise<void> {
    try {
      this.#threads = await api.threads();
      this.#threadsError = null;
    } catch (e) {
      this.#threadsError = (e as Error).message;
    }
    this.#renderThreads();
    this.#schedule();
  }

  /** Every event of this user, from the shared stream. */
  handle(e: ChatEvent): void {
    this.#model.apply(e);
    if (e.type === "thread.compacted" && e.thread_id === this.#current) void this.reload(e.thread_id);
    if (e.type === "turn.completed" || (e.type === "turn.started" && !this.#threads.some((t) => t.id === e.thread_id))) {
      void this.refreshThreads();
    }
  }

  async #submit(): Promise<void> {
    const text = this.#input.value.trim();
    if (!text || this.#model.running(this.#current)) return;
    this.#input.value = "";
    this.#grow();
    if (text.toLowerCase() === "/compact") return this.#compact();
    const from = this.#current;
    const key = this.#model.beginSend(from, text);
    try {
      const accepted = await api.send(text, from);
      const turn = this.#model.accepted(from, key, accepted.response_id, accepted.thread_id);
      if (this.#current === from && from === null) {
        this.#current = accepted.thread_id;
        history.replaceState(null, "", `/?thread=${encodeURIComponent(accepted.thread_id)}`);
        this.#render();
        void this.refreshThreads();
      }
      if (turn.stopRequested && turn.running) void this.#cancel(accepted.thread_id, accepted.response_id);
    } catch (e) {
      this.#model.sendFailed(from, key, (e as Error).message);
      if (!this.#input.value) this.#input.value = text;
    }
  }

  /** `/compact`: summarise the thread's older turns now; the mark shows where. */
  async #compact(): Promise<void> {
    const threadId = this.#current;
    if (threadId === null) return this.#model.notice(null, "info", "Nothing to compact yet: this conversation has no turns.");
    this.#status.textContent = "Compacting…";
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
      this.#status.textContent = "";
    }
  }

  #stopTurn(): void {
    if (!this.#model.running(this.#current)) return;
    this.#stop.disabled = true;
    this.#status.textContent = "Stopping…";
    const responseId = this.#model.requestStop(this.#current);
    if (responseId) void this.#cancel(this.#current, responseId);
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
    try {
      await api.decide(threadId, decision);
      this.#model.updateApproval(threadId, callId, { busy: false });
    } catch (e) {
      this.#model.updateApproval(threadId, callId, { decided: null, busy: false, error: (e as Error).message });
    }
    void this.refreshThreads();
  }

  #askDelete(asking: boolean): void {
    this.#confirmDelete.hidden = !asking;
    this.#delete.hidden = asking || this.#current === null;
  }

  /** Deletes the open conversation on the server (its turns, responses and gates), then starts a new one. */
  async #deleteThread(): Promise<void> {
    const id = this.#current;
    if (!id) return;
    try {
      await api.deleteThread(id);
    } catch (e) {
      this.#model.notice(id, "error", `Could not delete: ${(e as Error).message}`);
      this.#askDelete(false);
      return;
    }
    this.#threads = this.#threads.filter((t) => t.id !== id);
    await this.open(null, true);
    void this.refreshThreads();
  }

  #grow(): void {
    this.#input.style.height = "auto";
    this.#input.style.height = `${Math.min(this.#input.scrollHeight, 240)}px`;
  }

  #schedule(): void {
    if (!this.#frame) this.#frame = requestAnimationFrame(() => ((this.#frame = 0), this.#render()));
  }

  #render(): void {
    const id = this.#current;
    const items = this.#model.items(id);
    // a thread is listed once its first turn is stored; until then its first message names it
    const firstUser = items.find((i) => i.kind === "user");
    const title = this.#threads.find((t) => t.id === id)?.title || (firstUser?.kind === "user" ? firstUser.text.slice(0, 80) : "");
    this.#title.textContent = id === null ? "New chat" : title || "Conversation";
    this.#delete.hidden = id === null || !this.#confirmDelete.hidden;
    document.title = `${id === null ? "Chat" : title || "Conversation"} · service`;

    const box = this.#messages;
    const nearBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
    const extra: HTMLElement[] = [];
    if (this.#loadError) extra.push(h("div", { class: "notice error", role: "alert", text: `Could not load this conversation: ${this.#loadError}` }));
    else if (this.#loading && !items.length) extra.push(h("div", { class: "loading", text: "Loading…" }));
    else if (!items.length) extra.push(this.#empty);

    const seen = new Set<string>();
    const nodes: HTMLElement[] = [];
    for (const item of items) {
      seen.add(item.id);
      const sig = signature(item);
      let entry = this.#views.get(item.id);
      if (!entry) {
        entry = { view: itemView(item, (t, c, d) => void this.#decide(t, c, d)), sig: "" };
        this.#views.set(item.id, entry);
      }
      if (entry.sig !== sig) {
        entry.view.update(item);
        entry.sig = sig;
      }
      nodes.push(entry.view.el);
    }
    for (const key of this.#views.keys()) if (!seen.has(key)) this.#views.delete(key);
    const wanted = [...nodes, ...extra];
    // move only what is out of place, so open <details> and selections survive
    wanted.forEach((node, i) => {
      if (box.children[i] !== node) box.insertBefore(node, box.children[i] ?? null);
    });
    while (box.children.length > wanted.length) box.lastElementChild!.remove();
    if (nearBottom) box.scrollTop = box.scrollHeight;

    const running = this.#model.running(id);
    this.#send.hidden = !!running;
    this.#stop.hidden = !running;
    if (!running) {
      this.#stop.disabled = false;
      this.#status.textContent = "";
    } else if (!this.#stop.disabled) {
      this.#status.textContent = "Working…";
    }
  }

  #renderThreads(): void {
    const rows = this.#threads.map((t) =>
      h(
        "li",
        null,
        h(
          "a",
          {
            href: `/?thread=${encodeURIComponent(t.id)}`,
            class: t.id === this.#current ? "thread active" : "thread",
            "aria-current": t.id === this.#current ? "page" : null,
            onclick: (e: MouseEvent) => {
              if (e.metaKey || e.ctrlKey || e.shiftKey) return;
              e.preventDefault();
              void this.open(t.id, true);
            },
          },
          h("span", { class: "thread-title", text: t.title || "Untitled conversation" }),
          h(
            "span",
            { class: "thread-meta" },
            t.waiting === "approval" ? h("span", { class: "badge", text: "needs approval" }) : null,
            t.waiting === "oauth" ? h("span", { class: "badge", text: "needs connection" }) : null,
            t.channel && CHANNELS[t.channel] ? h("span", { class: "badge channel", text: CHANNELS[t.channel]!, title: `Started through the ${CHANNELS[t.channel]}` }) : null,
            h("span", { text: ago(t.updated_at) }),
          ),
        ),
      ),
    );
    if (this.#threadsError) rows.unshift(h("li", { class: "notice error", text: this.#threadsError }));
    else if (!rows.length) rows.push(h("li", { class: "muted small", text: "No conversations yet." }));
    fill(this.#list, ...rows);
  }
}

/** Conversations that did not start in a chat UI say where they came from. */
const CHANNELS: Record<string, string> = { webhook: "webhook", responses: "API" };

function signature(item: ViewItem): string {
  switch (item.kind) {
    case "assistant":
      return `${item.streaming}|${item.cutShort}|${item.text}`;
    case "reasoning":
      return `${item.streaming}|${item.text.length}`;
    case "tool":
      return `${item.output === null}|${item.isError}|${item.output?.length ?? 0}`;
    case "approval":
      return `${item.decided}|${item.busy}|${item.error}`;
    case "connect":
      return item.url;
    default:
      return "static";
  }
}
