// Text for blessed, cell by cell. blessed measures text one code point at a time with its own
// tables, so an emoji ZWJ sequence (👨‍👩‍👧‍👦), a skin tone (👩🏽‍💻) or a Devanagari vowel sign
// take the wrong number of cells and push borders out of place. Here text is cut into
// grapheme clusters (Intl.Segmenter) and measured with string-width (East Asian width and
// emoji); a cluster blessed would mismeasure is handed to it as one private-use character of
// the right width, and turned back into the cluster on its way to the terminal.
import stringWidth from "string-width";

interface BlessedUnicode {
  charWidth(str: string | number, i?: number): number;
  strWidth(str: string): number;
  codePointAt(str: string, i: number): number;
  chars: { all: RegExp };
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Placeholders: U+E000–U+E7FF stand for clusters two cells wide, U+E800–U+F8FF for one cell. */
const WIDE = [0xe000, 0xe800] as const;
const NARROW = [0xe800, 0xf900] as const;
const PLACEHOLDERS = /[\ue000-\uf8ff]/g;
const IS_PLACEHOLDER = /[\ue000-\uf8ff]/;

/**
 * How the terminal draws the sequences terminals disagree on. The defaults are Unicode's
 * answer (what string-width says); `measureTerminal` asks the terminal itself.
 */
export interface TerminalWidths {
  /** An emoji ZWJ sequence (👨‍👩‍👧‍👦) takes two cells, not one pair per emoji. */
  zwjJoins: boolean;
  /** An emoji with a skin tone (👍🏽) takes two cells, not four. */
  modifierJoins: boolean;
  /** A text symbol made emoji by VS16 (☀️) takes two cells, not one. */
  vs16Wide: boolean;
}

const UNICODE_WIDTHS: TerminalWidths = { zwjJoins: true, modifierJoins: true, vs16Wide: true };
let terminal: TerminalWidths = UNICODE_WIDTHS;

const SKIN_TONE_START = /(?=[\u{1F3FB}-\u{1F3FF}])/u;

/**
 * A cluster in the pieces this terminal draws separately: after each ZWJ when it does not
 * join ZWJ sequences, before each skin tone when it draws skin tones apart. Each piece is at
 * most two cells wide.
 */
function drawnParts(g: string): string[] {
  let parts = [g];
  if (!terminal.zwjJoins) parts = parts.flatMap((p) => p.split(/(?<=\u200d)/));
  if (!terminal.modifierJoins) parts = parts.flatMap((p) => p.split(SKIN_TONE_START));
  return parts.filter(Boolean);
}

function partWidth(p: string): number {
  // a skin tone drawn apart is an emoji of its own, which a ZWJ joins to what follows (🏽‍💻 is two cells)
  const part = p.replace(/^[\u{1F3FB}-\u{1F3FF}]/u, "\u{1F464}");
  return !terminal.vs16Wide && part.includes("\ufe0f") ? stringWidth(part.replace(/\ufe0f/g, "")) : stringWidth(part);
}

/**
 * A piece at most two cells wide: a cluster wider than that (a Devanagari conjunct such as
 * न्दी is three) is handed over a spacing character at a time, each with the marks after
 * it; the terminal joins them again as it draws them.
 */
function cellSized(part: string): string[] {
  if (partWidth(part) <= 2) return [part];
  const chunks: string[] = [];
  for (const ch of part) {
    if (chunks.length && stringWidth(ch) === 0) chunks[chunks.length - 1] += ch;
    else chunks.push(ch);
  }
  return chunks;
}

/** The cells a grapheme cluster takes on this terminal. */
export function clusterWidth(g: string): number {
  return drawnParts(g).reduce((n, p) => n + partWidth(p), 0);
}

/** The cells `text` takes, cluster by cluster. */
export function textWidth(text: string): number {
  let n = 0;
  for (const { segment } of segmenter.segment(text)) n += clusterWidth(segment);
  return n;
}

/** `text` cut to at most `max` cells (whole clusters), with … when it was cut. */
export function fitWidth(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  let out = "";
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = clusterWidth(segment);
    if (used + w > max - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** The grapheme clusters of `text`. */
export const clusters = (text: string): string[] => Array.from(segmenter.segment(text), (s) => s.segment);

const toCell = new Map<string, string>();
const fromCell = new Map<string, string>();
const next = { wide: WIDE[0] as number, narrow: NARROW[0] as number };
let unicode: BlessedUnicode | undefined;
let blessedCharWidth: BlessedUnicode["charWidth"] | undefined;

function placeholder(cluster: string, width: 1 | 2): string | undefined {
  const key = `${width}${cluster}`;
  const known = toCell.get(key);
  if (known) return known;
  const range = width === 2 ? WIDE : NARROW;
  const kind = width === 2 ? "wide" : "narrow";
  if (next[kind] >= range[1]) return undefined; // thousands of distinct clusters: left as they are
  const cell = String.fromCharCode(next[kind]++);
  toCell.set(key, cell);
  fromCell.set(cell, cluster);
  return cell;
}

/** `text` as blessed can lay it out: each cluster it would mismeasure as one placeholder of the right width. */
export function forBlessed(text: string): string {
  if (!unicode || !/[^\x00-\x7e]/.test(text)) return text;
  let out = "";
  for (const { segment } of segmenter.segment(text)) {
    if (!/[^\x00-\x7e]/.test(segment)) {
      out += segment;
      continue;
    }
    const single = segment.length === 1 || (segment.length === 2 && segment.codePointAt(0)! > 0xffff);
    if (single && partWidth(segment) === blessedCharWidth!(segment, 0) && !IS_PLACEHOLDER.test(segment)) {
      out += segment;
      continue;
    }
    for (const part of drawnParts(segment).flatMap(cellSized)) {
      const width = partWidth(part);
      if (width === 0) continue; // nothing to show (a lone joiner, a stray mark)
      out += placeholder(part, width >= 2 ? 2 : 1) ?? part;
    }
  }
  return out;
}

/** Placeholders back into the clusters they stand for, in what goes to the terminal. */
export const fromBlessed = (text: string): string => (fromCell.size ? text.replace(PLACEHOLDERS, (c) => fromCell.get(c) ?? c) : text);

/**
 * Teaches blessed the placeholders' widths (its width tables are module state) and puts the
 * clusters back into what the screen writes. Once per screen.
 */
export function useCells(blessedUnicode: unknown, program: object): void {
  if (!unicode) {
    unicode = blessedUnicode as BlessedUnicode;
    const original = unicode.charWidth;
    blessedCharWidth = original;
    unicode.charWidth = (str, i) => {
      const point = typeof str === "number" ? str : unicode!.codePointAt(str, i ?? 0);
      if (point >= WIDE[0] && point < WIDE[1]) return 2;
      if (point >= NARROW[0] && point < NARROW[1]) return 1;
      return original(str, i);
    };
    // blessed follows each wide character with a blank cell that the next one must not take
    unicode.chars.all = new RegExp(`(${unicode.chars.all.source.slice(1, -1)}|[\\ue000-\\ue7ff])`, "g");
  }
  const p = program as unknown as { _owrite(text: string): unknown };
  const write = p._owrite.bind(program);
  p._owrite = (text: string) => write(fromBlessed(text));
}

/**
 * Asks the terminal how wide it draws the sequences terminals disagree on (a cursor position
 * report after each), and uses its answer from then on. Resolves undefined when it did not
 * answer (then Unicode's widths stay). Call before the first frame: it writes at 1,1.
 */
export async function measureTerminal(program: object): Promise<TerminalWidths | undefined> {
  const p = program as unknown as { _write(s: string): void; getCursor(cb: (err: unknown, data: { status?: { x: number } }) => void): void };
  const probe = (text: string) =>
    new Promise<number | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 500);
      p._write(`\x1b[1;1H${text}`);
      p.getCursor((err, data) => {
        clearTimeout(timer);
        resolve(err || !data?.status ? undefined : data.status.x - 1);
      });
    });
  const zwj = await probe("👨‍👩‍👧");
  if (zwj === undefined) return undefined;
  const tone = await probe("👍🏽");
  const vs16 = await probe("☀️");
  terminal = { zwjJoins: zwj <= 2, modifierJoins: tone === undefined || tone <= 2, vs16Wide: vs16 === undefined || vs16 >= 2 };
  return terminal;
}

/** "emoji ZWJ sequences joined, skin tones apart, ☀️ narrow", for the log. */
export const describeWidths = (w: TerminalWidths) =>
  `emoji ZWJ sequences ${w.zwjJoins ? "joined" : "apart"}, skin tones ${w.modifierJoins ? "joined" : "apart"}, VS16 emoji ${w.vs16Wide ? "wide" : "narrow"}`;

/** Back to Unicode's widths (tests). */
export function resetTerminalWidths(widths: TerminalWidths = UNICODE_WIDTHS): void {
  terminal = widths;
}
