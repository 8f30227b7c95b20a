import type blessed from "blessed";
import { ChatClient } from "../client/http";
import { Editor } from "./editor";
import { Layout, type Focus } from "./layout";
import { redirectConsole } from "./log";
import { routinesNotice } from "./routines";
import { ChatSession } from "./session";
import { statusLine, threadLines } from "./status";
import { openTerminal, type Terminal } from "./terminal";
import { describeWidths, measureTerminal } from "./cells";
import { escapeTags, prettyJson, toolResult } from "./text";

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

/** The terminal: keys, focus and drawing, around a session with the service. */
class ChatApp {
  readonly done: Promise<void>;
  #resolveDone!: () => void;
  readonly #term: Terminal;
  readonly #ui: Layout;
  readonly #session: ChatSession;
  readonly #editor = new Editor();
  readonly #abort = new AbortController();
  #focus: Focus = "input";
  #renderTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(readonly opts: TuiOptions) {
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.#term = openTerminal({
      stdin: opts.stdin ?? process.stdin,
      stdout: opts.stdout ?? process.stdout,
      warn: opts.log,
      onLost: () => this.quit(),
    });
    const screen = this.#term.screen;
    this.#ui = new Layout(screen);
    this.#session = new ChatSession(new ChatClient({ baseUrl: opts.url, token: opts.token }), {
      layout: this.#ui,
      log: opts.log,
      changed: () => this.#schedule(),
      guard: (fn) => this.#guard(fn),
    });

    screen.on("keypress", (ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg) => this.#guard(() => this.#onKey(ch, key)));
    screen.on("resize", () => this.#render());
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, this.#onSignal);

    if (opts.banner?.length) this.#session.notice(opts.banner.join("\n"));
    // how wide this terminal draws emoji sequences, asked before the first frame (it answers in milliseconds, or not at all)
    void measureTerminal(screen.program).then((widths) => {
      opts.log(widths ? `terminal: draws ${describeWidths(widths)}` : "terminal: did not report its cursor; Unicode's emoji widths assumed");
      if (this.#closed) return;
      screen.realloc();
      this.#render();
    });
    this.#guard(() => this.#session.start(opts.threadId, this.#abort.signal));
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
      if (r instanceof Promise) r.catch((e) => this.#session.fail(e));
    } catch (e) {
      this.#session.fail(e);
    }
  }

  // ---- keys ----------------------------------------------------------------------------

  #onKey(ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg): void {
    if (key.full === "C-c") return this.quit();
    if (this.#ui.popupOpen === "viewer") return this.#viewerKey(key.full);
    if (this.#session.approval.open) {
      if (this.#scrollKey(key.full)) return;
      // Tab moves on from the prompt as from any element; Esc (decide later) goes back to the input
      if (key.full === "tab" || key.full === "S-tab") {
        this.#session.approval.show(false);
        return this.#setFocus(key.full === "tab" ? "transcript" : "input");
      }
      return this.#session.approval.dialogKey(ch, key.full);
    }
    switch (key.full) {
      case "C-l":
        return this.#clearView();
      case "tab":
        return this.#cycleFocus(1);
      case "S-tab":
        return this.#cycleFocus(-1);
      case "escape":
        if (!this.#session.stop() && this.#focus !== "input") this.#setFocus("input");
        return;
      case "pageup":
        return this.#ui.scroll(-this.#ui.pageSize);
      case "pagedown":
        return this.#ui.scroll(this.#ui.pageSize);
      case "up":
      case "down":
        if (this.#focus === "threads") return this.#ui.moveThreadSelection(key.full === "up" ? -1 : 1);
        if (this.#focus === "input" && this.#recall(key.full === "up" ? -1 : 1)) return this.#schedule();
        return this.#ui.scroll(key.full === "up" ? -1 : 1);
    }
    if (this.#focus === "threads") {
      if (key.full === "enter") this.#guard(() => this.#openSelectedThread());
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
      this.#guard(() => this.#submit());
      return;
    }
    // typed text is always text: approval keys act only in the approval prompt
    const printable = isPrintable(ch, key) ? ch : undefined;
    if (this.#editor.key(key.full, printable)) this.#schedule();
  }

  /** Tab order: the input, the approval prompt while one waits, the conversation, the thread list. */
  #cycleFocus(step: number): void {
    const order: (Focus | "approval")[] = ["input"];
    if (this.#session.approval.pending) order.push("approval");
    order.push("transcript");
    if (this.#ui.threadsShown) order.push("threads");
    const next = order[(order.indexOf(this.#focus) + step + order.length) % order.length]!;
    if (next === "approval") return this.#session.approval.show(true);
    this.#setFocus(next);
  }

  #setFocus(focus: Focus): void {
    this.#focus = focus;
    this.#schedule();
  }

  // ---- actions -------------------------------------------------------------------------

  async #submit(): Promise<void> {
    const text = this.#editor.text;
    if (!text.trim()) return;
    const command = /^\/(compact|retry|show|alt)(?:\s+(\d+))?\s*$/i.exec(text.trim());
    if (command) {
      this.#editor.clear();
      this.#remember(text.trim());
      return this.#command(command[1]!.toLowerCase(), command[2] === undefined ? undefined : Number(command[2]));
    }
    if (text.trim().toLowerCase() === "/routines") {
      this.#editor.clear();
      return this.#session.notice(await routinesNotice(this.#session.client));
    }
    if (!this.#session.canSend()) return;
    this.#remember(text);
    this.#editor.clear();
    this.#ui.stickToEnd();
    // give the text back to retry
    if (!(await this.#session.send(text)) && !this.#editor.text) this.#editor.insert(text);
    this.#schedule();
  }

  /** /compact, /retry (answer the last message again), /show N (a tool's whole result), /alt N (another alternative). */
  async #command(name: string, n: number | undefined): Promise<void> {
    if (name === "compact") return this.#session.compact();
    if (name === "retry") return this.#session.retry();
    if (name === "alt") return n === undefined ? this.#session.notice("/alt N shows alternative N of your last message.") : this.#session.alternative(n);
    const tool = n === undefined ? undefined : this.#session.transcript.tool(n);
    if (!tool) return this.#session.notice(`/show N opens tool call N of this conversation whole${n === undefined ? "" : `: there is no ${n}`}.`);
    const output = tool.output === null ? "(still running)" : toolResult(tool.output);
    this.#ui.viewer(`{bold}Arguments{/bold}\n${escapeTags(prettyJson(tool.arguments))}\n\n{bold}Result{/bold}\n${escapeTags(output)}`, ` ${n}. ${tool.name}: Up/Down PgUp/PgDn scroll · Esc close `);
    this.#schedule();
  }

  /** Keys while a tool's result is open to read. */
  #viewerKey(full: string): void {
    if (full === "escape" || full === "q" || full === "enter") {
      this.#ui.viewer(null);
      return this.#schedule();
    }
    this.#scrollKey(full);
  }

  /** Up/Down, PgUp/PgDn, Home/End in the open dialog or viewer; false for any other key. */
  #scrollKey(full: string): boolean {
    const page = Math.max(1, (this.#ui.screen.height as number) - 6);
    const step: Record<string, number | "top" | "bottom"> = { up: -1, down: 1, pageup: -page, pagedown: page, home: "top", end: "bottom" };
    if (!(full in step)) return false;
    this.#ui.scrollPopup(step[full]!);
    return true;
  }

  /** The prompts sent from here, oldest first, and where Up/Down is in them (length: not recalling). */
  #sent: string[] = [];
  #recalled = 0;

  #remember(text: string): void {
    if (this.#sent.at(-1) !== text) this.#sent.push(text);
    this.#recalled = this.#sent.length;
  }

  /**
   * Up in an empty message line brings back the last prompt, and Up/Down go on through the
   * earlier ones while the line holds one unchanged; false when the key is not for that.
   */
  #recall(step: -1 | 1): boolean {
    const recalling = this.#recalled < this.#sent.length && this.#editor.text === this.#sent[this.#recalled];
    if (!recalling && (this.#editor.text !== "" || step === 1)) return false;
    const at = Math.max(0, Math.min(this.#sent.length, (recalling ? this.#recalled : this.#sent.length) + step));
    if (!this.#sent.length) return false;
    this.#recalled = at;
    this.#editor.clear();
    if (at < this.#sent.length) this.#editor.insert(this.#sent[at]!);
    return true;
  }

  #clearView(): void {
    this.#session.clear();
    this.#ui.stickToEnd();
    this.#ui.screen.realloc();
    this.#render();
  }

  async #openSelectedThread(): Promise<void> {
    const index = this.#ui.selectedThread;
    this.#ui.stickToEnd();
    await this.#session.open(index === 0 ? null : (this.#session.threads[index - 1]?.id ?? null));
    this.#setFocus("input");
  }

  // ---- drawing -------------------------------------------------------------------------

  #schedule(): void {
    if (this.#renderTimer || this.#closed) return;
    this.#renderTimer = setTimeout(() => {
      this.#renderTimer = undefined;
      this.#guard(() => this.#render());
    }, 16);
  }

  #render(): void {
    if (this.#closed) return;
    const s = this.#session;
    this.#ui.draw({
      focus: this.#focus,
      threads: threadLines(s.threads, s.threadId ?? undefined),
      input: this.#editor.render(this.#focus === "input"),
      inputText: this.#editor.text,
      transcript: s.transcript.render(),
      title: s.threadId ? s.title || "conversation" : "new conversation",
      status: statusLine({
        width: this.#ui.screen.width as number,
        model: s.model,
        connection: s.connection,
        activity: s.activity,
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
