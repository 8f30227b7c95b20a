/**
 * Rewrites raw terminal input before blessed sees it. blessed parses neither the CSI-u form
 * (`ESC[13;2u`) nor xterm's modifyOtherKeys form (`ESC[27;2;13~`) of a modified key, and a
 * terminal that honours modifyOtherKeys may send those forms for other keys too (Ctrl+C as
 * `ESC[27;5;99~`). Each such sequence becomes the legacy bytes blessed understands, and every
 * "insert a newline" key (Shift+Enter, Ctrl+Enter, Alt+Enter, Ctrl+J, a line break inside a
 * bracketed paste) becomes a bare LF, which the TUI treats as "new line"; Enter stays CR.
 */

/** Ask the terminal for modified keys (modifyOtherKeys 2) and bracketed paste. */
export const ENABLE_KEYS = "\x1b[>4;2m\x1b[?2004h";
/** Undo ENABLE_KEYS on exit. */
export const RESET_KEYS = "\x1b[>4;0m\x1b[?2004l";

export const NEWLINE = "\n";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
// CSI 27 ; mod ; code ~   |   CSI code ; mod u   |   CSI code u
const MODIFIED_KEY = /\x1b\[27;(\d+);(\d+)~|\x1b\[(\d+)(?:;(\d+))?u/g;
const INCOMPLETE_TAIL = /\x1b(?:\[[\d;]*)?$/;

/** The legacy bytes for one modified key; `mod` is the xterm modifier parameter (1 + bits). */
export function legacyKey(code: number, mod: number): string {
  const bits = Math.max(0, mod - 1);
  const shift = (bits & 1) !== 0;
  const alt = (bits & 2) !== 0;
  const ctrl = (bits & 4) !== 0;
  const meta = (s: string) => (alt ? `\x1b${s}` : s);
  switch (code) {
    case 13:
      return shift || ctrl || alt ? NEWLINE : "\r";
    case 9:
      return shift ? "\x1b[Z" : meta("\t");
    case 27:
      return "\x1b";
    case 8:
    case 127:
      return meta("\x7f");
  }
  if (ctrl) {
    if (code === 32 || code === 64) return meta("\x00");
    const upper = code >= 97 && code <= 122 ? code - 32 : code;
    if (upper >= 64 && upper <= 95) return meta(String.fromCharCode(upper & 0x1f));
  }
  let ch = String.fromCodePoint(code);
  if (shift && code >= 97 && code <= 122) ch = ch.toUpperCase();
  return meta(ch);
}

/** Stateful translator: feed it each chunk read from the terminal, in order. */
export class InputTranslator {
  #pending = "";
  #inPaste = false;

  /** Returns what to pass on now; an incomplete escape sequence at the end is held back. */
  push(chunk: string): string {
    let s = this.#pending + chunk;
    this.#pending = "";
    const tail = INCOMPLETE_TAIL.exec(s);
    // a lone ESC is the Esc key: pass it on at once; only hold "ESC[" with digits
    if (tail && tail[0].length > 1) {
      this.#pending = tail[0];
      s = s.slice(0, tail.index);
    }
    return this.#translate(s);
  }

  /** Passes on whatever was held back (call it when no more input arrives shortly). */
  flush(): string {
    const s = this.#pending;
    this.#pending = "";
    return s;
  }

  get holding(): boolean {
    return this.#pending.length > 0;
  }

  #translate(s: string): string {
    let out = "";
    while (s) {
      if (this.#inPaste) {
        const end = s.indexOf(PASTE_END);
        const body = end < 0 ? s : s.slice(0, end);
        out += body.replace(/\r\n?|\n/g, NEWLINE).replace(/\t/g, "    ").replace(/\x1b/g, "");
        if (end < 0) return out;
        this.#inPaste = false;
        s = s.slice(end + PASTE_END.length);
        continue;
      }
      const start = s.indexOf(PASTE_START);
      const plain = start < 0 ? s : s.slice(0, start);
      out += plain
        .replace(MODIFIED_KEY, (_m, mod1, code1, code2, mod2) =>
          code1 !== undefined ? legacyKey(Number(code1), Number(mod1)) : legacyKey(Number(code2), Number(mod2 ?? 1)),
        )
        .replace(/\x1b\r/g, NEWLINE); // Alt+Enter
      if (start < 0) return out;
      this.#inPaste = true;
      s = s.slice(start + PASTE_START.length);
    }
    return out;
  }
}
