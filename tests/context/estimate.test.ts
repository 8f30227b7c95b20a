import { describe, expect, test } from "bun:test";
import { contextBudget } from "../../src/context/budget";
import { Calibration, Calibrations, rawMessageTokens, rawTextTokens } from "../../src/context/estimate";

describe("token estimate", () => {
  test("ASCII at 3.2 characters a token, other characters a token each", () => {
    expect(rawTextTokens("")).toBe(0);
    expect(rawTextTokens("a".repeat(320))).toBe(100);
    expect(rawTextTokens("日本語のテキスト")).toBe(8);
    expect(rawTextTokens("😀")).toBe(1); // a surrogate pair counts once
  });

  test("a message counts its tool calls and a fixed overhead", () => {
    const plain = rawMessageTokens({ role: "user", content: "a".repeat(32) });
    expect(plain).toBe(14);
    const withCall = rawMessageTokens({ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "file_read", arguments: '{"path":"x.txt"}' } }] });
    expect(withCall).toBeGreaterThan(4 + 4);
  });

  test("image parts count a fixed price", () => {
    const m = { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:..." } }] } as never;
    expect(rawMessageTokens(m)).toBe(4 + 2 + 765);
  });
});

describe("calibration", () => {
  test("follows a provider that counts more at once, and one that counts less slowly", () => {
    const c = new Calibration();
    expect(c.scale(1000)).toBe(1000);
    c.observe(1000, 1500);
    expect(c.factor).toBe(1.5);
    c.observe(1000, 500);
    expect(c.factor).toBeCloseTo(1.5 * 0.8 + 0.5 * 0.2);
    expect(c.scale(1000)).toBeWithin(1300, 1302);
  });

  test("ignores tiny requests and empty reports, and stays within bounds", () => {
    const c = new Calibration();
    c.observe(10, 1000);
    c.observe(1000, 0);
    expect(c.factor).toBe(1);
    c.observe(1000, 100_000);
    expect(c.factor).toBe(4);
  });

  test("an overflow counts a quarter more, or what the provider said it counted", () => {
    const c = new Calibration();
    c.overflowed(1000);
    expect(c.factor).toBe(1.25);
    c.overflowed(1000, 2000);
    expect(c.factor).toBeCloseTo(2.1);
  });

  test("one calibration per model", () => {
    const all = new Calibrations();
    all.for("a").observe(1000, 2000);
    expect(all.for("a").factor).toBe(2);
    expect(all.for("b").factor).toBe(1);
  });
});

describe("budget", () => {
  test("the window less the answer's reserve; the summary an eighth of the prompt, within bounds", () => {
    expect(contextBudget({ contextWindow: 32768, maxOutputTokens: 4096 })).toEqual({ window: 32768, reserve: 4096, prompt: 28672, summary: 2048 });
    expect(contextBudget({ contextWindow: 4096, maxOutputTokens: 512 })).toEqual({ window: 4096, reserve: 512, prompt: 3584, summary: 448 });
  });

  test("the reserve takes at most half the window", () => {
    expect(contextBudget({ contextWindow: 4096, maxOutputTokens: 4096 })).toMatchObject({ reserve: 2048, prompt: 2048, summary: 256 });
  });
});
