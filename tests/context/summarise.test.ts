import { describe, expect, test } from "bun:test";
import type { ConversationItem } from "../../src/conversation/items";
import { contextBudget } from "../../src/context/budget";
import { Calibration, rawMessageTokens } from "../../src/context/estimate";
import { fitSummary, summarise, summaryPrompt, transcriptLines } from "../../src/context/summarise";
import { scriptedModel, type ScriptedModel } from "../support/scripted-model";
import { requestText, text } from "./support";

const budget = contextBudget({ contextWindow: 2048, maxOutputTokens: 256 }); // prompt 1792, summary 256
const turn = (i: number, extra = ""): ConversationItem[] => [
  { type: "message", id: `u${i}`, role: "user", content: `Question ${i}: ${extra}${"words and more words ".repeat(15)}` },
  { type: "message", id: `a${i}`, role: "assistant", content: `Answer ${i}: ${"reply text ".repeat(15)}` },
];
const deps = (llm: ScriptedModel) => ({ llm, model: "summary-model", budget, calibration: new Calibration(), redact: (t: string) => t.replaceAll("sk-secret", "[REDACTED]") });
const prompt = (req: { messages: Parameters<typeof rawMessageTokens>[0][] }) => req.messages.reduce((n, m) => n + rawMessageTokens(m), 0);

describe("summaries", () => {
  test("the prompt asks for identifiers verbatim", () => {
    expect(summaryPrompt(100)).toContain("Copy identifiers exactly, character for character");
    expect(summaryPrompt(100)).toContain("At most about 100 words");
  });

  test("a transcript line per item, results named by their tool", () => {
    const lines = transcriptLines([
      { type: "message", id: "1", role: "user", content: "read it" },
      { type: "function_call", id: "2", call_id: "call_1", name: "file_read", arguments: '{"path":"a.txt"}', external: false },
      { type: "function_call_output", id: "3", call_id: "call_1", output: "x".repeat(5000) },
      { type: "message", id: "4", role: "assistant", content: "half", status: "incomplete" },
    ]);
    expect(lines[0]).toBe("[user] read it");
    expect(lines[1]).toBe('[assistant calls file_read] {"path":"a.txt"}');
    expect(lines[2]).toStartWith("[file_read result] xxx");
    expect(lines[2]!.length).toBeLessThan(2100);
    expect(lines[3]).toBe("[assistant, cut short] half");
  });

  test("one request with max_tokens and the summary model, redacted, when the turns fit", async () => {
    const llm = scriptedModel(() => text("They talked."));
    const s = await summarise(deps(llm), undefined, [...turn(1, "key sk-secret "), ...turn(2)], new AbortController().signal);
    expect(s.summary).toBe("They talked.");
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.model).toBe("summary-model");
    expect(llm.requests[0]!.maxTokens).toBe(budget.summary);
    expect(llm.requests[0]!.tools).toEqual([]);
    expect(requestText(llm.requests[0]!)).not.toContain("sk-secret");
  });

  test("turns larger than a request go chunk by chunk, each summary the next one's base, every request within budget", async () => {
    const llm = scriptedModel((_, n) => text(`Summary ${n}.`));
    const items = Array.from({ length: 40 }, (_, i) => turn(i)).flat();
    const s = await summarise(deps(llm), "Earlier summary.", items, new AbortController().signal);
    expect(llm.requests.length).toBeGreaterThan(2);
    for (const req of llm.requests) expect(prompt(req)).toBeLessThanOrEqual(budget.prompt);
    expect(requestText(llm.requests[0]!)).toContain("<previous-summary>\nEarlier summary.\n</previous-summary>");
    expect(requestText(llm.requests[1]!)).toContain("<previous-summary>\nSummary 0.\n</previous-summary>");
    expect(s.summary).toBe(`Summary ${llm.requests.length - 1}.`);
    // every item went into some request
    const all = llm.requests.map(requestText).join("\n");
    for (let i = 0; i < 40; i++) expect(all).toContain(`Question ${i}:`);
  });

  test("a provider that finds a request too long gets it once more in smaller chunks; twice is an error", async () => {
    const overflow = () => new Error("This model's maximum context length is 1000 tokens.");
    let llm = scriptedModel((_, n) => (n === 0 ? overflow() : text("ok")));
    const items = Array.from({ length: 8 }, (_, i) => turn(i)).flat();
    await summarise(deps(llm), undefined, items, new AbortController().signal);
    expect(llm.requests.length).toBeGreaterThan(2);
    expect(prompt(llm.requests[1]!)).toBeLessThan(prompt(llm.requests[0]!));

    llm = scriptedModel(() => overflow());
    await expect(summarise(deps(llm), undefined, items, new AbortController().signal)).rejects.toThrow("maximum context length");
    expect(llm.requests).toHaveLength(2);
  });

  test("a planted identifier survives two rounds of a summariser that drops everything", async () => {
    const llm = scriptedModel(() => text("The user and the assistant talked."));
    const first = await summarise(deps(llm), undefined, [...turn(1, "ticket ZX-4471-QQ, see https://wiki.lan/t/4471 "), ...turn(2)], new AbortController().signal);
    expect(first.summary).toContain("ZX-4471-QQ");
    const second = await summarise(deps(llm), first.summary, [...turn(3), ...turn(4)], new AbortController().signal);
    expect(requestText(llm.requests[1]!)).toContain("ZX-4471-QQ");
    expect(second.summary).toContain("ZX-4471-QQ");
    expect(second.summary).toContain("https://wiki.lan/t/4471");
  });
});

describe("a summary's budget", () => {
  const cal = new Calibration();

  test("a summary over its budget is cut, with a note", () => {
    const fitted = fitSummary("word ".repeat(2000), "", 256, cal);
    expect(cal.scale(Math.ceil(fitted.length / 3.2))).toBeLessThanOrEqual(256);
    expect(fitted).toEndWith("[summary cut at its budget]");
  });

  test("identifiers it left out are listed after it, the latest first when they do not all fit", () => {
    const source = Array.from({ length: 200 }, (_, i) => `ID-${1000 + i}`).join(" ");
    const fitted = fitSummary("A summary mentioning ID-1000.", source, 256, cal);
    expect(fitted).toStartWith("A summary mentioning ID-1000.\nIdentifiers from the summarised turns, verbatim: ");
    expect(fitted).toContain("ID-1199");
    expect(fitted).not.toContain("ID-1001,");
    expect(Math.ceil(fitted.length / 3.2)).toBeLessThanOrEqual(256);
  });
});
