import { ChatModel } from "../client/chat-model";
import { ApiError } from "../client/http";
import type { StreamState } from "../client/sse";
import { announcer } from "./announcer";
import { api, checkToken, onUnauthorized } from "./api";
import { ChatView } from "./chat-view";
import { fill, h } from "./dom";
import { MemoryView } from "./memory-view";
import { RoutinesView } from "./routines-view";
import { ActivityView } from "./activity-view";
import { EgressView } from "./egress-view";
import { lazyPage } from "./lazy-page";
import { forgetToken, storedToken, storeToken, takeTokenFromUrl } from "./session";
import { endSession, ssoButtons } from "./sso";

/** The pauses before reconnecting the event stream, the last one repeated. */
const RETRY_MS = [1_000, 2_000, 4_000, 8_000, 10_000];

const root = document.getElementById("app")!;

/** The signed-in app: a top bar, and the chat or memory screen under it. */
class Shell {
  readonly el: HTMLElement;
  readonly chat = new ChatView(new ChatModel());
  readonly memory = new MemoryView();
  readonly routines = new RoutinesView();
  /** Pages beside the chat and memory screens, by path: what they show, and whether they were read yet. */
  readonly #pages = {
    "/activity": new ActivityView(),
    "/egress": new EgressView(),
    // the charting library is loaded when the page is first opened
    "/usage": lazyPage(async () => new (await import("./usage-view")).UsageView()),
  };
  #screen = h("main", { class: "screen-host" });
  #conn = h("span", { class: "conn", role: "status" });
  #nav = {
    chat: h("a", { href: "/", text: "Chat" }),
    memory: h("a", { href: "/memory", text: "Memory" }),
    routines: h("a", { href: "/routines", text: "Routines" }),
    activity: h("a", { href: "/activity", text: "Activity" }),
    usage: h("a", { href: "/usage", text: "Usage" }),
    egress: h("a", { href: "/egress", text: "Egress" }),
  };
  #events = new AbortController();
  /** The event stream has been open once: opening it again means events may have been missed. */
  #opened = false;
  #memoryLoaded = false;

  constructor() {
    for (const [name, link] of Object.entries(this.#nav)) {
      link.addEventListener("click", (e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        const onMemory = location.pathname === "/memory";
        const target = name === "chat" ? "/" : `/${name}`;
        if (target === location.pathname) return;
        if (onMemory && !this.memory.confirmLeave()) return;
        // back to the conversation that was open before
        const thread = this.chat.current;
        history.pushState(null, "", name === "chat" && thread ? `/?thread=${encodeURIComponent(thread)}` : target);
        void this.route();
      });
    }
    this.el = h(
      "div",
      { class: "shell" },
      h(
        "header",
        { class: "topbar" },
        h("a", { class: "brand", href: "/", "aria-label": "service home" }, h("span", { class: "logo", "aria-hidden": "true" }), "service"),
        h("nav", { class: "tabs", "aria-label": "Main" }, ...Object.values(this.#nav)),
        this.#conn,
        h("button", { type: "button", class: "ghost signout", text: "Sign out", onclick: () => this.#signOut() }),
      ),
      this.#screen,
      announcer.el,
    );
    addEventListener("keydown", this.#onKey);
    void api.status().then(
      (st) => (this.chat.modelName = st.llm.model ?? (st.llm.configured ? "the default model" : "no model configured")),
      () => {},
    );
    // links between the pages (the Activity page's "Watch it") stay in this page, as the tabs do
    this.#screen.addEventListener("click", (e) => {
      const link = (e.target as Element).closest?.("a");
      if (!link || link.origin !== location.origin || link.target || e.metaKey || e.ctrlKey || e.shiftKey) return;
      e.preventDefault();
      history.pushState(null, "", link.pathname + link.search);
      void this.route();
    });
    void api.follow({
      onEvent: (e) => {
        this.chat.handle(e);
        this.#pages["/activity"].handle(e);
      },
      onState: (s) => this.#onStream(s),
      signal: this.#events.signal,
      retryMs: RETRY_MS,
    });
    addEventListener("popstate", this.#onPopState);
    void this.chat.refreshThreads();
  }

  async route(): Promise<void> {
    const params = new URLSearchParams(location.search);
    const onMemory = location.pathname === "/memory";
    const onRoutines = location.pathname === "/routines";
    const page = (this.#pages as Record<string, { el: HTMLElement; refresh(): Promise<void> } | undefined>)[location.pathname];
    for (const link of Object.values(this.#nav)) {
      if (new URL(link.href).pathname === (page || onMemory || onRoutines ? location.pathname : "/")) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    this.chat.shown = !page && !onRoutines && !onMemory;
    if (page) {
      fill(this.#screen, page.el);
      await page.refresh();
    } else if (onRoutines) {
      fill(this.#screen, this.routines.el);
      await this.routines.open(params.get("id"));
    } else if (onMemory) {
      fill(this.#screen, this.memory.el);
      if (!this.#memoryLoaded) {
        this.#memoryLoaded = true;
        void this.memory.refresh();
      }
      await this.memory.open(params.get("path"));
    } else {
      fill(this.#screen, this.chat.el);
      await this.chat.open(params.get("thread"));
    }
  }

  close(): void {
    this.#events.abort();
    removeEventListener("popstate", this.#onPopState);
    removeEventListener("keydown", this.#onKey);
  }

  /** Ctrl+Shift+O starts a new chat, Ctrl+K searches the conversations (as in ChatGPT). */
  #onKey = (e: KeyboardEvent) => {
    const mod = e.ctrlKey || e.metaKey;
    const shortcut = mod && e.shiftKey && e.key.toLowerCase() === "o" ? "new" : mod && !e.shiftKey && e.key.toLowerCase() === "k" ? "search" : null;
    if (!shortcut) return;
    e.preventDefault();
    void (async () => {
      if (location.pathname === "/memory") {
        if (!this.memory.confirmLeave()) return;
        history.pushState(null, "", "/");
        await this.route();
      }
      if (shortcut === "new") await this.chat.open(null, true);
      else this.chat.focusSearch();
    })();
  };

  #onPopState = () => void this.route();

  #onStream(stream: StreamState): void {
    if (stream === "unauthorized") return signedOut("Your token is no longer accepted. Sign in again.");
    if (stream === "connected" && this.#opened) {
      void this.chat.refreshThreads();
      if (this.chat.current) void this.chat.reload(this.chat.current);
    }
    if (stream === "connected") this.#opened = true;
    const state = stream === "connected" ? "open" : this.#opened ? "offline" : "connecting";
    this.#conn.dataset.state = state;
    this.#conn.textContent = state === "open" ? "Connected" : state === "connecting" ? "Connecting…" : "Offline, reconnecting…";
    this.#conn.title = state === "open" ? "Connected: answers and approvals arrive as they happen" : this.#conn.textContent;
  }

  #signOut(): void {
    if (!this.memory.confirmLeave()) return;
    endSession(storedToken());
    forgetToken();
    signedOut("You are signed out.");
  }
}

let shell: Shell | undefined;

function start(): void {
  shell?.close();
  shell = new Shell();
  fill(root, shell.el);
  void shell.route();
}

function signedOut(message?: string): void {
  shell?.close();
  shell = undefined;
  forgetToken();
  fill(root, signInView(message));
}

/** Paste a token; it is checked against the service before it is kept. */
function signInView(message?: string): HTMLElement {
  const input = h("input", { type: "password", id: "token", name: "token", autocomplete: "current-password", required: true, spellcheck: false });
  const error = h("p", { class: "form-error", role: "alert" });
  const button = h("button", { type: "submit", class: "primary", text: "Sign in" });
  const form = h(
    "form",
    {
      class: "signin card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        button.disabled = true;
        error.textContent = "";
        try {
          await checkToken(token);
          storeToken(token);
          start();
        } catch (err) {
          error.textContent = err instanceof ApiError && err.status === 401 ? "That token was not accepted." : (err as Error).message;
          button.disabled = false;
          input.select();
        }
      },
    },
    h("div", { class: "brand big" }, h("span", { class: "logo", "aria-hidden": "true" }), "service"),
    h("h1", { text: "Sign in" }),
    message ? h("p", { class: "notice info", role: "status", text: message }) : null,
    ssoButtons(),
    h("label", { for: "token", text: "Access token" }),
    input,
    h(
      "p",
      { class: "muted small" },
      "Use the login link that ",
      h("code", { text: "service onboard" }),
      " printed, the instance token in ",
      h("code", { text: "webui-token" }),
      " in the service home, or a personal token from your admin.",
    ),
    error,
    button,
  );
  queueMicrotask(() => input.focus());
  return h("div", { class: "signin-page" }, form);
}

onUnauthorized(() => signedOut("Your token is no longer accepted. Sign in again."));
addEventListener("storage", (e) => {
  // signing out (or in) in another tab does the same here
  if (e.key !== null && e.key !== "service.token") return;
  if (!storedToken() && shell) signedOut("You signed out in another tab.");
  else if (storedToken() && !shell) start();
});

takeTokenFromUrl();
if (storedToken()) start();
else signedOut();
