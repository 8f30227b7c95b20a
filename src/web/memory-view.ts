import { ApiError } from "../client/http";
import { api } from "./api";
import { ago, fill, h } from "./dom";
import { announcer } from "./announcer";
import { decorateMarkdown } from "./rendered-markdown";
import { renderMarkdown } from "./markdown";
import type { MemoryDocument, MemoryHit } from "./wire";

/** The documents that go into every system prompt, in prompt order (src/memory/identity.ts). */
const IDENTITY = [
  { path: "AGENTS.md", about: "How the agent works" },
  { path: "SOUL.md", about: "Personality and values" },
  { path: "USER.md", about: "About you" },
  { path: "IDENTITY.md", about: "Name and role" },
];

/** The memory screen: documents and search on the side, the open document in an editor. */
export class MemoryView {
  readonly el: HTMLElement;
  #docs: MemoryDocument[] = [];
  #listError: string | null = null;
  #hits: MemoryHit[] | null = null;
  #searchTimer: ReturnType<typeof setTimeout> | undefined;
  #searchSeq = 0;
  #path: string | null = null;
  #saved = "";
  #isNew = false;
  #preview = false;

  #search = h("input", { type: "search", placeholder: "Search memory…", "aria-label": "Search memory", autocomplete: "off" });
  #list = h("nav", { class: "doc-list", "aria-label": "Memory documents" });
  #title = h("h1", { class: "doc-title" });
  #meta = h("span", { class: "doc-meta muted small" });
  #text = h("textarea", { class: "doc-text", spellcheck: true, "aria-label": "Document text", dir: "auto", lang: "" });
  #rendered = h("div", { class: "md doc-preview", hidden: true, dir: "auto", lang: "" });
  #save = h("button", { type: "button", class: "primary", text: "Save", disabled: true });
  #toggle = h("button", { type: "button", class: "ghost", text: "Preview", "aria-pressed": "false" });
  #delete = h("button", { type: "button", class: "ghost delete", text: "Delete" });
  #confirmText = h("span", { id: "doc-confirm-text" });
  #cancelDelete = h("button", { type: "button", class: "ghost", text: "Cancel", onclick: () => this.#askDelete(false, true) });
  #confirm = h(
    "div",
    { class: "doc-confirm", role: "alertdialog", "aria-label": "Confirm deletion", "aria-describedby": "doc-confirm-text", hidden: true },
    this.#confirmText,
    h("button", { type: "button", class: "danger", text: "Delete for good", onclick: () => void this.delete() }),
    this.#cancelDelete,
  );
  #notice = h("p", { class: "notice info", role: "status", hidden: true });
  #status = h("span", { class: "doc-status small", role: "status" });
  #editor: HTMLElement;
  #placeholder = h(
    "div",
    { class: "empty" },
    h("h1", { text: "Memory" }),
    h("p", { text: "Pick a document to read or edit. AGENTS.md, SOUL.md, USER.md and IDENTITY.md go into every answer the agent gives." }),
    this.#notice,
  );

  constructor() {
    this.#search.addEventListener("input", () => this.#queueSearch());
    this.#text.addEventListener("input", () => this.#renderStatus());
    this.#text.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
        e.preventDefault();
        void this.save();
      }
    });
    this.#save.addEventListener("click", () => void this.save());
    this.#toggle.addEventListener("click", () => this.#setPreview(!this.#preview));
    this.#delete.addEventListener("click", () => this.#askDelete(true, true));
    this.#confirm.addEventListener("keydown", (e) => {
      if (e.key === "Escape") (e.preventDefault(), this.#askDelete(false, true));
    });
    addEventListener("beforeunload", (e) => {
      if (this.dirty) e.preventDefault();
    });

    const back = h("button", { type: "button", class: "ghost back", text: "← Documents", onclick: () => void this.open(null, true) });
    this.#editor = h(
      "section",
      { class: "doc-editor", hidden: true },
      h("div", { class: "doc-head" }, back, h("div", { class: "doc-heading" }, this.#title, this.#meta), h("div", { class: "doc-tools" }, this.#toggle, this.#delete, this.#save)),
      this.#confirm,
      this.#text,
      this.#rendered,
      h("div", { class: "doc-foot" }, this.#status, h("span", { class: "muted small hint", text: "Ctrl+S saves" })),
    );
    const side = h(
      "aside",
      { class: "sidebar docs", "aria-label": "Memory documents" },
      h("div", { class: "sidebar-head" }, this.#search, h("button", { type: "button", text: "New", title: "New document", onclick: () => this.#newDocument() })),
      this.#list,
    );
    this.el = h("div", { class: "screen memory" }, side, h("section", { class: "doc-pane" }, this.#placeholder, this.#editor));
  }

  get dirty(): boolean {
    return this.#path !== null && (this.#text.value !== this.#saved || this.#isNew);
  }

  /** Lets a pending edit go only if the user agrees. */
  confirmLeave(): boolean {
    return !this.dirty || confirm(`Discard your unsaved changes to ${this.#path}?`);
  }

  async refresh(): Promise<void> {
    try {
      this.#docs = (await api.memoryTree()).documents;
      this.#listError = null;
    } catch (e) {
      this.#listError = e instanceof ApiError && e.status === 404 ? "Memory is not available on this server." : (e as Error).message;
    }
    this.#renderList();
  }

  /** Opens a document (null: none) for reading and editing. */
  async open(path: string | null, push = false): Promise<void> {
    if (path !== this.#path && !this.confirmLeave()) return;
    if (push) history.pushState(null, "", path ? `/memory?path=${encodeURIComponent(path)}` : "/memory");
    this.#path = path;
    this.#askDelete(false);
    if (path !== null) this.#notice.hidden = true;
    this.el.classList.toggle("doc-open", path !== null);
    this.#placeholder.hidden = path !== null;
    this.#editor.hidden = path === null;
    this.#renderList();
    if (path === null) {
      document.title = "Memory · service";
      return;
    }
    document.title = `${path} · service`;
    this.#title.textContent = path;
    this.#meta.textContent = "";
    this.#text.value = "";
    this.#text.disabled = true;
    this.#saved = "";
    this.#isNew = false;
    this.#status.textContent = "Loading…";
    try {
      const doc = await api.memoryRead(path);
      if (this.#path !== path) return;
      this.#saved = doc.content;
      this.#text.value = doc.content;
      this.#meta.textContent = `updated ${ago(doc.updated_at)}`;
    } catch (e) {
      if (this.#path !== path) return;
      if (!(e instanceof ApiError && e.status === 404)) {
        this.#status.textContent = "";
        this.#setError(`Could not open ${path}: ${(e as Error).message}`);
        return;
      }
      this.#isNew = true;
      this.#meta.textContent = "new document";
    }
    this.#delete.hidden = this.#isNew;
    this.#text.disabled = false;
    this.#setPreview(this.#preview);
    this.#renderStatus();
  }

  async save(): Promise<void> {
    const path = this.#path;
    if (!path || !this.dirty) return;
    const content = this.#text.value;
    this.#save.disabled = true;
    this.#status.textContent = "Saving…";
    this.#status.className = "doc-status small";
    try {
      await api.memoryWrite(path, content);
      if (this.#path !== path) return;
      this.#saved = content;
      this.#isNew = false;
      this.#delete.hidden = false;
      this.#meta.textContent = "updated just now";
      this.#renderStatus("Saved");
      void this.refresh();
    } catch (e) {
      this.#setError(`Not saved: ${(e as Error).message}`);
      this.#save.disabled = false;
    }
  }

  /** Deletes the open document (after the user confirmed it) and goes back to the list. */
  async delete(): Promise<void> {
    const path = this.#path;
    if (!path) return;
    this.#askDelete(false);
    this.#status.textContent = "Deleting…";
    try {
      await api.memoryDelete(path);
    } catch (e) {
      // already gone is what was asked for
      if (!(e instanceof ApiError && e.status === 404)) {
        this.#setError(`Not deleted: ${(e as Error).message}`);
        return;
      }
    }
    if (this.#path !== path) return;
    // nothing left to lose: leave without asking about unsaved changes
    this.#saved = this.#text.value;
    this.#isNew = false;
    await this.open(null, true);
    this.#notice.textContent = `${path} was deleted.`;
    this.#notice.hidden = false;
    await this.refresh();
    // the document's buttons are gone: the focus goes to the list, not to the page
    this.#search.focus();
  }

  /** Shows or hides the confirmation; `focus`: the focus goes to Cancel (or back to Delete). */
  #askDelete(show: boolean, focus = false): void {
    this.#confirm.hidden = !show;
    if (show && this.#path) this.#confirmText.textContent = `Delete ${this.#path}? This cannot be undone.`;
    if (focus) (show ? this.#cancelDelete : this.#delete).focus();
  }

  #setError(message: string): void {
    this.#status.textContent = message;
    this.#status.className = "doc-status small error";
    this.#status.setAttribute("role", "alert");
  }

  #renderStatus(done?: string): void {
    const dirty = this.dirty;
    this.#save.disabled = !dirty;
    this.#status.className = `doc-status small${dirty ? " dirty" : ""}`;
    this.#status.setAttribute("role", "status");
    this.#status.textContent = done ?? (dirty ? (this.#isNew ? "New document, not saved yet" : "Unsaved changes") : "All changes saved");
    if (this.#preview) this.#paintPreview();
  }

  #paintPreview(): void {
    this.#rendered.innerHTML = renderMarkdown(this.#text.value);
    decorateMarkdown(this.#rendered, (m) => announcer.say(m));
  }

  #setPreview(on: boolean): void {
    this.#preview = on;
    this.#toggle.textContent = on ? "Edit" : "Preview";
    this.#toggle.setAttribute("aria-pressed", String(on));
    this.#text.hidden = on;
    this.#rendered.hidden = !on;
    if (on) this.#paintPreview();
  }

  #newDocument(): void {
    const path = prompt("Path of the new document (for example notes/ideas.md):")?.trim();
    if (path) void this.open(path, true);
  }

  #queueSearch(): void {
    clearTimeout(this.#searchTimer);
    const q = this.#search.value.trim();
    if (!q) {
      this.#hits = null;
      this.#renderList();
      return;
    }
    this.#searchTimer = setTimeout(async () => {
      const seq = ++this.#searchSeq;
      try {
        const { results } = await api.memorySearch(q);
        if (seq === this.#searchSeq) this.#hits = results;
      } catch (e) {
        if (seq === this.#searchSeq) this.#hits = [{ path: "", snippet: (e as Error).message, score: -1 }];
      }
      this.#renderList();
    }, 200);
  }

  #link(path: string, ...body: (Node | string)[]): HTMLAnchorElement {
    return h(
      "a",
      {
        href: `/memory?path=${encodeURIComponent(path)}`,
        class: path === this.#path ? "doc active" : "doc",
        "aria-current": path === this.#path ? "page" : null,
        onclick: (e: MouseEvent) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey) return;
          e.preventDefault();
          void this.open(path, true);
        },
      },
      ...body,
    );
  }

  #renderList(): void {
    if (this.#hits) {
      const rows = this.#hits.map((hit) =>
        hit.score < 0 && !hit.path
          ? h("p", { class: "notice error", text: hit.snippet })
          : this.#link(hit.path, h("span", { class: "doc-path", text: hit.path }), h("span", { class: "snippet" }, ...snippetNodes(hit.snippet))),
      );
      fill(this.#list, h("div", { class: "section", text: "Search results" }), ...(rows.length ? rows : [h("p", { class: "muted small", text: "Nothing found." })]));
      return;
    }
    const known = new Map(this.#docs.map((d) => [d.path, d]));
    const identity = IDENTITY.map((d) =>
      this.#link(d.path, h("span", { class: "doc-path", text: d.path }), h("span", { class: "snippet", text: known.has(d.path) ? d.about : `${d.about} (not written yet)` })),
    );
    const names = new Set(IDENTITY.map((d) => d.path));
    const others = this.#docs
      .filter((d) => !names.has(d.path))
      .sort((a, b) => a.path.localeCompare(b.path))
      .map((d) => {
        const slash = d.path.lastIndexOf("/");
        return this.#link(
          d.path,
          h("span", { class: "doc-path" }, slash >= 0 ? h("span", { class: "folder", text: d.path.slice(0, slash + 1) }) : null, d.path.slice(slash + 1)),
          h("span", { class: "snippet", text: `${formatSize(d.size)} · ${ago(d.updated_at)}` }),
        );
      });
    fill(
      this.#list,
      this.#listError ? h("p", { class: "notice error", role: "alert", text: this.#listError }) : null,
      h("div", { class: "section", text: "Identity" }),
      ...identity,
      h("div", { class: "section", text: "Documents" }),
      ...(others.length ? others : [h("p", { class: "muted small", text: "No other documents yet." })]),
    );
  }
}

/** A search snippet with its `**matched words**` in bold: text nodes and <strong>, never HTML. */
function snippetNodes(snippet: string): (string | HTMLElement)[] {
  return snippet.split(/\*\*(.+?)\*\*/g).map((part, i) => (i % 2 ? h("strong", { text: part }) : part));
}

function formatSize(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10240 ? 1 : 0)} KB`;
}
