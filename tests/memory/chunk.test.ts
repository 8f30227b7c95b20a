// Chunking: paragraph-ish pieces of at most ~800 characters, overlapping only where a
// paragraph had to be cut, never losing or reordering text.
import { describe, expect, test } from "bun:test";
import { chunkText, CHUNK_CHARS, OVERLAP_CHARS } from "../../src/memory/chunk";

const words = (s: string) => s.split(/\s+/).filter(Boolean);
/** A paragraph of `n` numbered words ("w0 w1 ..."), so order and loss are easy to check. */
const numbered = (n: number, prefix = "w") => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");

describe("chunkText", () => {
  test("empty and blank text has no chunks", () => {
    expect(chunkText("")).toEqual([]);
    expect(chunkText("  \n\n \t\n")).toEqual([]);
  });

  test("a short document is one chunk, trimmed", () => {
    expect(chunkText("\n  Tomatoes need water.  \n")).toEqual(["Tomatoes need water."]);
  });

  test("paragraphs are packed together while they fit, separated by a blank line", () => {
    const paragraphs = Array.from({ length: 6 }, (_, i) => `Paragraph ${i}. ` + "x".repeat(280));
    const chunks = chunkText(paragraphs.join("\n\n"));
    expect(chunks).toEqual([
      `${paragraphs[0]}\n\n${paragraphs[1]}`,
      `${paragraphs[2]}\n\n${paragraphs[3]}`,
      `${paragraphs[4]}\n\n${paragraphs[5]}`,
    ]);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(CHUNK_CHARS);
  });

  test("a paragraph is never cut when it fits in a chunk of its own", () => {
    const a = "a".repeat(500);
    const b = "Second paragraph " + "b ".repeat(300);
    const chunks = chunkText(`${a}\n\n${b}`);
    expect(chunks[0]).toBe(a);
    expect(chunks[1]).toBe(b.trim());
  });

  test("Windows line ends and blank lines with spaces separate paragraphs too", () => {
    expect(chunkText("one\r\n\r\ntwo\n   \nthree")).toEqual(["one\n\ntwo\n\nthree"]);
  });

  test("a long paragraph is cut at sentence boundaries, with overlap, losing nothing", () => {
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} says something about the garden.`);
    const text = sentences.join(" ");
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(CHUNK_CHARS);
    // every sentence is whole in some chunk
    for (const s of sentences) expect(chunks.some((c) => c.includes(s))).toBe(true);
    // each continuation starts with the end of the chunk before (the overlap), then new text
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1]!;
      const overlap = [...Array(OVERLAP_CHARS + 1).keys()].reverse().find((k) => k > 0 && chunks[i]!.startsWith(prev.slice(-k) + " "));
      expect(overlap).toBeGreaterThan(20);
    }
  });

  test("a paragraph without sentence ends is cut between words, in order", () => {
    const text = numbered(600);
    const chunks = chunkText(text);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(CHUNK_CHARS);
    // no word is cut in two, and reading the chunks minus their overlaps gives the text back
    const seen: string[] = [];
    for (const c of chunks) for (const w of words(c)) if (!seen.includes(w)) seen.push(w);
    expect(seen.join(" ")).toBe(text);
  });

  test("no overlap across a paragraph boundary", () => {
    const a = numbered(150, "a");
    const b = numbered(150, "b");
    const chunks = chunkText(`${a}\n\n${b}`);
    const firstB = chunks.findIndex((c) => c.includes("b0 "));
    expect(chunks[firstB]!.startsWith("b0 ")).toBe(true);
  });

  test("a word longer than a chunk is cut hard, never inside a surrogate pair", () => {
    const giant = "🍅".repeat(1000); // 2,000 UTF-16 units
    const chunks = chunkText(`before ${giant} after`);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(CHUNK_CHARS);
      expect(c.isWellFormed()).toBe(true);
    }
    expect(chunks.join("").split("🍅").length - 1).toBeGreaterThanOrEqual(1000);
    expect(chunks[0]!.startsWith("before")).toBe(true);
    expect(chunks.at(-1)!.endsWith("after")).toBe(true);
  });

  test("a 1 MiB document is chunked quickly into ~800-character pieces", () => {
    const paragraph = "The quick brown fox jumps over the lazy dog while the gardener waters the tomatoes. ";
    const text = Array.from({ length: 2500 }, (_, i) => `${i}. ${paragraph.repeat(4)}`).join("\n\n").slice(0, 1024 * 1024);
    const t0 = performance.now();
    const chunks = chunkText(text);
    expect(performance.now() - t0).toBeLessThan(1000);
    const avg = chunks.reduce((n, c) => n + c.length, 0) / chunks.length;
    expect(avg).toBeGreaterThan(600);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(CHUNK_CHARS);
  });
});
