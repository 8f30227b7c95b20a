import blessed from "blessed";

export type Focus = "input" | "transcript" | "threads";

/** What one frame shows; blessed tags are allowed in every text. */
export interface Frame {
  focus: Focus;
  /** Thread list items, already escaped. */
  threads: string[];
  /** The message being typed, with its cursor drawn; `inputText` is the raw text (for sizing). */
  input: string;
  inputText: string;
  transcript: string;
  status: string;
}

const THREADS_WIDTH = 28;
const INPUT_MAX_LINES = 8;

/**
 * The widgets and where they go: thread list on the left (on screens 80 columns wide or
 * more), the conversation above a message box that grows with its text, a status line at the
 * bottom, and a dialog for approvals. Scrolling of the conversation is kept here as a top
 * line: blessed's own loses its place when the content shrinks.
 */
export class Layout {
  readonly threadList: blessed.Widgets.ListElement;
  readonly #view: blessed.Widgets.BoxElement;
  readonly #inputBox: blessed.Widgets.BoxElement;
  readonly #statusBar: blessed.Widgets.BoxElement;
  readonly #dialog: blessed.Widgets.BoxElement;
  /** Follow the end of the conversation; `#top` is its first line shown otherwise. */
  #stick = true;
  #top = 0;

  constructor(readonly screen: blessed.Widgets.Screen) {
    const panel = { parent: screen, border: { type: "line" as const }, tags: true, style: { border: { fg: "gray" } } };
    this.threadList = blessed.list({
      ...panel,
      label: " threads ",
      top: 0,
      left: 0,
      width: THREADS_WIDTH,
      height: "100%-1",
      style: { border: { fg: "gray" }, selected: { inverse: true }, item: {} },
    });
    this.#view = blessed.box({ ...panel, label: " conversation ", top: 0, scrollable: true, scrollbar: { ch: " ", style: { inverse: true } }, wrap: true });
    this.#inputBox = blessed.box({ ...panel, label: " message ", wrap: true, scrollable: true });
    // a label sits on the border: keep it there when the box scrolls
    for (const box of [this.#view, this.#inputBox]) (box as unknown as { _label: { fixed: boolean } })._label.fixed = true;
    this.#statusBar = blessed.box({ parent: screen, bottom: 0, left: 0, height: 1, width: "100%", tags: true, style: { inverse: true } });
    this.#dialog = blessed.box({
      ...panel,
      label: " approval ",
      top: "center",
      left: "center",
      width: "60%",
      height: 8,
      hidden: true,
      style: { border: { fg: "yellow" } },
    });
  }

  get threadsShown(): boolean {
    return (this.screen.width as number) >= 80;
  }

  get selectedThread(): number {
    return (this.threadList as unknown as { selected?: number }).selected ?? 0;
  }

  draw(f: Frame): void {
    const width = this.screen.width as number;
    const height = this.screen.height as number;
    const left = this.threadsShown ? THREADS_WIDTH : 0;

    if (left) {
      const selected = this.selectedThread;
      this.threadList.setItems(f.threads as unknown as blessed.Widgets.BlessedElement[]);
      this.threadList.select(Math.min(selected, f.threads.length - 1));
      this.threadList.show();
    } else {
      this.threadList.hide();
    }

    // the message box grows with its text, up to INPUT_MAX_LINES, and shows its end
    const innerWidth = Math.max(1, width - left - 2);
    const lines = f.inputText.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil((l.length + 1) / innerWidth)), 0);
    const inputHeight = Math.min(INPUT_MAX_LINES, lines) + 2;
    Object.assign(this.#inputBox, { left, width: width - left, height: inputHeight, top: height - 1 - inputHeight });
    this.#inputBox.setContent(f.input);
    Object.assign(this.#inputBox, { childBase: Math.max(0, lineCount(this.#inputBox) - (inputHeight - 2)), childOffset: 0 });

    Object.assign(this.#view, { left, width: width - left, height: Math.max(3, height - 1 - inputHeight) });
    this.#view.setContent(f.transcript);
    this.#applyScroll();

    for (const [box, focus] of [
      [this.#inputBox, "input"],
      [this.#view, "transcript"],
      [this.threadList, "threads"],
    ] as const) {
      (box.style as { border: { fg: string } }).border.fg = f.focus === focus ? "cyan" : "gray";
    }
    this.#statusBar.setContent(f.status);
    this.screen.render();
  }

  /** Shows the approval dialog with this text, or hides it (null). */
  dialog(content: string | null): void {
    if (content === null) return void this.#dialog.hide();
    this.#dialog.setContent(content);
    this.#dialog.show();
    this.#dialog.setFront();
  }

  /** Follow the end of the conversation again (new content, a cleared view). */
  stickToEnd(): void {
    this.#stick = true;
  }

  get pageSize(): number {
    return Math.max(1, this.#innerHeight() - 1);
  }

  scroll(lines: number): void {
    this.#top = Math.max(0, Math.min(this.#maxTop(), this.#top + lines));
    this.#stick = this.#top >= this.#maxTop();
    this.#applyScroll();
    this.screen.render();
  }

  scrollTo(where: "top" | "bottom"): void {
    this.#top = where === "top" ? 0 : this.#maxTop();
    this.#stick = where === "bottom";
    this.#applyScroll();
    this.screen.render();
  }

  moveThreadSelection(step: number): void {
    if (step < 0) this.threadList.up(1);
    else this.threadList.down(1);
    this.screen.render();
  }

  #innerHeight(): number {
    return Math.max(1, (this.#view.height as number) - 2);
  }

  /** The last top line that still fills the view. */
  #maxTop(): number {
    return Math.max(0, lineCount(this.#view) - this.#innerHeight());
  }

  #applyScroll(): void {
    const max = this.#maxTop();
    if (this.#stick || this.#top > max) this.#top = max;
    Object.assign(this.#view, { childBase: this.#top, childOffset: 0 });
  }
}

/** Lines of a box's content after wrapping (blessed keeps them in `_clines`). */
function lineCount(box: blessed.Widgets.BoxElement): number {
  return (box as unknown as { _clines?: unknown[] })._clines?.length ?? 0;
}
