// The discovered context window in the running service: /api/status says it and where it
// came from, the agent's budget uses it (a thread is compacted to fit Ollama's 4096 tokens),
// and a server that never answers neither holds up nor fails the start.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";
import { ollamaRoutes, startFakeServer, type FakeServer } from "../support/llm-servers";
import { charTokens, echoStep, startScriptedLLM, type ScriptedLLM, type Step } from "../support/scripted-llm";

const FILLER = "Notes about the shed roof, the gutters, and which tiles to order next spring. ".repeat(4);
type Body = { messages: { role: string; content: string | null }[]; tools?: unknown[] };
const isSummary = (b: Body) => !b.tools?.length;

describe("behind Ollama with num_ctx 4096 and no LLM_CONTEXT_WINDOW", () => {
  let llm: ScriptedLLM;
  let t: TestService;
  beforeAll(async () => {
    // Ollama cuts a longer prompt without a word: nothing here refuses one
    llm = await startScriptedLLM({ countTokens: charTokens, routes: ollamaRoutes({ model: "scripted-model", arch: "qwen3", trained: 40960, numCtx: 4096 }) });
    llm.respondWith((body: Body): Step => (isSummary(body) ? { text: "Summary: roof, gutters, tiles." } : echoStep(body)));
    t = await startTestService({ llm, env: { LLM_MAX_OUTPUT_TOKENS: "512", LLM_MEMORY_FLUSH: "false" } });
  });
  afterAll(async () => {
    await t.stop();
    await llm.close();
  });

  test("/api/status gives the window and where it came from", async () => {
    const body = (await (await t.api("/api/status")).json()) as any;
    expect(body.llm.context_window).toEqual({ tokens: 4096, source: "server", from: "Ollama num_ctx of scripted-model" });
    expect(t.logs).toContain("context window 4096 tokens (Ollama num_ctx of scripted-model)");
  });

  test("a growing thread is compacted to fit 4096 tokens less the answer's 512, not the default 32768", async () => {
    let prev: string | undefined;
    for (let i = 0; i < 40 && !llm.chatRequests().some((q) => isSummary(q.body)); i++) {
      const r = await t.respond({ model: "m", input: `Turn ${i}: ${FILLER}`, previous_response_id: prev });
      expect(r.body.status).toBe("completed");
      prev = r.body.id;
    }
    const bodies = llm.chatRequests().map((q) => q.body as Body);
    expect(bodies.some(isSummary)).toBe(true);
    for (const b of bodies) expect(charTokens(b)).toBeLessThanOrEqual(4096 - 512);
    // the thread goes on, on the summary
    const last = await t.respond({ model: "m", input: "And the tiles?", previous_response_id: prev });
    expect(last.body.status).toBe("completed");
    expect(llm.lastChat().messages[0].content).toContain("Summary: roof, gutters, tiles.");
  });
});

describe("a server that never answers the window questions", () => {
  let hang: FakeServer;
  beforeAll(async () => {
    hang = await startFakeServer("hang");
  });
  afterAll(() => hang.close());

  test("start-up goes on after a moment, with the default window, and does not fail", async () => {
    const started = performance.now();
    const t = await startTestService({ env: { LLM_BASE_URL: hang.url, LLM_MODEL: "m" } });
    try {
      expect(performance.now() - started).toBeLessThan(3_000);
      const body = (await (await t.api("/api/status")).json()) as any;
      expect(body.llm.context_window).toEqual({ tokens: 32768, source: "default", from: "default" });
      expect(t.service.services.contextWindow.asking).toBe(true);
    } finally {
      await t.stop();
    }
  });

  test("a configured window asks nothing of the server", async () => {
    const asked = hang.requests.length;
    const t = await startTestService({ env: { LLM_BASE_URL: hang.url, LLM_MODEL: "m", LLM_CONTEXT_WINDOW: "8192" } });
    try {
      const body = (await (await t.api("/api/status")).json()) as any;
      expect(body.llm.context_window).toEqual({ tokens: 8192, source: "config", from: "config" });
      expect(hang.requests.length).toBe(asked);
    } finally {
      await t.stop();
    }
  });
});
