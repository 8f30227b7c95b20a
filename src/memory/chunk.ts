/** Target chunk length in characters. */
export const CHUNK_CHARS = 800;
/** How much of a chunk is repeated at the start of the next when a paragraph is split. */
export const OVERLAP_CHARS = 100;

interface Piece {
  text: string;
  /** True when the piece starts a paragraph (false: it continues the one before). */
  starts: boolean;
}

/**
 * Splits a document into search chunks of at most `size` characters. Paragraphs (blank-line
 * separated) are packed together while they fit; a longer paragraph is cut at sentence, then
 * word boundaries, and each of its continuation chunks starts with the last ~`overlap`
 * characters of the chunk before, so a phrase on a boundary is still found.
 */
export function chunkText(text: string, size = CHUNK_CHARS, overlap = OVERLAP_CHARS): string[] {
  const pieceMax = Math.max(1, size - overlap - 1);
  const pieces: Piece[] = [];
  for (const raw of text.replace(/\r\n?/g, "\n").split(/\n[ \t]*\n/)) {
    const paragraph = raw.trim();
    if (!paragraph) continue;
    if (paragraph.length <= size) {
      pieces.push({ text: paragraph, starts: true });
      continue;
    }
    for (const [i, p] of splitLong(paragraph, pieceMax).entries()) pieces.push({ text: p, starts: i === 0 });
  }

  const chunks: string[] = [];
  let current = "";
  for (const piece of pieces) {
    const sep = piece.starts ? "\n\n" : " ";
    if (current && current.length + sep.length + piece.text.length <= size) {
      current += sep + piece.text;
      continue;
    }
    if (current) chunks.push(current);
    current = !piece.starts && current && overlap > 0 ? `${tail(current, overlap)} ${piece.text}` : piece.text;
  }
  if (current) chunks.push(current);
  return chunks;
}

/** Cuts a long paragraph into pieces of at most `max` characters: sentences, else words, else characters. */
function splitLong(paragraph: string, max: number): string[] {
  const out: string[] = [];
  let current = "";
  const push = (unit: string) => {
    if (!current) current = unit;
    else if (current.length + 1 + unit.length <= max) current += " " + unit;
    else {
      out.push(current);
      current = unit;
    }
  };
  for (const sentence of paragraph.split(/(?<=[.!?;:])\s+|\n+/)) {
    if (!sentence) continue;
    if (sentence.length <= max) {
      push(sentence);
      continue;
    }
    for (const word of sentence.split(/\s+/)) {
      if (!word) continue;
      if (word.length <= max) push(word);
      else for (const part of hardCut(word, max)) push(part);
    }
  }
  if (current) out.push(current);
  return out;
}

/** Cuts at code point boundaries, never inside a surrogate pair. */
function hardCut(word: string, max: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const ch of word) {
    if (current.length + ch.length > max) {
      out.push(current);
      current = "";
    }
    current += ch;
  }
  if (current) out.push(current);
  return out;
}

/** The end of `text`, at most `n` characters, starting at a word boundary when there is one. */
function tail(text: string, n: number): string {
  if (text.length <= n) return text;
  const cut = text.slice(-n);
  const space = cut.search(/\s/);
  return (space >= 0 && space < cut.length - 1 ? cut.slice(space + 1) : cut).trim();
}
