import { escapeTags } from "./text";

/** The message being typed: text and a cursor, edited key by key. */
export class Editor {
  text = "";
  cursor = 0;

  /**
   * Applies an editing key (blessed's `key.full`), or types `printable`; false when the key
   * is not an editing key. Enter (send) is the caller's; a line feed is Shift+Enter,
   * Alt+Enter, Ctrl+J or a line break in a paste.
   */
  key(full: string, printable?: string): boolean {
    switch (full) {
      case "return": // the second half of Enter, which the caller handles
        return false;
      case "linefeed":
        this.insert("\n");
        return true;
      case "backspace":
        this.backspace();
        return true;
      case "delete":
      case "C-d":
        this.deleteForward();
        return true;
      case "left":
        this.left();
        return true;
      case "right":
        this.right();
        return true;
      case "home":
      case "C-a":
        this.home();
        return true;
      case "end":
      case "C-e":
        this.end();
        return true;
      case "C-u":
        this.clear();
        return true;
      case "C-w":
        this.deleteWord();
        return true;
      default:
        if (printable === undefined) return false;
        this.insert(printable);
        return true;
    }
  }

  insert(s: string): void {
    this.text = this.text.slice(0, this.cursor) + s + this.text.slice(this.cursor);
    this.cursor += s.length;
  }
  /** Backspace and Delete, Left and Right go a whole grapheme cluster at a time (👩🏽‍💻, षि, é). */
  backspace(): void {
    if (!this.cursor) return;
    const from = clusterBefore(this.text, this.cursor);
    this.text = this.text.slice(0, from) + this.text.slice(this.cursor);
    this.cursor = from;
  }
  deleteForward(): void {
    if (this.cursor >= this.text.length) return;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(clusterAfter(this.text, this.cursor));
  }
  deleteWord(): void {
    const before = this.text.slice(0, this.cursor).replace(/\S*\s*$/, "");
    this.text = before + this.text.slice(this.cursor);
    this.cursor = before.length;
  }
  left(): void {
    if (this.cursor) this.cursor = clusterBefore(this.text, this.cursor);
  }
  right(): void {
    if (this.cursor < this.text.length) this.cursor = clusterAfter(this.text, this.cursor);
  }
  /** Start of the current line. */
  home(): void {
    this.cursor = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
  }
  /** End of the current line. */
  end(): void {
    const nl = this.text.indexOf("\n", this.cursor);
    this.cursor = nl < 0 ? this.text.length : nl;
  }
  clear(): void {
    this.text = "";
    this.cursor = 0;
  }
  /** Empties the editor and returns what it held. */
  take(): string {
    const t = this.text;
    this.clear();
    return t;
  }
  get lineCount(): number {
    return this.text.split("\n").length;
  }

  /** Blessed-tagged text with the cursor drawn as an inverse cell. */
  render(showCursor: boolean): string {
    if (!showCursor) return escapeTags(this.text);
    const at = this.text.slice(this.cursor);
    const ch = at.slice(0, clusterAfter(this.text, this.cursor) - this.cursor);
    const cell = !ch || ch === "\n" ? " " : ch;
    const rest = ch === "\n" ? at : at.slice(ch.length);
    return `${escapeTags(this.text.slice(0, this.cursor))}{inverse}${escapeTags(cell)}{/inverse}${escapeTags(rest)}`;
  }
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Where the grapheme cluster before `i` starts. */
function clusterBefore(text: string, i: number): number {
  let start = 0;
  for (const { index } of segmenter.segment(text)) {
    if (index >= i) break;
    start = index;
  }
  return start;
}

/** Where the grapheme cluster at `i` ends. */
function clusterAfter(text: string, i: number): number {
  const s = segmenter.segment(text).containing(i);
  return s ? s.index + s.segment.length : text.length;
}
