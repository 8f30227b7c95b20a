import { describe, expect, test } from "bun:test";
import type { ConversationItem } from "../../src/conversation/items";
import type { CompactionItem } from "../../src/conversation/items";
import { Calibrations, rawMessageTokens, rawToolTokens } from "../../src/context/estimate";
import { FLUSH_PROMPT, memoryFlush } from "../../src/context/flush";
import { ThreadContext, type ThreadState } from "../../src/context/thread-context";
import { contextBudget } from "../../src/context/budget";
import { InvalidRequest, TurnError } from "../../src/errors";
import { noLog } from "../../src/log";
import type { LlmRequest, ToolSpec } from "../../src/llm/types";
import { scriptedModel, type ScriptedStep } from "../support/scripted-model";
import { requestText, text } from "./support";

const memoryWrite: ToolSpec = { name: "memory_write", description: "Write a memory document.", parameters: { type: "object" } };
const tools: ToolSpec[] = [memoryWrite, { name: "file_read", description: "Read a file.", parameters: { type: "object" } }];
const settings = { contextWindow: 4096, maxOutputTokens: 512, memoryFlush: true, compactionModel: "cheap" };
const isSummary = (r: LlmRequest) => !r.tools.length;
const isFlush = (r: LlmRequest) => r.tools.length === 1;
const promptTokens = (r: LlmRequest) => r.messages.reduce((n, m) => n + rawMessageTokens(m), rawToolTokens(r.tools));

function notesStore() {
  const docs = new Map<string, string>();
  return { docs, read: async (_: string, path: string) => (docs.has(path) ? { content: docs.get(path)! } : undefined), write: async (_: string, path: string, content: string) => void docs.set(path, content) };
}

/** A thread of `n` stored turns, with a tool call every fifth, numbered from seq 0. */
function storedTurns(n: number, words = 40) {
  const items: ConversationItem[] = [];
  for (let i = 0; i < n; i++) {
    items.push({ type: "message", id: `u${i}`, role: "user", content: `turn ${i}: ${"lorem ipsum ".repeat(words / 2)}` });
    if (i % 5 === 4) {
      items.push({ type: "function_call", id: `c${i}`, call_id: `call_${i}`, name: "file_read", arguments: "{}", external: false });
      items.push({ type: "function_call_output", id: `o${i}`, call_id: `call_${i}`, output: "file text ".repeat(400) });
    }
    items.push({ type: "message", id: `a${i}`, role: "assistant", content: `answer ${i}` });
  }
  return items.map((item, seq) => ({ seq, item }));
}

function context(answer: (r: LlmRequest, n: number) => ScriptedStep, state: Partial<ThreadState> = {}, over: Partial<typeof settings> = {}) {
  const llm = scriptedModel(answer);
  const stored: { item: CompactionItem; seq: number }[] = [];
  const notes = notesStore();
  const history = state.history ?? [];
  const ctx = new ThreadContext(
    {
      llm,
      settings: { ...settings, ...over },
      calibrations: new Calibrations(),
      noteTool: memoryWrite,
      notes,
      redact: (t) => t,
      store: async (_, item, seq) => void stored.push({ item, seq }),
      log: noLog,
    },
    { threadId: "t", userId: "u", system: "You are helpful.", compaction: undefined, history, nextSeq: history.length, policy: () => "auto", ...state },
  );
  return { ctx, llm, stored, notes };
}

const answerAll = (r: LlmRequest): ScriptedStep =>
  isFlush(r) ? [{ type: "tool_calls", calls: [{ call_id: "x", name: "memory_write", arguments: JSON.stringify({ path: "notes/t.md", content: "remember turn 0" }) }] }] : isSummary(r) ? text("Summary of earlier turns.") : text("hi");
const newInput: ConversationItem[] = [{ type: "message", id: "new", role: "user", content: "and now?" }];
const signal = new AbortController().signal;

describe("a turn's context", () => {
  test("a thread that fits goes as it is, with no LLM call before the step", async () => {
    const { ctx, llm } = context(answerAll, { history: storedTurns(3) });
    const step = await ctx.step(newInput, tools, signal);
    expect(step.compacted).toBeUndefined();
    expect(llm.requests).toHaveLength(0);
    expect(step.messages[0]).toEqual({ role: "system", content: "You are helpful." });
    expect(step.messages.at(-1)).toEqual({ role: "user", content: "and now?" });
  });

  test("a thread that does not fit: memory step, summary, stored compaction, and a request within budget", async () => {
    const history = storedTurns(60);
    const { ctx, llm, stored, notes } = context(answerAll, { history });
    const step = await ctx.step(newInput, tools, signal);
    const budget = contextBudget(settings);
    // the memory step came first, saw the older turns and only memory_write, and its note was kept
    expect(isFlush(llm.requests[0]!)).toBe(true);
    expect(llm.requests[0]!.tools).toEqual([memoryWrite]);
    expect(requestText(llm.requests[0]!)).toContain(FLUSH_PROMPT);
    expect(notes.docs.get("notes/t.md")).toBe("remember turn 0");
    // then the summary, with the summary model and max_tokens
    const summaries = llm.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    for (const r of summaries) expect(r).toMatchObject({ model: "cheap", maxTokens: budget.summary });
    for (const r of llm.requests) expect(promptTokens(r)).toBeLessThanOrEqual(budget.prompt);
    // stored at the next seq, pointing at the first kept item
    expect(stored).toHaveLength(1);
    const { item, seq } = stored[0]!;
    expect(seq).toBe(history.length);
    expect(ctx.nextSeq).toBe(history.length + 1);
    expect(item).toMatchObject({ type: "compaction", summary: "Summary of earlier turns.", trigger: "auto", memory_notes: 1 });
    const firstKept = history.find((p) => p.seq === item.first_kept_seq)!;
    expect(firstKept.item).toMatchObject({ type: "message", role: "user" });
    expect(item.summarised_items).toBe(item.first_kept_seq);
    // the step: the summary in the system prompt, the kept turns verbatim, within budget
    expect(step.compacted).toBe(item);
    expect(step.messages[0]!.content).toContain("# Summary of the earlier conversation");
    expect(step.messages[0]!.content).toContain("Summary of earlier turns.");
    expect(step.messages[1]).toEqual({ role: "user", content: (firstKept.item as { content: string }).content });
    expect(step.messages.at(-1)).toEqual({ role: "user", content: "and now?" });
    expect(promptTokens({ messages: step.messages, tools, signal })).toBeLessThanOrEqual(budget.prompt);
    // the next step needs no new compaction
    const again = await ctx.step(newInput, tools, signal);
    expect(again.compacted).toBeUndefined();
  });

  test("without memory on, or when memory_write asks for approval, no silent step", async () => {
    for (const [over, policy] of [[{ memoryFlush: false }, "auto"], [{}, "ask"]] as const) {
      const { ctx, llm, stored } = context(answerAll, { history: storedTurns(60), policy: () => policy }, over);
      await ctx.step(newInput, tools, signal);
      expect(llm.requests.some(isFlush)).toBe(false);
      expect(stored[0]!.item.memory_notes).toBe(0);
    }
  });

  test("a memory step that fails costs only its notes", async () => {
    const { ctx, stored } = context((r) => (isFlush(r) ? new Error("boom") : answerAll(r)), { history: storedTurns(60) });
    await ctx.step(newInput, tools, signal);
    expect(stored).toHaveLength(1);
  });

  test("a note to an existing document is added to its end", async () => {
    const notes = notesStore();
    notes.docs.set("notes/t.md", "old fact");
    const llm = scriptedModel(answerAll);
    const r = await memoryFlush(
      { llm, budget: contextBudget(settings), calibration: new Calibrations().for("m"), tool: memoryWrite, policy: () => "auto", notes, redact: (t) => t },
      { system: "s", items: storedTurns(2).map((p) => p.item) },
      { userId: "u", signal },
      noLog,
    );
    expect(r.notes).toBe(1);
    expect(notes.docs.get("notes/t.md")).toBe("old fact\n\nremember turn 0");
  });

  test("large old tool outputs are trimmed before any turn is summarised", async () => {
    const history = storedTurns(15); // three big outputs
    const { ctx, llm } = context(answerAll, { history });
    const step = await ctx.step(newInput, tools, signal);
    expect(llm.requests).toHaveLength(0);
    const toolMessages = step.messages.filter((m) => m.role === "tool");
    expect(toolMessages).toHaveLength(3);
    expect(toolMessages[0]!.content).toContain("tool output trimmed");
  });

  test("tool pairs stay whole in every request", async () => {
    const { ctx } = context(answerAll, { history: storedTurns(80) });
    const { messages } = await ctx.step(newInput, tools, signal);
    const open = new Set<string>();
    for (const m of messages) {
      if (m.role === "assistant") for (const c of m.tool_calls ?? []) open.add(c.id);
      if (m.role === "tool") expect(open.delete(m.tool_call_id)).toBe(true);
    }
    expect(open.size).toBe(0);
  });

  test("an overflow: harder compaction and one retry; a second overflow is not retried", async () => {
    const { ctx, stored } = context(answerAll, { history: storedTurns(20) });
    const first = await ctx.step(newInput, tools, signal);
    expect(first.compacted).toBeUndefined();
    const overflow = new Error("This model's maximum context length is 3000 tokens.");
    expect(ctx.overflowed(new Error("rate limited"))).toBe(false);
    expect(ctx.overflowed(overflow)).toBe(true);
    const second = await ctx.step(newInput, tools, signal);
    expect(second.compacted?.trigger).toBe("overflow");
    expect(stored).toHaveLength(1);
    expect(second.messages.length).toBeLessThan(first.messages.length);
    expect(ctx.overflowed(overflow)).toBe(false);
  });

  test("when nothing can make the refused step smaller, the provider's own refusal is the error", async () => {
    const { ctx } = context(answerAll);
    const big: ConversationItem[] = [{ type: "message", id: "u", role: "user", content: "words and more ".repeat(400) }];
    await ctx.step(big, tools, signal);
    const refusal = new Error("the prompt is too long");
    expect(ctx.overflowed(refusal)).toBe(true);
    await expect(ctx.step(big, tools, signal)).rejects.toBe(refusal);
  });

  test("manual compaction keeps the latest turn; one turn has nothing to compact", async () => {
    const history = storedTurns(4);
    const { ctx, stored } = context(answerAll, { history });
    const r = await ctx.compact(signal);
    expect(r.item?.trigger).toBe("manual");
    const lastTurn = history.findLast((p) => p.item.type === "message" && p.item.role === "user")!;
    expect(stored[0]!.item.first_kept_seq).toBe(lastTurn.seq);
    const one = context(answerAll, { history: storedTurns(1) });
    expect((await one.ctx.compact(signal)).item).toBeUndefined();
    expect(one.llm.requests).toHaveLength(0);
  });

  test("a second compaction summarises the first summary with the next turns", async () => {
    const history = storedTurns(60);
    const { ctx, llm } = context((r, n) => (isSummary(r) ? text(`Summary ${n}.`) : answerAll(r)), {
      history,
      compaction: { type: "compaction", id: "c0", summary: "The very first summary.", first_kept_seq: 0, summarised_items: 50, trigger: "auto", memory_notes: 0, created_at: 0 },
    });
    const step = await ctx.step(newInput, tools, signal);
    expect(requestText(llm.requests.find(isSummary)!)).toContain("The very first summary.");
    expect(step.compacted!.summarised_items).toBeGreaterThan(50);
  });

  test("an input that can never fit is a 400 before anything runs", () => {
    const { ctx, llm } = context(answerAll);
    const huge: ConversationItem[] = [{ type: "message", id: "x", role: "user", content: "word ".repeat(4000) }];
    expect(() => ctx.checkInput(huge, tools)).toThrow(InvalidRequest);
    try {
      ctx.checkInput(huge, tools);
    } catch (e) {
      expect((e as InvalidRequest).code).toBe("context_length_exceeded");
      expect((e as Error).message).toContain("LLM_CONTEXT_WINDOW 4096");
    }
    expect(() => ctx.checkInput(newInput, tools)).not.toThrow();
    // a big tool output is not refused: it can be trimmed
    expect(() => ctx.checkInput([{ type: "function_call_output", id: "o", call_id: "c", output: "x".repeat(40_000) }], tools)).not.toThrow();
    expect(llm.requests).toHaveLength(0);
  });

  test("a turn whose own tool results outgrow the window: trimmed, then a clear error", async () => {
    const { ctx } = context(answerAll);
    const turn: ConversationItem[] = [{ type: "message", id: "u", role: "user", content: "read them all" }];
    for (let i = 0; i < 6; i++) {
      turn.push({ type: "function_call", id: `c${i}`, call_id: `c${i}`, name: "file_read", arguments: "{}", external: false });
      turn.push({ type: "function_call_output", id: `o${i}`, call_id: `c${i}`, output: "y".repeat(20_000) });
    }
    const step = await ctx.step(turn, tools, signal);
    expect(promptTokens({ messages: step.messages, tools, signal })).toBeLessThanOrEqual(contextBudget(settings).prompt);
    for (let i = 0; i < 40; i++) turn.push({ type: "message", id: `m${i}`, role: "assistant", content: "z".repeat(400) });
    await expect(ctx.step(turn, tools, signal)).rejects.toThrow(TurnError);
  });
});
