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
  backspace(): void {
    if (!this.cursor) return;
    const step = charBefore(this.text, this.cursor).length;
    this.text = this.text.slice(0, this.cursor - step) + this.text.slice(this.cursor);
    this.cursor -= step;
  }
  deleteForward(): void {
    if (this.cursor >= this.text.length) return;
    const step = String.fromCodePoint(this.text.codePointAt(this.cursor)!).length;
    this.text = this.text.slice(0, this.cursor) + this.text.slice(this.cursor + step);
  }
  deleteWord(): void {
    const before = this.text.slice(0, this.cursor).replace(/\S*\s*$/, "");
    this.text = before + this.text.slice(this.cursor);
    this.cursor = before.length;
  }
  left(): void {
    if (this.cursor) this.cursor -= charBefore(this.text, this.cursor).length;
  }
  right(): void {
    if (this.cursor < this.text.length) this.cursor += String.fromCodePoint(this.text.codePointAt(this.cursor)!).length;
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
    const ch = at ? String.fromCodePoint(at.codePointAt(0)!) : "";
    const cell = !ch || ch === "\n" ? " " : ch;
    const rest = ch === "\n" ? at : at.slice(ch.length);
    return `${escapeTags(this.text.slice(0, this.cursor))}{inverse}${escapeTags(cell)}{/inverse}${escapeTags(rest)}`;
  }
}

function charBefore(s: string, i: number): string {
  const lo = s.charCodeAt(i - 1);
  return lo >= 0xdc00 && lo <= 0xdfff && i >= 2 ? s.slice(i - 2, i) : s.slice(i - 1, i);
}
