// The Egress page: every call that could carry the user's data out of the box and ran (GET
// /api/egress), newest first: the tool, where the data could go, the conversation, when, and
// who or what let it go. Self-contained: main.ts routes to it.
import type { EgressList, EgressRecord } from "../gateway/egress-wire";
import { api } from "./api";
import { ago, fill, h } from "./dom";
import "./usage.css";

const PAGE = 100;

/** Why a call could go, in words. */
const WHY: Record<string, string> = {
  "untainted turn": "nothing untrusted had been read",
  "allow list": "the operator's allow list",
  "the user's own words": "only what you wrote",
  user: "you approved it",
  "user: always": "you always allow it",
};

export class EgressView {
  readonly el: HTMLElement;
  #list = h("div");
  #more = h("button", { type: "button", class: "ghost", text: "Older", hidden: true, onclick: () => void this.#load(true) });
  #error = h("p", { class: "notice error", role: "alert", hidden: true });
  #rows: EgressRecord[] = [];
  #seq = 0;

  constructor() {
    this.el = h(
      "section",
      { class: "activity-page egress-page", "aria-labelledby": "egress-title" },
      h("header", null, h("h1", { id: "egress-title", text: "Egress" }), h("button", { type: "button", class: "ghost", text: "Refresh", onclick: () => void this.refresh() })),
      h("p", {
        class: "muted",
        text: "Every call that could send your data out of this machine and ran. After the agent reads something untrusted (a web page, a tool's answer), such a call waits for your approval unless you allowed its destination.",
      }),
      this.#error,
      this.#list,
      this.#more,
    );
  }

  async refresh(): Promise<void> {
    this.#rows = [];
    await this.#load(false);
  }

  async #load(older: boolean): Promise<void> {
    const seq = ++this.#seq;
    const before = older ? this.#rows.at(-1)?.id : undefined;
    try {
      const page = await api.request<typeof EgressList>("GET", `/api/egress?limit=${PAGE}${before ? `&before=${before}` : ""}`);
      if (seq !== this.#seq) return;
      this.#rows = [...this.#rows, ...page.egress];
      this.#more.hidden = !page.has_more;
      this.#error.hidden = true;
      this.#render();
    } catch (e) {
      if (seq !== this.#seq) return;
      this.#error.textContent = `The egress log could not be read: ${(e as Error).message}`;
      this.#error.hidden = false;
    }
  }

  #render(): void {
    if (!this.#rows.length) return fill(this.#list, h("p", { class: "muted", text: "Nothing has left the box yet." }));
    fill(
      this.#list,
      h(
        "table",
        { class: "activity-table egress" },
        h("thead", null, h("tr", null, ...["Destination", "Tool", "Let through because", "Conversation", "When"].map((c) => h("th", { text: c, scope: "col" })))),
        h(
          "tbody",
          null,
          ...this.#rows.map((r) =>
            h(
              "tr",
              { "data-egress": String(r.id) },
              h("td", { class: "text", text: r.destination }),
              h("td", { text: r.tool }),
              h("td", { text: WHY[r.approved_by] ?? r.approved_by }),
              h("td", null, h("a", { href: `/?thread=${encodeURIComponent(r.thread_id)}`, text: "Open" })),
              h("td", { class: "muted", text: ago(r.created_at), title: r.created_at }),
            ),
          ),
        ),
      ),
    );
  }
}
