// The context window read from the LLM server: each server's documented answer, the order
// when several could answer, the key kept to the configured host, a server that never
// answers, and the window kept, read again and given to the agent's context settings.
import { afterEach, describe, expect, test } from "bun:test";
import { ContextWindow } from "../../src/llm/window";
import { readServerWindow, serverRoot } from "../../src/llm/window-servers";
import { captureLog } from "../support/log";
import { startScriptedLLM } from "../support/scripted-llm";
import { llamaCppRoutes, lmStudioRoutes, ollamaRoutes, openRouterRoutes, startFakeServer, vllmRoutes, type FakeServer, type Routes } from "../support/llm-servers";

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
const serve = async (routes: Routes | "hang", basePath?: string) => {
  const s = await startFakeServer(routes, { basePath });
  servers.push(s);
  return s;
};
const read = (s: FakeServer, model: string, apiKey?: string) => readServerWindow({ baseUrl: s.url, model, apiKey }, AbortSignal.timeout(5_000), 2_000);

describe("what each server says", () => {
  test("llama.cpp: GET /props, default_generation_settings.n_ctx", async () => {
    const s = await serve(llamaCppRoutes({ model: "qwen3-8b", nCtx: 8192 }));
    expect(await read(s, "qwen3-8b")).toEqual({ tokens: 8192, from: "llama.cpp n_ctx of qwen3-8b" });
    // at the server's root, not under /v1; a single-model server is asked once
    expect(s.requests.filter((r) => r.path.startsWith("/props")).map((r) => r.path)).toEqual(["/props"]);
  });

  test("llama.cpp in router mode: the bare /props placeholder (n_ctx 0) sends it to /props?model=", async () => {
    const s = await serve(llamaCppRoutes({ model: "gemma-3-12b", nCtx: 16384, router: true }));
    expect(await read(s, "gemma-3-12b")).toEqual({ tokens: 16384, from: "llama.cpp n_ctx of gemma-3-12b" });
    expect(s.requests.map((r) => r.path)).toContain("/props?model=gemma-3-12b");
  });

  test("Ollama: the num_ctx of the model's parameters, not the context it was trained for", async () => {
    const s = await serve(ollamaRoutes({ model: "qwen3:8b", arch: "qwen3", trained: 40960, numCtx: 8192 }));
    expect(await read(s, "qwen3:8b")).toEqual({ tokens: 8192, from: "Ollama num_ctx of qwen3:8b" });
    expect(s.requests.map((r) => `${r.method} ${r.path}`)).toContain("POST /api/show");
  });

  test("Ollama: a loaded model's context_length in /api/ps (qwen3 is qwen3:latest)", async () => {
    const s = await serve(ollamaRoutes({ model: "qwen3", trained: 40960, loaded: { name: "qwen3:latest", contextLength: 16384 } }));
    expect(await read(s, "qwen3")).toEqual({ tokens: 16384, from: "Ollama num_ctx of qwen3, as loaded" });
  });

  test("Ollama: the smaller of num_ctx and the loaded context, and never more than the model was trained for", async () => {
    const both = await serve(ollamaRoutes({ model: "m", trained: 131072, numCtx: 32768, loaded: { name: "m", contextLength: 8192 } }));
    expect((await read(both, "m"))?.tokens).toBe(8192);
    const small = await serve(ollamaRoutes({ model: "tiny", trained: 2048, numCtx: 8192 }));
    expect(await read(small, "tiny")).toEqual({ tokens: 2048, from: "Ollama context_length of tiny" });
  });

  test("Ollama: with no num_ctx anywhere, Ollama's documented default (it silently cuts longer prompts)", async () => {
    const s = await serve(ollamaRoutes({ model: "llama3.1:8b", trained: 131072 }));
    expect(await read(s, "llama3.1:8b")).toEqual({ tokens: 4096, from: "Ollama's default num_ctx, llama3.1:8b sets none" });
  });

  test("LM Studio: loaded_context_length once loaded, else max_context_length", async () => {
    const loaded = await serve(lmStudioRoutes({ model: "google/gemma-3-12b", max: 131072, loaded: 4096 }));
    expect(await read(loaded, "google/gemma-3-12b")).toEqual({ tokens: 4096, from: "LM Studio loaded_context_length of google/gemma-3-12b" });
    expect(loaded.requests.map((r) => r.path)).toContain("/api/v0/models/google/gemma-3-12b");
    const idle = await serve(lmStudioRoutes({ model: "qwen2-vl-7b-instruct", max: 32768 }));
    expect(await read(idle, "qwen2-vl-7b-instruct")).toEqual({ tokens: 32768, from: "LM Studio max_context_length of qwen2-vl-7b-instruct" });
  });

  test("vLLM: max_model_len of the model in GET /v1/models", async () => {
    const s = await serve(vllmRoutes({ model: "meta-llama/Meta-Llama-3-8B-Instruct", maxModelLen: 8192 }));
    expect(await read(s, "meta-llama/Meta-Llama-3-8B-Instruct")).toEqual({ tokens: 8192, from: "vLLM max_model_len of meta-llama/Meta-Llama-3-8B-Instruct" });
  });

  test("OpenRouter: context_length of the model in GET /api/v1/models", async () => {
    const s = await serve(openRouterRoutes({ model: "qwen/qwen3-32b", contextLength: 40960 }), "/api/v1");
    expect(await read(s, "qwen/qwen3-32b")).toEqual({ tokens: 40960, from: "GET /models context_length of qwen/qwen3-32b" });
    expect(s.requests.map((r) => r.path)).toContain("/api/v1/models");
  });

  test("a server that says nothing (a plain OpenAI-compatible endpoint): undefined", async () => {
    const llm = await startScriptedLLM();
    try {
      expect(await readServerWindow({ baseUrl: llm.url, model: "scripted-model" }, AbortSignal.timeout(5_000), 2_000)).toBeUndefined();
    } finally {
      await llm.close();
    }
  });

  test("the server's root is the base URL without /v1, under any prefix", () => {
    expect(serverRoot("http://localhost:11434/v1")).toBe("http://localhost:11434");
    expect(serverRoot("http://localhost:11434/v1/")).toBe("http://localhost:11434");
    expect(serverRoot("https://box.lan/llama/v1")).toBe("https://box.lan/llama");
    expect(serverRoot("http://localhost:8080")).toBe("http://localhost:8080");
  });
});

describe("asking safely and quickly", () => {
  test("the key goes to the base URL's origin only: a redirect elsewhere is not followed", async () => {
    const elsewhere = await serve(llamaCppRoutes({ model: "m", nCtx: 8192 }));
    const redirecting = await serve((_req, url) => (url.pathname.startsWith("/props") ? Response.redirect(`${elsewhere.origin}/props`, 302) : undefined));
    expect(await read(redirecting, "m", "sk-secret-key")).toBeUndefined();
    expect(elsewhere.requests).toEqual([]);
    // every request the configured server got carried its key
    expect(redirecting.requests.length).toBeGreaterThan(0);
    for (const r of redirecting.requests) expect(r.authorization).toBe("Bearer sk-secret-key");
  });

  test("a server that never answers costs the request timeout, no more", async () => {
    const s = await serve("hang");
    const started = performance.now();
    expect(await readServerWindow({ baseUrl: s.url, model: "m" }, AbortSignal.timeout(5_000), 300)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test("nothing is asked of api.openai.com, nor of any server when the window is configured", async () => {
    expect(await readServerWindow({ baseUrl: "https://api.openai.com/v1", model: "gpt-4o", apiKey: "sk-x" }, AbortSignal.timeout(1_000), 500)).toBeUndefined();
    const s = await serve(ollamaRoutes({ model: "m", trained: 8192, numCtx: 2048 }));
    const w = new ContextWindow({ baseUrl: s.url, model: "m", contextWindow: 16384 });
    expect(await w.refresh()).toEqual({ tokens: 16384, source: "config", from: "config" });
    expect(w.settings({ maxOutputTokens: 512, memoryFlush: false }).contextWindow).toBe(16384);
    expect(s.requests).toEqual([]);
  });
});

describe("the window in force", () => {
  test("the server's answer, as the agent's context settings read it; the default before and without one", async () => {
    const s = await serve(ollamaRoutes({ model: "qwen3:8b", trained: 40960, numCtx: 8192 }));
    const logs: string[] = [];
    const w = new ContextWindow({ baseUrl: s.url, model: "qwen3:8b" }, { log: captureLog(logs) });
    expect(w.reading).toEqual({ tokens: 32768, source: "default", from: "default" });
    expect(await w.refresh()).toEqual({ tokens: 8192, source: "server", from: "Ollama num_ctx of qwen3:8b" });
    const settings = w.settings({ maxOutputTokens: 512, memoryFlush: true, compactionModel: "small" });
    expect(settings).toMatchObject({ contextWindow: 8192, maxOutputTokens: 512, memoryFlush: true, compactionModel: "small" });
    expect(logs).toEqual(["context window 8192 tokens (Ollama num_ctx of qwen3:8b)"]);

    const silent = new ContextWindow({ baseUrl: (await serve(() => undefined)).url, model: "m" }, { log: captureLog(logs) });
    expect(await silent.refresh()).toEqual({ tokens: 32768, source: "default", from: "default" });
    expect(logs.at(-1)).toContain("set LLM_CONTEXT_WINDOW");
  });

  test("a stale answer is asked for again when a turn reads the window; a server gone quiet leaves the last answer", async () => {
    let numCtx = 8192;
    const s = await serve((req, url, body) => ollamaRoutes({ model: "m", trained: 131072, numCtx })(req, url, body));
    const w = new ContextWindow({ baseUrl: s.url, model: "m" }, { maxAgeMs: 0 });
    await w.refresh();
    const settings = w.settings({ maxOutputTokens: 512, memoryFlush: false });
    numCtx = 2048; // Ollama reloaded the model with another num_ctx
    expect(settings.contextWindow).toBe(8192); // this turn goes on with what it had…
    expect(w.asking).toBe(true); // …and the server is asked again meanwhile
    expect(await w.refresh()).toMatchObject({ tokens: 2048, source: "server" });
    expect(settings.contextWindow).toBe(2048);

    await s.close();
    expect(await w.refresh()).toMatchObject({ tokens: 2048, source: "server" });
  });

  test("fresh answers are not asked for again", async () => {
    const s = await serve(vllmRoutes({ model: "m", maxModelLen: 4096 }));
    const w = new ContextWindow({ baseUrl: s.url, model: "m" });
    await w.refresh();
    const asked = s.requests.length;
    const settings = w.settings({ maxOutputTokens: 512, memoryFlush: false });
    for (let i = 0; i < 5; i++) expect(settings.contextWindow).toBe(4096);
    expect(w.asking).toBe(false);
    expect(s.requests.length).toBe(asked);
  });
});
