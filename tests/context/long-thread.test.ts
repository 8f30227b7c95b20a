// Threads of hundreds of turns with a small context window (4,096 tokens, 512 kept for the
// answer), against a scripted LLM that counts tokens by characters, refuses any prompt over
// the budget, and records every request: each one fits, the latest summary and the recent
// turns are in it, tool pairs stay whole, memory notes are written before compacting, the
// thread keeps answering and every old response is still there in full.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { contextBudget } from "../../src/context/budget";
import { summaryPrompt } from "../../src/context/summarise";
import { loadThreadContext } from "../../src/store/compactions";
import { getThread } from "../../src/store/conversations";
import { getJob } from "../../src/store/jobs";
import { OWNER_ID } from "../../src/store/users";
import { startTestService, type TestService } from "../support/harness";
import { charTokens, echoStep, startScriptedLLM, type ScriptedLLM, type Step } from "../support/scripted-llm";
import { until } from "../support/until";

const WINDOW = 4096;
const BUDGET = contextBudget({ contextWindow: WINDOW, maxOutputTokens: 512 });
const env = { LLM_CONTEXT_WINDOW: String(WINDOW), LLM_MAX_OUTPUT_TOKENS: "512", LLM_COMPACTION_MODEL: "summary-model" };
const FILLER = "The garden needs water on dry days and the tomatoes want support before they grow tall. ";
const TICKET = "ZX-4471-QQ";

type Body = { messages: { role: string; content: string | null; tool_calls?: { id: string }[]; tool_call_id?: string }[]; tools?: { function: { name: string } }[]; model: string; max_tokens?: number };
const isSummary = (b: Body) => !b.tools?.length;
const isFlush = (b: Body) => b.tools?.length === 1 && b.tools[0]!.function.name === "memory_write";
const isTurn = (b: Body) => !isSummary(b) && !isFlush(b);

/** Answers like a model would: a terse summariser that drops every detail, a note-taker, tool use on request. */
function model(llm: ScriptedLLM) {
  let notes = 0;
  llm.respondWith((body: Body): Step => {
    if (isSummary(body)) return { text: `Summary: the user sent numbered messages about the garden (summary ${llm.chatRequests().length}).` };
    if (isFlush(body)) return { toolCalls: [{ name: "memory_write", arguments: { path: "notes/long-thread.md", content: `note ${++notes}: the user keeps a garden` } }] };
    const last = body.messages.at(-1)!;
    if (last.role === "tool") return { text: "Done with the tool." };
    if (last.role === "user" && /please read big\.txt/.test(last.content ?? "")) return { toolCalls: [{ name: "file_read", arguments: { path: "big.txt" } }] };
    if (last.role === "user" && /please look it up/.test(last.content ?? "")) return { toolCalls: [{ name: "lookup", arguments: { q: "x" } }] };
    return echoStep(body);
  });
}

/** Every request within budget, and tool pairs whole in every turn request. */
function checkRequests(llm: ScriptedLLM) {
  const bodies = llm.chatRequests().map((r) => r.body as Body);
  for (const b of bodies) expect(charTokens(b)).toBeLessThanOrEqual(BUDGET.prompt);
  for (const b of bodies.filter(isTurn)) {
    const open = new Set<string>();
    for (const m of b.messages) {
      if (m.role === "tool") expect(open.delete(m.tool_call_id!)).toBe(true);
      else {
        expect(open.size).toBe(0); // an assistant's calls are answered before anything else
        for (const c of m.tool_calls ?? []) open.add(c.id);
      }
    }
  }
  const summaries = bodies.filter(isSummary);
  for (const b of summaries) {
    expect(b.model).toBe("summary-model");
    expect(b.max_tokens).toBe(BUDGET.summary);
    expect(b.messages[0]!.content).toBe(summaryPrompt(Math.floor(BUDGET.summary * 0.7)));
  }
  return bodies;
}

describe("a long thread on the Responses API", () => {
  let llm: ScriptedLLM;
  let t: TestService;
  const ids: string[] = [];
  let threadId = "";

  beforeAll(async () => {
    llm = await startScriptedLLM({ contextWindow: BUDGET.prompt, countTokens: charTokens });
    model(llm);
    t = await startTestService({ llm, env });
    mkdirSync(join(t.home, "files", OWNER_ID), { recursive: true });
    writeFileSync(join(t.home, "files", OWNER_ID, "big.txt"), "A line of the big file.\n".repeat(1000));
    const lookup = [{ type: "function", name: "lookup", description: "Look something up.", parameters: { type: "object", properties: { q: { type: "string" } } } }];
    let prev: string | undefined;
    for (let i = 0; i < 300; i++) {
      const text =
        i === 0 ? `Turn ${i}: remember ticket ${TICKET}. ${FILLER}` : i % 25 === 5 ? `Turn ${i}: please read big.txt.` : i % 40 === 20 ? `Turn ${i}: please look it up.` : `Turn ${i}: ${FILLER}`;
      let r = await t.respond({ model: "m", input: text, previous_response_id: prev, ...(i % 40 === 20 ? { tools: lookup } : {}) });
      expect(r.status).toBe(200);
      const call = r.body.output.find((o: { type: string }) => o.type === "function_call");
      if (call) {
        ids.push(r.body.id);
        r = await t.respond({ model: "m", previous_response_id: r.body.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "lookup says 42" }] });
      }
      expect(r.body.status).toBe("completed");
      ids.push(r.body.id);
      prev = r.body.id;
    }
    threadId = `${prev!.slice(37, 45)}-${prev!.slice(45, 49)}-${prev!.slice(49, 53)}-${prev!.slice(53, 57)}-${prev!.slice(57)}`;
  }, 120_000);
  afterAll(async () => {
    await t.stop();
    await llm.close();
  });

  test("every request fits; summaries use the summary model and max_tokens", () => {
    const bodies = checkRequests(llm);
    expect(bodies.filter(isSummary).length).toBeGreaterThan(5);
  });

  test("the latest request carries the latest summary and the recent turns verbatim", async () => {
    const bodies = llm.chatRequests().map((r) => r.body as Body);
    const last = bodies.filter(isTurn).at(-1)!;
    const latestSummary = bodies.filter(isSummary).at(-1)!;
    expect(last.messages[0]!.content).toContain("# Summary of the earlier conversation");
    // the summary stored is the last summarising request's answer
    const n = bodies.indexOf(latestSummary) + 1;
    expect(last.messages[0]!.content).toContain(`(summary ${n}).`);
    const users = last.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users.at(-1)).toBe(`Turn 299: ${FILLER}`);
    expect(users.at(-2)).toBe(`Turn 298: ${FILLER}`);
    expect(users.length).toBeGreaterThan(3);
    expect(users.length).toBeLessThan(40);
  });

  test("the planted identifier survives every round of a summariser that drops it", () => {
    const bodies = llm.chatRequests().map((r) => r.body as Body);
    const summaries = bodies.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(2);
    // round two and later see it only in the previous summary, and keep it
    expect(summaries.at(-1)!.messages[1]!.content).toContain(TICKET);
    expect(bodies.filter(isTurn).at(-1)!.messages[0]!.content).toContain(TICKET);
  });

  test("a memory note is written before each compaction, and nothing of that step is in the thread", async () => {
    const bodies = llm.chatRequests().map((r) => r.body as Body);
    const firstFlush = bodies.findIndex(isFlush);
    expect(firstFlush).toBeGreaterThanOrEqual(0);
    expect(firstFlush).toBeLessThan(bodies.findIndex(isSummary));
    const note = await t.api("/api/memory/read?path=notes/long-thread.md");
    expect(note.status).toBe(200);
    const content = ((await note.json()) as { content: string }).content;
    expect(content).toContain("note 1: the user keeps a garden\n\nnote 2:");
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as { items: { type: string; name?: string; memory_notes?: number }[] };
    expect(history.items.some((i) => i.type === "tool_call" && i.name === "memory_write")).toBe(false);
    expect(history.items.filter((i) => i.type === "compaction").every((i) => i.memory_notes === 1)).toBe(true);
  });

  test("history shows every turn and a mark per compaction; old responses are retrievable in full", async () => {
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as { items: { type: string; role?: string; content?: string }[] };
    const users = history.items.filter((i) => i.type === "message" && i.role === "user");
    expect(users).toHaveLength(300);
    const marks = history.items.flatMap((i, at) => (i.type === "compaction" ? [at] : []));
    expect(marks.length).toBeGreaterThan(5);
    for (const at of marks) expect(history.items[at + 1]).toMatchObject({ type: "message", role: "user" });
    const first = await t.api(`/api/v1/responses/${ids[0]}`);
    const body = (await first.json()) as { output: { content: { text: string }[] }[] };
    expect(body.output[0]!.content[0]!.text).toBe(`You said: Turn 0: remember ticket ${TICKET}. ${FILLER}`);
  });

  test("a turn reads the thread from its latest compaction on, not its whole history", async () => {
    const db = t.service.services.db;
    const thread = (await getThread(db, threadId))!;
    const rows = await loadThreadContext(db, thread);
    expect(rows.nextSeq).toBeGreaterThan(600);
    expect(rows.history.length).toBeLessThan(80);
    expect(rows.compaction?.first_kept_seq).toBe(thread.contextSeq);
  });
});

/** POSTs to the webhook channel from a given loopback address (the channel allows 60 a minute per IP). */
function postFrom(url: string, localAddress: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const u = new URL(url);
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: "POST", localAddress, headers: { "content-type": "application/json", "x-webhook-secret": SECRET, "content-length": Buffer.byteLength(data) } },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

const SECRET = "long-thread-webhook-secret-0123";

describe("a long webhook conversation", () => {
  let llm: ScriptedLLM;
  let t: TestService;
  const jobs: string[] = [];

  beforeAll(async () => {
    llm = await startScriptedLLM({ contextWindow: BUDGET.prompt, countTokens: charTokens });
    model(llm);
    t = await startTestService({ llm, env: { ...env, HTTP_ENABLED: "true", HTTP_HOST: "127.0.0.1", HTTP_PORT: "0", HTTP_WEBHOOK_SECRET: SECRET } });
    for (let i = 0; i < 150; i++) {
      const r = await postFrom(`${t.service.webhookUrl}/webhook`, `127.0.0.${2 + Math.floor(i / 50)}`, { user_id: "gardener", conversation_id: "garden", message: `Message ${i}: ${FILLER}${FILLER}` });
      expect(r.status).toBe(202);
      jobs.push(r.body.job_id);
    }
    await until("the last job to complete", async () => (await getJob(t.service.services.db, jobs.at(-1)!))?.status === "completed", { timeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => {
    await t.stop();
    await llm.close();
  });

  test("every job completes in one thread; every request fits; the thread was compacted with notes first", async () => {
    const db = t.service.services.db;
    const rows = await Promise.all(jobs.map((id) => getJob(db, id)));
    expect(rows.every((j) => j?.status === "completed")).toBe(true);
    expect(new Set(rows.map((j) => j!.threadId)).size).toBe(1);
    const bodies = checkRequests(llm);
    expect(bodies.filter(isSummary).length).toBeGreaterThan(3);
    expect(bodies.findIndex(isFlush)).toBeLessThan(bodies.findIndex(isSummary));
    const last = bodies.filter(isTurn).at(-1)!;
    expect(last.messages[0]!.content).toContain("# Summary of the earlier conversation");
    expect(last.messages.at(-1)!.content).toContain(`Message 149: ${FILLER}`);
    expect(last.messages.filter((m) => m.role === "user").at(-2)!.content).toContain(`Message 148: ${FILLER}`);
    expect(rows.at(-1)!.response).toStartWith("You said: <user-context>");
    const thread = (await getThread(db, rows[0]!.threadId!))!;
    expect((await loadThreadContext(db, thread)).history.length).toBeLessThan(40);
  });
});
