import { h } from "./dom";

export interface ComposerHost {
  /** The text to send (trimmed, not empty); `editing` when it replaces the last message. */
  submit(text: string, editing: boolean): void;
  stop(): void;
  /** Up in an empty box: the last message of the user, to edit (undefined: nothing to edit). */
  lastMessage(): string | undefined;
  /** Why nothing can be sent now (an approval waits), or null. */
  blocked(): string | null;
  /** Sending was refused because of `blocked()`: show the user where to look. */
  showBlocker(): void;
}

/**
 * The message box under the conversation: Enter sends, Shift+Enter adds a line, Esc stops
 * a running answer (or leaves editing), Up in an empty box edits the last message.
 */
export class Composer {
  readonly el: HTMLFormElement;
  readonly input = h("textarea", {
    rows: 1,
    placeholder: "Message the agent…",
    "aria-label": "Message",
    "aria-describedby": "composer-status",
    enterKeyHint: "send",
    dir: "auto",
    lang: "",
  });
  readonly #send = h("button", { type: "submit", class: "primary send", text: "Send" });
  readonly #stop = h("button", { type: "button", class: "danger stop", text: "Stop", hidden: true, "aria-keyshortcuts": "Escape", title: "Stop (Esc)" });
  readonly #status = h("p", { class: "composer-status", id: "composer-status", role: "status" });
  readonly #editing = h("div", { class: "editing", hidden: true }, h("span", { text: "Editing your last message. It is sent again in its place; the earlier one stays one arrow away." }));
  #isEditing = false;
  #running = false;
  #statusText = "";

  constructor(readonly host: ComposerHost) {
    const cancel = h("button", { type: "button", class: "ghost small-button", text: "Cancel", onclick: () => this.cancelEdit() });
    this.#editing.append(cancel);
    this.el = h(
      "form",
      { class: "composer", onsubmit: (e: Event) => (e.preventDefault(), this.#submit()) },
      this.#editing,
      h("div", { class: "composer-box" }, this.input, this.#send, this.#stop),
      this.#status,
    );
    this.input.addEventListener("keydown", (e) => this.#key(e));
    this.input.addEventListener("input", () => this.#grow());
    this.#stop.addEventListener("click", () => host.stop());
  }

  get editing(): boolean {
    return this.#isEditing;
  }

  focus(): void {
    this.input.focus();
  }

  /** Puts `text` in the box to edit and send in place of the last message. */
  edit(text: string): void {
    this.#isEditing = true;
    this.#editing.hidden = false;
    this.#send.textContent = "Send edit";
    this.input.value = text;
    this.#grow();
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  cancelEdit(): void {
    if (!this.#isEditing) return;
    this.#isEditing = false;
    this.#editing.hidden = true;
    this.#send.textContent = "Send";
    this.input.value = "";
    this.#grow();
    this.input.focus();
  }

  /** Whether an answer is running: Stop instead of Send. */
  setRunning(running: boolean): void {
    const stopHadFocus = document.activeElement === this.#stop;
    this.#running = running;
    this.#send.hidden = running;
    this.#stop.hidden = !running;
    if (!running) this.#stop.disabled = false;
    // Stop goes away under the focus: the focus goes back to the message box, not to the page
    if (!running && stopHadFocus) this.input.focus();
    this.#renderStatus();
  }

  stopping(): void {
    // Stop is disabled, then goes: the focus goes back to the message box at once, not to the page
    if (document.activeElement === this.#stop) this.input.focus();
    this.#stop.disabled = true;
    this.status("Stopping…");
  }

  /** A line under the box; "" clears it. */
  status(text: string): void {
    this.#statusText = text;
    this.#renderStatus();
  }

  #renderStatus(): void {
    const blocked = this.host.blocked();
    this.#send.setAttribute("aria-disabled", String(!!blocked));
    this.#status.textContent = this.#statusText || blocked || (this.#running ? "Working…" : "");
  }

  /** Shows a change of `blocked()`. */
  refresh(): void {
    this.#renderStatus();
  }

  #submit(): void {
    const text = this.input.value.trim();
    if (!text || this.#running) return;
    if (this.host.blocked()) return this.host.showBlocker();
    const editing = this.#isEditing;
    this.#isEditing = false;
    this.#editing.hidden = true;
    this.#send.textContent = "Send";
    this.input.value = "";
    this.#grow();
    this.host.submit(text, editing);
  }

  #key(e: KeyboardEvent): void {
    if (e.isComposing) return;
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      this.#submit();
    } else if (e.key === "Escape") {
      if (this.#isEditing) {
        e.preventDefault();
        e.stopPropagation();
        this.cancelEdit();
      }
    } else if (e.key === "ArrowUp" && !this.input.value && !this.#running) {
      const last = this.host.lastMessage();
      if (last === undefined) return;
      e.preventDefault();
      this.edit(last);
    }
  }

  #grow(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 240)}px`;
  }
}
