import { api } from "./api";
import { ago, fill, h } from "./dom";
import type { PendingApproval, ThreadSummary } from "./wire";

/** Conversations that did not start in a chat UI say where they came from. */
const CHANNELS: Record<string, string> = { webhook: "webhook", responses: "API" };

export interface ThreadListHost {
  /** Opens a thread (null: a new conversation). */
  open(threadId: string | null): void;
  /** The thread shown now. */
  current(): string | null;
  /** Opens the approval prompt of a thread and puts the focus on it. */
  openApproval(threadId: string): void;
}

/**
 * The side of the chat screen: New chat, search, the tool calls waiting for a decision in
 * any conversation, and the conversations by date (Today, Yesterday, Previous 7 days…).
 */
export class ThreadList {
  readonly el: HTMLElement;
  threads: ThreadSummary[] = [];
  #approvals: PendingApproval[] = [];
  #error: string | null = null;
  #query = "";
  #results: ThreadSummary[] | null = null;
  #searchTimer: ReturnType<typeof setTimeout> | undefined;
  #searchSeq = 0;

  readonly newChat = h("button", { type: "button", class: "primary new-chat", text: "New chat", title: "New chat (Ctrl+Shift+O)", "aria-keyshortcuts": "Control+Shift+O" });
  readonly search = h("input", {
    type: "search",
    class: "thread-search",
    placeholder: "Search conversations",
    "aria-label": "Search conversations",
    title: "Search conversations (Ctrl+K)",
    "aria-keyshortcuts": "Control+K",
    autocomplete: "off",
  });
  readonly #approvalsBox = h("section", { class: "pending", "aria-labelledby": "pending-label", hidden: true });
  readonly #list = h("nav", { class: "thread-list", "aria-label": "Conversations" });

  constructor(readonly host: ThreadListHost) {
    this.newChat.addEventListener("click", () => host.open(null));
    this.search.addEventListener("input", () => this.#queueSearch());
    this.search.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.search.value) {
        e.stopPropagation();
        this.search.value = "";
        this.#queueSearch();
      }
    });
    this.el = h(
      "aside",
      { class: "sidebar threads", id: "conversations", "aria-label": "Conversations" },
      h("div", { class: "sidebar-head" }, this.newChat, this.search),
      this.#approvalsBox,
      this.#list,
    );
  }

  async refresh(): Promise<void> {
    try {
      const [threads, approvals] = await Promise.all([api.threads(), api.approvals().catch(() => [] as PendingApproval[])]);
      this.threads = threads;
      this.#approvals = approvals;
      this.#error = null;
    } catch (e) {
      this.#error = (e as Error).message;
    }
    this.render();
  }

  /** A thread the service has just stored (a new conversation's first message): listed at once. */
  added(thread: ThreadSummary): void {
    if (this.threads.some((t) => t.id === thread.id)) return;
    this.threads = [thread, ...this.threads];
    this.render();
  }

  removed(threadId: string): void {
    this.threads = this.threads.filter((t) => t.id !== threadId);
    this.#approvals = this.#approvals.filter((a) => a.thread_id !== threadId);
    this.render();
  }

  title(threadId: string | null): string | null {
    return this.threads.find((t) => t.id === threadId)?.title ?? null;
  }

  render(): void {
    this.#renderApprovals();
    const current = this.host.current();
    const row = (t: ThreadSummary) => h("li", null, this.#link(t, current));
    if (this.#results) {
      const rows = this.#results.map(row);
      fill(
        this.#list,
        group("search", `Results for “${this.#query}”`, rows.length ? rows : [h("li", { class: "muted small", text: "No conversation matches." })]),
      );
      return;
    }
    const groups = new Map<string, HTMLElement[]>();
    for (const t of this.threads) {
      const name = dayGroup(t.updated_at);
      groups.set(name, [...(groups.get(name) ?? []), row(t)]);
    }
    fill(
      this.#list,
      this.#error ? h("p", { class: "notice error", role: "alert", text: this.#error }) : null,
      ...[...groups].map(([name, rows], i) => group(`g${i}`, name, rows)),
      !this.threads.length && !this.#error ? h("p", { class: "muted small empty-list", text: "No conversations yet." }) : null,
    );
  }

  #renderApprovals(): void {
    const items = this.#approvals.map((a) =>
      h(
        "li",
        null,
        h(
          "a",
          {
            href: `/?thread=${encodeURIComponent(a.thread_id)}`,
            class: "pending-call",
            onclick: (e: MouseEvent) => {
              if (e.metaKey || e.ctrlKey || e.shiftKey) return;
              e.preventDefault();
              this.host.openApproval(a.thread_id);
            },
          },
          h("span", { class: "pending-tool" }, h("code", { text: a.tool })),
          h("span", { class: "pending-thread", dir: "auto", text: a.thread_title || "Untitled conversation" }),
        ),
      ),
    );
    this.#approvalsBox.hidden = !items.length;
    fill(
      this.#approvalsBox,
      h("div", { class: "group-label", id: "pending-label" }, h("span", { class: "pending-icon", "aria-hidden": "true" }), `Waiting for your approval (${items.length})`),
      h("ul", { class: "plain" }, ...items),
    );
  }

  #link(t: ThreadSummary, current: string | null): HTMLAnchorElement {
    const active = t.id === current;
    return h(
      "a",
      {
        href: `/?thread=${encodeURIComponent(t.id)}`,
        class: active ? "thread active" : "thread",
        "aria-current": active ? "page" : null,
        onclick: (e: MouseEvent) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey) return;
          e.preventDefault();
          this.host.open(t.id);
        },
      },
      h("span", { class: "thread-title", dir: "auto", text: t.title || "Untitled conversation" }),
      h(
        "span",
        { class: "thread-meta" },
        t.waiting === "approval" ? h("span", { class: "badge", text: "needs approval" }) : null,
        t.waiting === "oauth" ? h("span", { class: "badge", text: "needs connection" }) : null,
        t.channel && CHANNELS[t.channel] ? h("span", { class: "badge channel", text: CHANNELS[t.channel]!, title: `Started through the ${CHANNELS[t.channel]}` }) : null,
        h("time", { datetime: t.updated_at, text: ago(t.updated_at) }),
      ),
    );
  }

  #queueSearch(): void {
    clearTimeout(this.#searchTimer);
    this.#query = this.search.value.trim();
    if (!this.#query) {
      this.#results = null;
      this.render();
      return;
    }
    this.#searchTimer = setTimeout(async () => {
      const seq = ++this.#searchSeq;
      try {
        const found = await api.threads(this.#query);
        if (seq === this.#searchSeq) this.#results = found;
      } catch (e) {
        if (seq === this.#searchSeq) this.#error = (e as Error).message;
      }
      this.render();
    }, 200);
  }
}

/** A labelled list of conversation rows. */
function group(id: string, label: string, rows: HTMLElement[]): HTMLElement {
  const labelId = `threads-${id}`;
  return h("div", { class: "thread-group" }, h("div", { class: "group-label", id: labelId, text: label }), h("ul", { class: "plain", "aria-labelledby": labelId }, ...rows));
}

/** The group a conversation is listed under, by when it was last active: Today, Yesterday, Previous 7 days, Previous 30 days, then by month. */
export function dayGroup(iso: string, now = new Date()): string {
  const at = new Date(iso);
  const startOf = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((startOf(now) - startOf(at)) / 86_400_000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return "Previous 7 days";
  if (days < 30) return "Previous 30 days";
  return at.toLocaleDateString(undefined, { month: "long", year: "numeric" });
}
