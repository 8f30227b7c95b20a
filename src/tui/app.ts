import blessed from "blessed";
import { ApiError, ChatClient, type ChatEvent, type ConnectionState, type Decision, type ThreadSummary } from "./client";
import { Editor } from "./editor";
import { Layout, type Focus } from "./layout";
import { redirectConsole } from "./log";
import { statusLine, threadLines } from "./status";
import { openTerminal, type Terminal } from "./terminal";
import { brief, escapeTags, Transcript } from "./transcript";

export interface TuiOptions {
  url: string;
  token: string;
  /** Open this thread at start; a new conversation otherwise. */
  threadId?: string;
  /** Receives console output and the TUI's own diagnostics while it owns the terminal. */
  log: (message: string) => void;
  /** Lines shown at the top of the transcript (serve's banner). */
  banner?: string[];
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
}

export interface RunningTui {
  /** Resolves once the user has quit (Ctrl+C) or close() was called; the terminal is restored. */
  done: Promise<void>;
  close(): void;
}

/** Starts the terminal UI, a client of the service's HTTP API at `url`. */
export function startTui(opts: TuiOptions): RunningTui {
  const restoreConsole = redirectConsole(opts.log);
  let app: ChatApp;
  try {
    app = new ChatApp(opts);
  } catch (e) {
    restoreConsole();
    throw e;
  }
  const done = app.done.finally(restoreConsole);
  return { done, close: () => app.quit() };
}

type Pending = { threadId: string; callId: string; tool: string; args: string };

/** Events of threads not shown yet (a first message's reply can beat its 202). */
const ORPHAN_LIMIT = 500;

class ChatApp {
  readonly done: Promise<void>;
  #resolveDone!: () => void;
  readonly #client: ChatClient;
  readonly #term: Terminal;
  readonly #ui: Layout;
  readonly #transcript = new Transcript();
  readonly #editor = new Editor();
  readonly #abort = new AbortController();

  #focus: Focus = "input";
  #threadId: string | undefined;
  #threadTitle: string | null = null;
  #threads: ThreadSummary[] = [];
  #model = "…";
  #connection: ConnectionState = "connecting";
  /** response id → thread id of every turn known to be running. */
  readonly #running = new Map<string, string>();
  readonly #finished = new Set<string>();
  /** Turns that compacted their thread: its history is read again when they end, to place the mark. */
  readonly #compacted = new Set<string>();
  #cancelling = false;
  #sending = false;
  #pending: Pending | undefined;
  #dialogOpen = false;
  #orphans: ChatEvent[] = [];
  #renderTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #wasDisconnected = false;
  /** Calls whose "connect the extension" notice was shown already. */
  readonly #connectAsked = new Set<string>();

  constructor(readonly opts: TuiOptions) {
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.#client = new ChatClient(opts.url, opts.token);
    this.#term = openTerminal({
      stdin: opts.stdin ?? process.stdin,
      stdout: opts.stdout ?? process.stdout,
      warn: opts.log,
      onLost: () => this.quit(),
    });
    const screen = this.#term.screen;
    this.#ui = new Layout(screen);

    screen.on("keypress", (ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg) => this.#guard(() => this.#onKey(ch, key)));
    screen.on("resize", () => this.#render());
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, this.#onSignal);

    if (opts.banner?.length) this.#transcript.add({ kind: "notice", text: opts.banner.join("\n") });
    this.#render();
    void this.#client.follow(
      (e) => this.#guard(() => this.#onEvent(e)),
      (s, detail) => this.#guard(() => this.#onConnection(s, detail)),
      this.#abort.signal,
    );
    void this.#start();
  }

  readonly #onSignal = () => this.quit();

  quit(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#renderTimer);
    this.#abort.abort();
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.off(signal, this.#onSignal);
    try {
      this.#term.close();
    } catch {
      // the terminal is gone (closed window, killed pane): nothing left to restore
    }
    this.#resolveDone();
  }

  /** Runs a handler; an error is shown and logged, never left to tear the terminal down. */
  #guard(fn: () => unknown): void {
    if (this.#closed) return;
    try {
      const r = fn();
      if (r instanceof Promise) r.catch((e) => this.#fail(e));
    } catch (e) {
      this.#fail(e);
    }
  }

  #fail(e: unknown): void {
    this.opts.log(`tui: ${(e as Error).stack ?? String(e)}`);
    this.#transcript.add({ kind: "error", text: (e as Error).message ?? String(e) });
    this.#schedule();
  }

  async #start(): Promise<void> {
    const [status] = await Promise.allSettled([this.#client.status(), this.#refreshThreads()]);
    if (status.status === "fulfilled") this.#model = status.value.llm.model ?? (status.value.llm.configured ? "default" : "no LLM configured");
    else this.#fail(status.reason);
    if (this.opts.threadId) await this.#openThread(this.opts.threadId);
    this.#schedule();
  }

  // ---- keys ----------------------------------------------------------------------------

  #onKey(ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg): void {
    if (key.full === "C-c") return this.quit();
    if (this.#dialogOpen) return this.#dialogKey(ch, key);
    switch (key.full) {
      case "C-l":
        return this.#clearView();
      case "tab":
        return this.#cycleFocus(1);
      case "S-tab":
        return this.#cycleFocus(-1);
      case "escape":
        return this.#escape();
      case "pageup":
        return this.#ui.scroll(-this.#ui.pageSize);
      case "pagedown":
        return this.#ui.scroll(this.#ui.pageSize);
      case "up":
      case "down":
        if (this.#focus === "threads") return this.#ui.moveThreadSelection(key.full === "up" ? -1 : 1);
        return this.#ui.scroll(key.full === "up" ? -1 : 1);
    }
    if (this.#focus === "threads") {
      if (key.full === "enter") void this.#guard(() => this.#openSelectedThread());
      return;
    }
    if (this.#focus === "transcript") {
      if (key.full === "home") return this.#ui.scrollTo("top");
      if (key.full === "end") return this.#ui.scrollTo("bottom");
      if (key.full === "enter" || isPrintable(ch, key)) {
        this.#setFocus("input");
        if (key.full !== "enter") this.#editor.insert(ch!);
        return this.#schedule();
      }
      return;
    }
    this.#inputKey(ch, key);
  }

  #inputKey(ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg): void {
    if (key.full === "enter") {
      // Enter arrives as "enter" (from CR) and again as "return": act once
      void this.#guard(() => this.#submit());
      return;
    }
    const printable = isPrintable(ch, key) ? ch : undefined;
    if (this.#pending && this.#editor.text === "" && (printable === "a" || printable === "d" || printable === "A")) {
      void this.#guard(() => this.#decide(printable === "a" ? "approve" : printable === "d" ? "deny" : "always"));
      return;
    }
    if (this.#editor.key(key.full, printable)) this.#schedule();
  }


  #dialogKey(ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg): void {
    if (ch === "a" || ch === "y") void this.#guard(() => this.#decide("approve"));
    else if (ch === "d" || ch === "n") void this.#guard(() => this.#decide("deny"));
    else if (ch === "A") void this.#guard(() => this.#decide("always"));
    else if (key.full === "escape") this.#showDialog(false);
  }

  #escape(): void {
    const running = this.#runningHere();
    if (running) {
      if (this.#cancelling) return;
      this.#cancelling = true;
      this.#transcript.add({ kind: "notice", text: "Cancelling…" });
      this.#schedule();
      void this.#client
        .cancel(running)
        .catch((e) => {
          // 400: it finished meanwhile
          if (!(e instanceof ApiError && e.status === 400)) this.#fail(e);
        })
        .finally(() => (this.#cancelling = false));
      return;
    }
    if (this.#focus !== "input") this.#setFocus("input");
  }

  #cycleFocus(step: number): void {
    const order: Focus[] = this.#ui.threadsShown ? ["input", "transcript", "threads"] : ["input", "transcript"];
    const i = order.indexOf(this.#focus);
    this.#setFocus(order[(i + step + order.length) % order.length]!);
  }

  #setFocus(focus: Focus): void {
    this.#focus = focus;
    this.#schedule();
  }

  // ---- actions -------------------------------------------------------------------------

  async #submit(): Promise<void> {
    const text = this.#editor.text;
    if (!text.trim() || this.#sending) return;
    if (text.trim().toLowerCase() === "/compact") return this.#compact();
    if (this.#runningHere()) {
      this.#notice("A reply is still running: wait for it, or press Esc to cancel it.");
      return;
    }
    if (this.#pending && this.#pending.threadId === this.#threadId) {
      this.#notice("This conversation waits for an approval: press a (approve), d (deny) or A (always allow).");
      this.#showDialog(true);
      return;
    }
    this.#editor.clear();
    this.#transcript.add({ kind: "user", text });
    this.#ui.stickToEnd();
    this.#sending = true;
    this.#schedule();
    try {
      const r = await this.#client.send(text, this.#threadId);
      if (!this.#threadId) {
        this.#threadId = r.thread_id;
        this.#threadTitle = brief(text, 40);
        const mine = this.#orphans.filter((e) => e.thread_id === r.thread_id);
        this.#orphans = this.#orphans.filter((e) => e.thread_id !== r.thread_id);
        for (const e of mine) this.#onEvent(e);
      }
      if (r.thread_id === this.#threadId && !this.#finished.has(r.response_id)) this.#running.set(r.response_id, r.thread_id);
      void this.#refreshThreads();
    } catch (e) {
      this.#transcript.add({ kind: "error", text: (e as Error).message });
      if (!this.#editor.text) this.#editor.insert(text); // give the text back to retry
    } finally {
      this.#sending = false;
      this.#schedule();
    }
  }

  /** `/compact`: the thread's older turns become a summary for the model; the mark shows where. */
  async #compact(): Promise<void> {
    const id = this.#threadId;
    this.#editor.clear();
    if (!id) return this.#notice("Nothing to compact yet: this conversation has no turns.");
    this.#notice("Compacting: summarising the earlier turns…");
    this.#schedule();
    try {
      const r = await this.#client.compact(id);
      if (this.#threadId !== id) return;
      await this.#reloadHistory(id);
      this.#notice(r.compaction ? `Compacted: ${r.compaction.summarised_items} earlier items are now a summary for the model.` : "Nothing to compact: only the latest turn is here.");
    } catch (e) {
      this.#transcript.add({ kind: "error", text: `Could not compact: ${(e as Error).message}` });
    }
    this.#schedule();
  }

  /** Shows the thread's stored history again (the place of a compaction mark is known then). */
  async #reloadHistory(id: string): Promise<void> {
    const h = await this.#client.history(id);
    if (this.#threadId === id) this.#transcript.load(h.items);
  }

  async #decide(decision: Decision): Promise<void> {
    const p = this.#pending;
    if (!p) return;
    this.#pending = undefined;
    this.#showDialog(false);
    const entry = this.#transcript.approval(p.callId);
    if (entry) entry.decision = decision === "approve" ? "approved" : decision === "deny" ? "denied" : `always allowed`;
    this.#schedule();
    try {
      const r = await this.#client.decide(p.threadId, decision);
      if (r?.response_id && !this.#finished.has(r.response_id)) this.#running.set(r.response_id, p.threadId);
    } catch (e) {
      this.#pending = p;
      if (entry) entry.decision = undefined;
      const message = e instanceof ApiError && e.status === 404 && /no such route/i.test(e.message)
        ? "this service does not take approvals over HTTP (no /api/chat/approvals)"
        : (e as Error).message;
      this.#transcript.add({ kind: "error", text: `The decision was not taken: ${message}` });
    }
    this.#schedule();
  }

  #clearView(): void {
    this.#transcript.clear();
    this.#ui.stickToEnd();
    this.#ui.screen.realloc();
    this.#render();
  }

  async #openThread(id: string | undefined): Promise<void> {
    this.#threadId = id;
    this.#threadTitle = null;
    this.#pending = undefined;
    this.#showDialog(false);
    this.#transcript.clear();
    this.#ui.stickToEnd();
    if (id) {
      const h = await this.#client.history(id);
      if (this.#threadId !== id) return;
      this.#threadTitle = h.title;
      this.#transcript.load(h.items);
      if (h.waiting?.kind === "approval") {
        this.#askApproval({ threadId: id, callId: h.waiting.call_id, tool: h.waiting.tool ?? "a tool", args: h.waiting.arguments ?? "" });
      }
      if (h.waiting?.kind === "oauth") this.#askConnect(h.waiting.call_id, h.waiting.tool, h.waiting.extension, h.waiting.connect_url);
    } else {
      this.#notice("New conversation: type a message and press Enter.");
    }
    this.#schedule();
  }

  async #openSelectedThread(): Promise<void> {
    const index = this.#ui.selectedThread;
    await this.#openThread(index === 0 ? undefined : this.#threads[index - 1]?.id);
    this.#setFocus("input");
  }

  async #refreshThreads(): Promise<void> {
    try {
      this.#threads = await this.#client.threads();
    } catch (e) {
      this.opts.log(`tui: listing threads: ${(e as Error).message}`);
    }
    this.#schedule();
  }

  #askApproval(p: Pending): void {
    this.#pending = p;
    if (!this.#transcript.approval(p.callId)) this.#transcript.add({ kind: "approval", callId: p.callId, tool: p.tool, args: p.args });
    this.#showDialog(true);
  }

  #showDialog(open: boolean): void {
    this.#dialogOpen = open && !!this.#pending;
    const p = this.#pending;
    this.#ui.dialog(
      this.#dialogOpen && p
        ? `{bold}${escapeTags(p.tool)}{/bold} wants to run with:\n${escapeTags(brief(p.args, 200))}\n\n` +
            `{bold}a{/bold} approve   {bold}d{/bold} deny   {bold}A{/bold} always allow   {bold}Esc{/bold} decide later`
        : null,
    );
    this.#schedule();
  }

  // ---- events --------------------------------------------------------------------------

  #onConnection(state: ConnectionState, detail?: string): void {
    if (state !== "connected" && state !== "connecting" && this.#connection === "connected") {
      this.opts.log(`tui: event stream lost: ${detail ?? state}`);
      this.#wasDisconnected = true;
    }
    if (state === "unauthorized" && this.#connection !== "unauthorized") {
      this.#transcript.add({ kind: "error", text: `The service refused the token (${detail ?? "401"}).` });
    }
    const resync = state === "connected" && this.#wasDisconnected;
    this.#connection = state;
    if (resync) {
      this.#wasDisconnected = false;
      void this.#guard(() => this.#resync());
    }
    this.#schedule();
  }

  /** After the event stream came back: what was missed is read from the API. */
  async #resync(): Promise<void> {
    for (const id of [...this.#running.keys()]) {
      const r = await this.#client.response(id).catch(() => undefined);
      if (r && r.status !== "in_progress" && r.status !== "queued") {
        this.#running.delete(id);
        this.#finished.add(id);
      }
    }
    if (this.#threadId) {
      const h = await this.#client.history(this.#threadId);
      this.#transcript.load(h.items);
      if (h.waiting?.kind === "approval") {
        this.#askApproval({ threadId: this.#threadId, callId: h.waiting.call_id, tool: h.waiting.tool ?? "a tool", args: h.waiting.arguments ?? "" });
      }
      if (h.waiting?.kind === "oauth") this.#askConnect(h.waiting.call_id, h.waiting.tool, h.waiting.extension, h.waiting.connect_url);
    }
    void this.#refreshThreads();
    this.#schedule();
  }

  #onEvent(e: ChatEvent): void {
    if (e.type === "thread.compacted") this.#compacted.add(e.response_id);
    if (e.type === "turn.completed" && this.#compacted.delete(e.response_id) && e.thread_id === this.#threadId) {
      void this.#guard(() => this.#reloadHistory(e.thread_id).then(() => this.#schedule()));
    }
    if (e.type === "turn.completed") {
      this.#running.delete(e.response_id);
      if (this.#finished.size > 1000) this.#finished.clear();
      this.#finished.add(e.response_id);
      void this.#refreshThreads();
    } else if (e.type === "turn.started") {
      this.#running.set(e.response_id, e.thread_id);
    }
    if (e.thread_id !== this.#threadId) {
      if (!this.#threadId && this.#sending) {
        this.#orphans.push(e);
        if (this.#orphans.length > ORPHAN_LIMIT) this.#orphans.shift();
      }
      return this.#schedule();
    }
    this.#transcript.apply(e);
    if (e.type === "approval.required") this.#askApproval({ threadId: e.thread_id, callId: e.call_id, tool: e.tool, args: e.arguments });
    if (e.type === "auth.required") this.#askConnect(e.call_id, e.tool, e.extension, e.connect_url);
    this.#schedule();
  }

  /** A tool waits for an extension to be connected: that happens in a browser, so say where. */
  #askConnect(callId: string, tool: string | null | undefined, extension: string | null | undefined, url: string | null | undefined): void {
    if (this.#connectAsked.has(callId)) return;
    this.#connectAsked.add(callId);
    const where = url ? new URL(url, this.opts.url).href : `${this.opts.url}/`;
    this.#notice(
      `${tool ?? "A tool"} needs the extension ${extension ?? "?"} connected to your account. Open ${where} in a browser; the reply goes on once it is connected.`,
    );
  }

  // ---- drawing -------------------------------------------------------------------------

  #notice(text: string): void {
    this.#transcript.add({ kind: "notice", text });
    this.#ui.stickToEnd();
    this.#schedule();
  }

  #runningHere(): string | undefined {
    for (const [id, thread] of this.#running) if (thread === this.#threadId) return id;
    return undefined;
  }

  #schedule(): void {
    if (this.#renderTimer || this.#closed) return;
    this.#renderTimer = setTimeout(() => {
      this.#renderTimer = undefined;
      this.#guard(() => this.#render());
    }, 16);
  }

  #render(): void {
    if (this.#closed) return;
    const waitingHere = this.#pending && this.#pending.threadId === this.#threadId;
    this.#ui.draw({
      focus: this.#focus,
      threads: threadLines(this.#threads, this.#threadId),
      input: this.#editor.render(this.#focus === "input"),
      inputText: this.#editor.text,
      transcript: this.#transcript.render(),
      status: statusLine({
        model: this.#model,
        thread: this.#threadId ? { id: this.#threadId, title: this.#threadTitle } : undefined,
        connection: this.#connection,
        activity: waitingHere ? "approval" : this.#runningHere() || this.#sending ? "thinking" : "ready",
        focus: this.#focus,
      }),
    });
  }
}

function isPrintable(ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg): boolean {
  if (!ch || key.ctrl || key.meta) return false;
  const code = ch.codePointAt(0)!;
  return code >= 0x20 && code !== 0x7f && !ch.startsWith("\x1b");
}
