import blessed from "blessed";
import { fitWidth, forBlessed, textWidth } from "./cells";

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
  /** The conversation's title, on the conversation box's border. */
  title: string;
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
  readonly #viewer: blessed.Widgets.BoxElement;
  #focus: Focus = "input";
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
    for (const box of [this.#view, this.#inputBox]) fixLabel(box);
    this.#statusBar = blessed.box({ parent: screen, bottom: 0, left: 0, height: 1, width: "100%", tags: true, style: { inverse: true } });
    this.#dialog = blessed.box({
      ...panel,
      label: " approval ",
      top: "center",
      left: "center",
      width: "70%",
      height: 8,
      hidden: true,
      scrollable: true,
      wrap: true,
      style: { border: { fg: "yellow" } },
    });
    this.#viewer = blessed.box({ ...panel, top: 1, left: 2, width: "100%-4", height: "100%-3", hidden: true, scrollable: true, wrap: true, style: { border: { fg: "cyan" } } });
    fixLabel(this.#dialog);
    // the terminal's own cursor follows the message box's, for magnifiers and braille displays
    screen.on("render", () => this.#placeCursor());
  }

  /** Where the real cursor goes after each frame: the message box's cursor when it has the focus. */
  #cursorShown = false;

  #placeCursor(): void {
    const program = this.screen.program;
    const at = this.#focus === "input" && this.#dialog.hidden && this.#viewer.hidden ? inverseCell(this.screen, this.#inputBox) : undefined;
    if (at) {
      program.cup(at.y, at.x);
      if (!this.#cursorShown) program.showCursor();
      this.#cursorShown = true;
    } else if (this.#cursorShown) {
      program.hideCursor();
      this.#cursorShown = false;
    }
  }

  get threadsShown(): boolean {
    return (this.screen.width as number) >= 80;
  }

  get selectedThread(): number {
    return (this.threadList as unknown as { selected?: number }).selected ?? 0;
  }

  draw(f: Frame): void {
    this.#focus = f.focus;
    const width = this.screen.width as number;
    const height = this.screen.height as number;
    const left = this.threadsShown ? THREADS_WIDTH : 0;

    if (left) {
      const selected = this.selectedThread;
      this.threadList.setItems(f.threads.map(forBlessed) as unknown as blessed.Widgets.BlessedElement[]);
      this.threadList.select(Math.min(selected, f.threads.length - 1));
      this.threadList.show();
    } else {
      this.threadList.hide();
    }

    // the message box grows with its text, up to INPUT_MAX_LINES, and shows its end
    const innerWidth = Math.max(1, width - left - 2);
    const lines = f.inputText.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil((textWidth(l) + 1) / innerWidth)), 0);
    const inputHeight = Math.min(INPUT_MAX_LINES, lines) + 2;
    Object.assign(this.#inputBox, { left, width: width - left, height: inputHeight, top: height - 1 - inputHeight });
    this.#inputBox.setContent(forBlessed(f.input));
    Object.assign(this.#inputBox, { childBase: Math.max(0, lineCount(this.#inputBox) - (inputHeight - 2)), childOffset: 0 });

    Object.assign(this.#view, { left, width: width - left, height: Math.max(3, height - 1 - inputHeight) });
    this.#view.setLabel(forBlessed(` ${fitWidth(f.title, Math.max(8, width - left - 6))} `));
    fixLabel(this.#view);
    this.#view.setContent(forBlessed(f.transcript));
    this.#applyScroll();

    for (const [box, focus] of [
      [this.#inputBox, "input"],
      [this.#view, "transcript"],
      [this.threadList, "threads"],
    ] as const) {
      (box.style as { border: { fg: string } }).border.fg = f.focus === focus ? "cyan" : "gray";
    }
    this.#statusBar.setContent(forBlessed(f.status));
    this.screen.render();
  }

  /** Shows the approval dialog with this text (as tall as it needs, scrollable beyond), or hides it (null). */
  dialog(content: string | null): void {
    this.#popup(this.#dialog, content, { fit: true });
  }

  /** Shows a long text to read whole (a tool's result) with this label, or hides it (null). */
  viewer(content: string | null, label = ""): void {
    this.#popup(this.#viewer, content, { label });
  }

  get popupOpen(): "dialog" | "viewer" | null {
    return !this.#dialog.hidden ? "dialog" : !this.#viewer.hidden ? "viewer" : null;
  }

  /** Scrolls the open dialog or viewer. */
  scrollPopup(lines: number | "top" | "bottom"): void {
    const box = this.#viewer.hidden ? this.#dialog : this.#viewer;
    if (lines === "top") box.setScroll(0);
    else if (lines === "bottom") box.setScrollPerc(100);
    else box.scroll(lines);
    this.screen.render();
  }

  #popup(box: blessed.Widgets.BoxElement, content: string | null, o: { fit?: boolean; label?: string }): void {
    if (content === null) {
      if (box.hidden) return;
      box.hide();
      // what the box covered is drawn again whole: no border glyph is left inside the text
      this.screen.realloc();
      this.screen.render();
      return;
    }
    if (o.label !== undefined) {
      box.setLabel(forBlessed(o.label));
      fixLabel(box);
    }
    box.setContent(forBlessed(content));
    if (o.fit) {
      const width = Math.max(20, Math.floor((this.screen.width as number) * 0.7) - 2);
      const lines = content.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil(textWidth(l.replace(/\{[^{}]*\}/g, "")) / width)), 0);
      box.height = Math.min(lines + 2, Math.max(5, (this.screen.height as number) - 4));
    }
    box.setScroll(0);
    box.show();
    box.setFront();
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

/** The screen cell of the message box's cursor (drawn inverse), if it is on screen. */
function inverseCell(screen: blessed.Widgets.Screen, box: blessed.Widgets.BoxElement): { x: number; y: number } | undefined {
  const b = box as unknown as { aleft: number; atop: number; width: number; height: number };
  const lines = (screen as unknown as { lines: [number, string][][] }).lines;
  for (let y = b.atop + 1; y < b.atop + b.height - 1; y++) {
    for (let x = b.aleft + 1; x < b.aleft + b.width - 1; x++) {
      const cell = lines[y]?.[x];
      if (cell && ((cell[0] >> 18) & 8) !== 0) return { x, y };
    }
  }
  return undefined;
}

/** A label sits on the border: it stays there when the box scrolls. */
function fixLabel(box: blessed.Widgets.BoxElement): void {
  const label = (box as unknown as { _label?: { fixed: boolean } })._label;
  if (label) label.fixed = true;
}
