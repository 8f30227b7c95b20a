// The identity files' share of the system prompt: their order, the per-file and total
// budgets, and visible markers wherever something is cut.
import { describe, expect, test } from "bun:test";
import { DEFAULT_IDENTITY, fitIdentity, IDENTITY_FILE_BYTES, IDENTITY_PATHS, IDENTITY_TOTAL_BYTES } from "../../src/memory/identity";

const doc = (path: string, content: string) => ({ path, content });

describe("fitIdentity", () => {
  test("orders AGENTS.md, SOUL.md, USER.md, IDENTITY.md whatever the input order; ignores other documents", () => {
    const out = fitIdentity([doc("IDENTITY.md", "i"), doc("notes/x.md", "x"), doc("USER.md", "u"), doc("AGENTS.md", "a"), doc("SOUL.md", "s")]);
    expect(out).toEqual([doc("AGENTS.md", "a"), doc("SOUL.md", "s"), doc("USER.md", "u"), doc("IDENTITY.md", "i")]);
  });

  test("empty documents are left out (the way to switch one off)", () => {
    expect(fitIdentity([doc("AGENTS.md", "  \n"), doc("SOUL.md", "s")])).toEqual([doc("SOUL.md", "s")]);
  });

  test("a file over its budget is cut with a marker saying how much is shown", () => {
    const big = "line of the agents file\n".repeat(600); // 14,400 bytes
    const [agents] = fitIdentity([doc("AGENTS.md", big)]);
    const [kept, marker] = agents!.content.split("\n\n[");
    expect(Buffer.byteLength(kept!)).toBeLessThanOrEqual(IDENTITY_FILE_BYTES);
    expect(Buffer.byteLength(kept!)).toBeGreaterThan(IDENTITY_FILE_BYTES * 0.8);
    expect(kept!.endsWith("line of the agents file")).toBe(true); // cut at a line end
    expect(marker).toMatch(/^AGENTS\.md truncated: \d+ of 14399 bytes shown, because each identity file may take 8 KiB\. Read the whole file with memory_read\.\]$/);
  });

  test("multi-byte text is cut at a character boundary", () => {
    const [soul] = fitIdentity([doc("SOUL.md", "🍅".repeat(3000))]);
    const kept = soul!.content.split("\n\n[")[0]!;
    expect(kept.isWellFormed()).toBe(true);
    expect(kept).toBe("🍅".repeat(IDENTITY_FILE_BYTES / 4));
  });

  test("the total budget: later files get what is left, and one with nothing left still shows a marker", () => {
    const full = "x".repeat(IDENTITY_FILE_BYTES);
    const out = fitIdentity([doc("AGENTS.md", full), doc("SOUL.md", full), doc("USER.md", full), doc("IDENTITY.md", "Name: Ada")]);
    expect(out.map((d) => d.path)).toEqual([...IDENTITY_PATHS]);
    expect(out.slice(0, 3).map((d) => d.content)).toEqual([full, full, full]);
    expect(out[3]!.content).toBe(
      "[IDENTITY.md truncated: 0 of 9 bytes shown, because the identity files may take 24 KiB in all. Read the whole file with memory_read.]",
    );
    const total = out.reduce((n, d) => n + Buffer.byteLength(d.content.split("\n\n[")[0]!.replace(/^\[.*\]$/, "")), 0);
    expect(total).toBeLessThanOrEqual(IDENTITY_TOTAL_BYTES);
  });

  test("the defaults are short and fit whole", () => {
    const out = fitIdentity(Object.entries(DEFAULT_IDENTITY).map(([path, content]) => doc(path, content)));
    expect(out.map((d) => d.path)).toEqual([...IDENTITY_PATHS]);
    for (const d of out) {
      expect(d.content).not.toContain("truncated");
      expect(Buffer.byteLength(d.content)).toBeLessThan(2048);
    }
  });
});
