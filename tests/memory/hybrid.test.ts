// Hybrid search: vectors from the embedding model (the scripted LLM's deterministic 8-dim
// /v1/embeddings) in libSQL vector columns, fused with full-text by reciprocal rank fusion.
// An embedding failure never fails a write; vectors written without one are filled in later.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAiLlm } from "../../src/llm/openai";
import { MemoryService } from "../../src/memory/service";
import { openLibsql, type LibsqlDatabase } from "../../src/store/libsql";
import { captureLog } from "../support/log";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { startTestService, type TestService } from "../support/harness";
import { CORPUS } from "./fixtures";

let root: string;
let llm: ScriptedLLM;
let n = 0;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memory-hybrid-"));
  llm = await startScriptedLLM();
});
afterAll(async () => {
  await llm.close();
  rmSync(root, { recursive: true, force: true });
});

async function open(embeddingModel: string | undefined, baseUrl = llm.url) {
  const d = await openLibsql(`file:${join(root, `db-${++n}.db`)}`);
  const logs: string[] = [];
  const model = openAiLlm({ baseUrl, apiKey: "k", model: "m", embeddingModel });
  return { d, logs, memory: new MemoryService({ db: d.db, llm: model, log: captureLog(logs) }) };
}
const count = async (d: LibsqlDatabase, sql: string, args: any[] = []) => Number((await d.client.execute({ sql, args })).rows[0]![0]);
const embeddingCalls = () => llm.requests.filter((r) => r.path === "/v1/embeddings");

describe("with an embedding model", () => {
  let d: LibsqlDatabase;
  let memory: MemoryService;
  beforeAll(async () => {
    ({ d, memory } = await open("emb-model"));
    for (const [path, content] of Object.entries(CORPUS)) await memory.write("u", path, content);
  });
  afterAll(() => d.close());

  test("is hybrid; every chunk gets a vector in memory_vectors_8 (the table made when the dimensions were known)", async () => {
    expect(memory.mode).toBe("hybrid");
    expect(memory.embeddingModel).toBe("emb-model");
    const chunks = await count(d, "SELECT count(*) FROM memory_chunks");
    expect(chunks).toBeGreaterThan(8);
    expect(await count(d, "SELECT count(*) FROM memory_vectors_8 WHERE model = 'emb-model'")).toBe(chunks);
    const call = embeddingCalls().at(-1)!;
    expect(call.body.model).toBe("emb-model");
    expect(Array.isArray(call.body.input)).toBe(true);
  });

  test("a document found by its words comes first; fused scores descend", async () => {
    const results = await memory.search("u", "ryokan Arashiyama");
    expect(results[0]!.path).toBe("travel/kyoto-2026.md");
    expect(results[0]!.snippet).toContain("**Arashiyama**");
    const scores = results.map((r) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // in both rankings: more than a first place in one alone
    expect(results[0]!.score).toBeGreaterThan(1 / 61);
    // the vector ranking brings in documents without the words, after it
    expect(results.length).toBeGreaterThan(1);
  });

  test("a document only the vectors find is a result too, with the start of its text as snippet", async () => {
    // no letters or digits: nothing for full-text search, but the very same embedding
    await memory.write("u", "doodles/line.md", "~~~ —— ~~~");
    const results = await memory.search("u", "~~~ —— ~~~");
    expect(results[0]).toEqual({ path: "doodles/line.md", snippet: "~~~ —— ~~~", score: expect.any(Number), tainted: false });
  });

  test("overwrite and delete take the vectors along", async () => {
    await memory.write("u", "tmp/v.md", "First version.\n\n" + "More words here. ".repeat(100));
    const id = async () => Number((await d.client.execute("SELECT id FROM memory_documents WHERE path = 'tmp/v.md'")).rows[0]![0]);
    const vectorsOf = async () => count(d, "SELECT count(*) FROM memory_vectors_8 v JOIN memory_chunks c ON c.id = v.chunk_id WHERE c.document_id = ?", [await id()]);
    expect(await vectorsOf()).toBe(await count(d, "SELECT count(*) FROM memory_chunks WHERE document_id = ?", [await id()]));
    await memory.write("u", "tmp/v.md", "Second.");
    expect(await vectorsOf()).toBe(1);
    await memory.delete("u", "tmp/v.md");
    const orphans = await count(d, "SELECT count(*) FROM memory_vectors_8 v LEFT JOIN memory_chunks c ON c.id = v.chunk_id WHERE c.id IS NULL");
    expect(orphans).toBe(0);
    expect(await count(d, "SELECT count(*) FROM memory_vectors_8")).toBe(await count(d, "SELECT count(*) FROM memory_chunks"));
  });

  test("vector search never crosses users", async () => {
    const other = await memory.search("someone-else", "~~~ —— ~~~");
    expect(other.map((r) => r.path)).not.toContain("doodles/line.md");
    await memory.write("someone-else", "mine.md", "Only mine.");
    for (const r of await memory.search("someone-else", "travel Kyoto tomatoes ~~~")) {
      expect(["mine.md", "AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md"]).toContain(r.path);
    }
  });
});

describe("when embedding fails", () => {
  test("the write still happens, is logged, and full-text search finds it", async () => {
    const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const url = `http://127.0.0.1:${dead.port}/v1`;
    await dead.stop(true);
    const { d, memory, logs } = await open("emb-model", url);
    try {
      const saved = await memory.write("u", "notes/garden.md", CORPUS["notes/garden.md"]!);
      expect(saved.size).toBeGreaterThan(0);
      expect(logs.some((l) => /embedding notes\/garden\.md .* failed/.test(l))).toBe(true);
      expect((await memory.search("u", "tomato blight"))[0]!.path).toBe("notes/garden.md");
      expect(logs.some((l) => l.includes("search query failed"))).toBe(true);
      expect(await count(d, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'memory_vectors_%'")).toBe(0);
    } finally {
      d.close();
    }
  });

  test("an endpoint error (HTTP 4xx/5xx) is handled the same way", async () => {
    const failing = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ error: { message: "no" } }, { status: 500 }) });
    const { d, memory, logs } = await open("emb-model", `http://127.0.0.1:${failing.port}/v1`);
    try {
      await memory.write("u", "a.md", "Alpha beta.");
      expect((await memory.search("u", "alpha"))[0]!.path).toBe("a.md");
      expect(logs.length).toBeGreaterThan(0);
    } finally {
      d.close();
      await failing.stop(true);
    }
  });
});

describe("vectors written without a model are filled in later", () => {
  test("fillVectors embeds every chunk that has none", async () => {
    const file = join(root, "fill.db");
    const first = await openLibsql(`file:${file}`);
    const plain = new MemoryService({ db: first.db });
    expect(plain.mode).toBe("full-text");
    for (const [path, content] of Object.entries(CORPUS)) await plain.write("u", path, content);
    first.close();

    const d = await openLibsql(`file:${file}`);
    try {
      const memory = new MemoryService({ db: d.db, llm: openAiLlm({ baseUrl: llm.url, apiKey: "k", model: "m", embeddingModel: "emb-model" }) });
      const chunks = await count(d, "SELECT count(*) FROM memory_chunks");
      expect(await memory.fillVectors()).toBe(chunks);
      expect(await count(d, "SELECT count(*) FROM memory_vectors_8")).toBe(chunks);
      expect(await memory.fillVectors()).toBe(0); // nothing left
      // a later start (a new service) knows the model's table and embeds nothing again
      const calls = embeddingCalls().length;
      const again = new MemoryService({ db: d.db, llm: openAiLlm({ baseUrl: llm.url, apiKey: "k", model: "m", embeddingModel: "emb-model" }) });
      expect(await again.fillVectors()).toBe(0);
      expect(embeddingCalls().length).toBe(calls);
    } finally {
      d.close();
    }
  });
});

describe("through the service (LLM_EMBEDDING_MODEL)", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { LLM_EMBEDDING_MODEL: "scripted-embed" } });
  });
  afterAll(() => t.stop());

  test("status says hybrid; writes embed through the configured endpoint; search fuses", async () => {
    const status = (await (await t.api("/api/status")).json()) as any;
    expect(status.memory).toEqual({ search: "hybrid", embedding_model: "scripted-embed" });
    const res = await t.api("/api/memory/write", { method: "POST", json: { path: "notes/garden.md", content: CORPUS["notes/garden.md"] } });
    expect(res.status).toBe(200);
    expect(t.llm.requests.some((r) => r.path === "/v1/embeddings" && r.body.model === "scripted-embed")).toBe(true);
    const search = (await (await t.api("/api/memory?q=tomato%20blight")).json()) as any;
    expect(search.results[0].path).toBe("notes/garden.md");
  });
});
