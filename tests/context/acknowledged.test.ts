// A turn whose input is stored before it runs (/api/chat/send, background responses) and
// whose thread must be summarised to fit: the summary goes after that input and keeps it, so
// the input is never summarised away or overwritten, and the next turn still sees it verbatim.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { contextBudget } from "../../src/context/budget";
import type { CompactionItem } from "../../src/conversation/items";
import { loadThreadContext, loadTimeline } from "../../src/store/compactions";
import { getThread } from "../../src/store/conversations";
import { chatEvents } from "../support/chat-events";
import { startTestService, type TestService } from "../support/harness";
import { charTokens, echoStep, startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

const WINDOW = 4096;
const BUDGET = contextBudget({ contextWindow: WINDOW, maxOutputTokens: 512 });
const FILLER = "The garden needs water on dry days and the tomatoes want support before they grow tall. ".repeat(3);

let llm: ScriptedLLM;
let t: TestService;
beforeAll(async () => {
  llm = await startScriptedLLM({ contextWindow: BUDGET.prompt, countTokens: charTokens });
  // summarising requests offer no tools; every other one is a turn, answered with an echo
  llm.respondWith((body) => (body.tools?.length ? echoStep(body) : { text: "Summary: the user talked about the garden." }));
  t = await startTestService({ llm, env: { LLM_CONTEXT_WINDOW: String(WINDOW), LLM_MAX_OUTPUT_TOKENS: "512", LLM_MEMORY_FLUSH: "false" } });
});
afterAll(async () => {
  await t.stop();
  await llm.close();
});

test("the summary made during an acknowledged turn goes after its stored input and keeps it", async () => {
  const events = await chatEvents(t);
  const db = t.service.services.db;
  let threadId: string | undefined;
  let compaction: { seq: number; item: CompactionItem } | undefined;
  let input = "";
  for (let i = 0; i < 60 && !compaction; i++) {
    input = `Turn ${i}: ${FILLER}`;
    const res = await t.api("/api/chat/send", { method: "POST", json: { content: input, thread_id: threadId } });
    const sent = (await res.json()) as any;
    threadId = sent.thread_id;
    const done = await events.until((e) => e.type === "turn.completed" && e.response_id === sent.response_id);
    expect(done.status).toBe("completed");
    const timeline = await loadTimeline(db, threadId!);
    const last = timeline.findLast((p) => p.item.type === "compaction");
    // a summary made in this turn: the turn's input lies just before it
    if (last && timeline.findIndex((p) => p.item.type === "message" && p.item.content === input) === timeline.indexOf(last) - 1) {
      compaction = last as { seq: number; item: CompactionItem };
    }
  }
  await events.close();
  expect(compaction).toBeDefined();
  const timeline = await loadTimeline(db, threadId!);
  const at = timeline.findIndex((p) => p.item.type === "message" && p.item.content === input);
  // input, summary, answer: in this order, each at its own place
  expect(timeline.slice(at).map((p) => (p.item.type === "message" ? p.item.role : p.item.type))).toEqual(["user", "compaction", "assistant"]);
  expect(new Set(timeline.map((p) => p.seq)).size).toBe(timeline.length);
  expect(compaction!.item.first_kept_seq).toBeLessThanOrEqual(timeline[at]!.seq);
  // what the next turn reads of the thread starts at or before that input
  const context = await loadThreadContext(db, (await getThread(db, threadId!))!);
  expect(context.history.map((p) => p.item)).toContainEqual(expect.objectContaining({ role: "user", content: input }));
  await t.api("/api/chat", { method: "POST", json: { message: "and now?", thread_id: threadId } });
  const sentNext = llm.chatRequests().at(-1)!.body.messages.map((m: any) => m.content);
  expect(sentNext).toContain(input);
});
