/**
 * Untrusted text as the model will read it. Invisible characters are removed outright, and the
 * untrusted-data wrappers' own tags are found however they are spelled: fullwidth or small
 * forms, with invisible characters inside, in capitals, with look-alike brackets, slashes or
 * letters. Finding works on a per-character skeleton (NFKC, lower case, look-alikes folded)
 * mapped back to the text, so only the tags are touched and the rest reads as it was written.
 */

/**
 * Unicode's default-ignorable code points: characters that render as nothing. Zero-width
 * spaces and joiners (U+200B–U+200F), bidi embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069) and the Arabic letter mark, word joiners and invisible operators
 * (U+2060–U+2064), the byte-order mark, the soft hyphen, variation selectors, Hangul fillers
 * and tag characters (U+E0000–U+E007F, which spell hidden ASCII).
 */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/** The text without characters a reader cannot see. */
export const stripInvisible = (text: string): string => text.replace(INVISIBLE, "");

/**
 * Characters NFKC leaves alone that a reader (or a model) takes for another: brackets and
 * slashes, and the Cyrillic, Greek and Armenian letters that look like Latin ones. Lower case
 * only: the skeleton is lower-cased before this map is read.
 */
const LOOKALIKES: Record<string, string> = Object.fromEntries(
  [
    ["<", "‹〈⟨❮❬❰⧼˂ᐸ«⦓⦑《"],
    ["/", "⁄∕⧸╱᜵⟋"],
    ["_", "‗ˍ"],
    ["a", "аα"],
    ["c", "сϲ"],
    ["d", "ԁ"],
    ["e", "еε"],
    ["i", "іιӏ"],
    ["k", "кκ"],
    ["n", "пոη"],
    ["o", "оοօσ"],
    ["p", "рρ"],
    ["r", "г"],
    ["s", "ѕ"],
    ["t", "тτ"],
    ["u", "υսμ"],
    ["x", "хχ"],
    ["y", "уγ"],
  ].flatMap(([to, from]) => [...from!].map((c) => [c, to!])),
);

/** One character of the skeleton: NFKC, lower case, look-alikes folded (cached: text repeats its characters). */
const folded = new Map<string, string>();
function fold(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x80) return code >= 0x41 && code <= 0x5a ? String.fromCharCode(code + 32) : ch;
  let out = folded.get(ch);
  if (out === undefined) {
    out = "";
    for (const c of ch.normalize("NFKC").toLowerCase()) out += LOOKALIKES[c] ?? c;
    if (folded.size < 65_536) folded.set(ch, out);
  }
  return out;
}

/**
 * The names of the wrappers untrusted text travels in (`<tool_output>`, `<tool_description>`),
 * opening or closing, in the skeleton: a bracket (`<`, and `[` or `{` that a reader may take
 * for one), an optional slash, then `tool` and the wrapper's second word with any separator.
 * `0`, `1`, `|` and a capital `I` pass for the letters they imitate.
 */
const TAG_IN_SKELETON = /[<[{][\s]{0,4}\/?[\s]{0,4}t[o0][o0][l1i|][\s_.\-]{0,3}(?:[o0]utput|descr[i1l|]pt[i1l|][o0]n)/g;

const ASCII = /^[\x00-\x7f]*$/;

/** Where wrapper tags start in `text`: the index (in `text`) of each tag's bracket. */
export function findWrapperTags(text: string): number[] {
  const starts: number[] = [];
  TAG_IN_SKELETON.lastIndex = 0;
  if (ASCII.test(text)) {
    const lower = text.toLowerCase();
    for (let m = TAG_IN_SKELETON.exec(lower); m; m = TAG_IN_SKELETON.exec(lower)) starts.push(m.index);
    return starts;
  }
  // the skeleton, and (once it no longer runs in step with the text) for each of its UTF-16
  // units the index of the character it came from
  const parts: string[] = [];
  let origin: number[] | undefined;
  let length = 0;
  for (let i = 0; i < text.length; ) {
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const f = fold(ch);
    parts.push(f);
    if (!origin && f.length !== ch.length) origin = Array.from({ length }, (_, k) => k);
    if (origin) for (let k = 0; k < f.length; k++) origin.push(i);
    length += f.length;
    i += ch.length;
  }
  const skeleton = parts.join("");
  for (let m = TAG_IN_SKELETON.exec(skeleton); m; m = TAG_IN_SKELETON.exec(skeleton)) starts.push(origin ? origin[m.index]! : m.index);
  return starts;
}

/**
 * The text with every wrapper tag's bracket escaped: `&lt;` for `<`, a numeric character
 * reference (`&#xFF1C;`) for a look-alike, so the tag no longer reads as one and
 * `unescapeWrapperTags` can give back exactly what was written.
 */
export function escapeWrapperTags(text: string): string {
  let out = "";
  let at = 0;
  for (const start of findWrapperTags(text)) {
    const bracket = String.fromCodePoint(text.codePointAt(start)!);
    out += text.slice(at, start) + (bracket === "<" ? "&lt;" : `&#x${bracket.codePointAt(0)!.toString(16).toUpperCase()};`);
    at = start + bracket.length;
  }
  return out + text.slice(at);
}

/** What `escapeWrapperTags` escaped, as it was: only escapes that stand before a wrapper tag are undone. */
export function unescapeWrapperTags(text: string): string {
  return text.replace(/&(?:lt|#x([0-9A-F]{1,6}));/g, (escaped, hex: string | undefined, offset: number) => {
    const code = hex ? Number.parseInt(hex, 16) : 0x3c;
    if (code > 0x10ffff) return escaped;
    const bracket = String.fromCodePoint(code);
    const rest = text.slice(offset + escaped.length, offset + escaped.length + 48);
    return findWrapperTags(bracket + rest)[0] === 0 ? bracket : escaped;
  });
}
