// Workspace memory on a real database file: full-text ranking (FTS5, BM25), query escaping,
// per-user isolation, and the index kept in step with every write, overwrite and delete.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InvalidRequest } from "../../src/errors";
import { MemoryService } from "../../src/memory/service";
import { openLibsql, type LibsqlDatabase } from "../../src/store/libsql";
import { CORPUS } from "./fixtures";

let root: string;
let d: LibsqlDatabase;
let memory: MemoryService;
const A = "user-a";
const B = "user-b";

const count = async (sql: string, args: any[] = []) => Number((await d.client.execute({ sql, args })).rows[0]![0]);
/** FTS5's own check that the index matches the chunk table it indexes. */
const integrityCheck = () => d.client.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')");
const paths = async (user: string, q: string, limit?: number) => (await memory.search(user, q, limit)).map((r) => r.path);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memory-test-"));
  d = await openLibsql(`file:${join(root, "memory.db")}`);
  memory = new MemoryService({ db: d.db });
  for (const [path, content] of Object.entries(CORPUS)) await memory.write(A, path, content);
});
afterAll(() => {
  d.close();
  rmSync(root, { recursive: true, force: true });
});

describe("full-text search", () => {
  test.each([
    ["tomato blight", "notes/garden.md"],
    ["how often should I feed the sourdough starter?", "notes/sourdough.md"],
    ["ryokan Arashiyama", "travel/kyoto-2026.md"],
    ["what does the accountant need for the tax refund", "finance/taxes-2025.md"],
    ["checkout latency redis cache", "work/incident-2026-03-02.md"],
    ["Marta birthday present", "people/marta.md"],
    ["knee pain physiotherapist", "health/running.md"],
    ["when does the plumber come", "home/renovation.md"],
  ])("%p finds %p first", async (q, best) => {
    expect((await paths(A, q))[0]).toBe(best);
  });

  test("stemming: other forms of a word match (porter)", async () => {
    expect((await paths(A, "watering"))[0]).toBe("notes/garden.md"); // "water"
    expect(await paths(A, "booking flights")).toContain("travel/kyoto-2026.md"); // "booked", "Flights"
    expect((await paths(A, "runs"))[0]).toBe("health/running.md");
  });

  test("results: path, a snippet with the matched words in bold, a score; best first; one per document", async () => {
    const results = await memory.search(A, "euros receipt");
    expect(results.length).toBeGreaterThanOrEqual(2);
    for (const r of results) {
      expect(Object.keys(r).sort()).toEqual(["path", "score", "snippet", "tainted"]);
      expect(typeof r.score).toBe("number");
      expect(r.snippet).not.toContain("\n");
    }
    expect(results[0]!.path).toBe("finance/taxes-2025.md");
    expect(results[0]!.snippet).toMatch(/\*\*receipts?\*\*/i);
    const scores = results.map((r) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(new Set(results.map((r) => r.path)).size).toBe(results.length);
  });

  test("documents with every word rank above those with only some", async () => {
    // "euros" is in three documents, "deposit" only in the renovation one
    const results = await memory.search(A, "euros deposit");
    expect(results[0]!.path).toBe("home/renovation.md");
    expect(results.map((r) => r.path)).toContain("finance/taxes-2025.md");
    expect(Math.floor(results[0]!.score)).toBe(2);
    expect(Math.floor(results.at(-1)!.score)).toBe(1);
  });

  test("a word that occurs nowhere does not hide the documents with the others", async () => {
    expect((await paths(A, "tomato zeppelin"))[0]).toBe("notes/garden.md");
  });

  test("limit caps the number of documents", async () => {
    expect((await memory.search(A, "the euros water morning", 2)).length).toBe(2);
    expect((await memory.search(A, "euros", 1)).length).toBe(1);
  });

  test("nothing matching: an empty list", async () => {
    expect(await memory.search(A, "zeppelin")).toEqual([]);
  });

  test("FTS5 syntax typed by a user is plain text, never an error", async () => {
    const queries = [
      '"', '""', "'", "tomato\"", '"unbalanced quote', "AND", "OR NOT", "tomato AND", "NOT tomato", "(", ")", "((tomato",
      "tomato*", "*", "^tomato", "text:tomato", "{text}: tomato", "NEAR(tomato blight, 2)", "tomato + blight", "-tomato",
      "tomato OR", "a:b:c", "🍅", "'; DROP TABLE memory_documents; --", "\\", "%", "_", "tomato\u0000blight", "e-mail",
    ];
    for (const q of queries) {
      const results = await memory.search(A, q);
      expect(Array.isArray(results)).toBe(true);
    }
    expect((await paths(A, "tomatoes*"))[0]).toBe("notes/garden.md");
    expect((await paths(A, '"early blight" (garden)'))[0]).toBe("notes/garden.md");
    expect(await count("SELECT count(*) FROM memory_documents WHERE user_id = ?", [A])).toBeGreaterThanOrEqual(8);
  });

  test("a query of punctuation only finds nothing", async () => {
    expect(await memory.search(A, "?! ... ---")).toEqual([]);
  });

  test("only common words: they are searched rather than dropped", async () => {
    expect((await memory.search(A, "the")).length).toBeGreaterThan(0);
  });

  test("a bad query or limit is refused", async () => {
    for (const q of ["", "   ", "x".repeat(1001), 42 as unknown as string, undefined as unknown as string]) {
      await expect(memory.search(A, q)).rejects.toBeInstanceOf(InvalidRequest);
    }
    for (const limit of [0, -1, 101, 1.5, NaN]) await expect(memory.search(A, "tomato", limit)).rejects.toBeInstanceOf(InvalidRequest);
  });
});

describe("isolation between users", () => {
  test("search, read and tree never cross users", async () => {
    await memory.write(B, "notes/b-only.md", "The tomatoes of user B are secret heirloom tomatoes.");
    await memory.write(B, "notes/garden.md", "User B's own garden page: cucumbers only.");
    const forA = await memory.search(A, "tomatoes");
    expect(forA.map((r) => r.path)).not.toContain("notes/b-only.md");
    expect(forA.every((r) => !r.snippet.includes("heirloom"))).toBe(true);
    expect((await memory.search(B, "tomatoes")).map((r) => r.path)).toEqual(["notes/b-only.md"]);
    expect((await memory.search(B, "blight"))).toEqual([]);
    expect((await memory.read(A, "notes/garden.md"))!.content).toBe(CORPUS["notes/garden.md"]!);
    expect((await memory.read(B, "notes/garden.md"))!.content).toBe("User B's own garden page: cucumbers only.");
    expect(await memory.read(A, "notes/b-only.md")).toBeUndefined();
    expect((await memory.tree(A)).map((e) => e.path)).not.toContain("notes/b-only.md");
  });
});

describe("a small user among big ones", () => {
  test("is not crowded out of their own results by other users' better matches", async () => {
    // user A has 30 documents full of "pelican"; B has one that mentions it once
    for (let i = 0; i < 30; i++) await memory.write(A, `birds/pelican-${i}.md`, `Pelican ${i}: pelican, pelican, pelican.`);
    await memory.write(B, "notes/zoo.md", "At the zoo we saw one pelican among many other birds and a long walk.");
    expect((await memory.search(B, "pelican")).map((r) => r.path)).toEqual(["notes/zoo.md"]);
    // with limit 1 the first, wide ranking holds only A's chunks: the per-user query answers
    expect((await memory.search(B, "pelican", 1)).map((r) => r.path)).toEqual(["notes/zoo.md"]);
    expect((await memory.search(A, "pelican", 100)).length).toBe(30);
    expect((await memory.search(A, "pelican zoo", 100)).map((r) => r.path)).not.toContain("notes/zoo.md");
  });

  test("the owner numbers in the index are not searchable text", async () => {
    await memory.write("digitless", "words.md", "Only words here, not a single digit.");
    const owner = (await d.client.execute("SELECT id FROM memory_owners WHERE user_id = 'digitless'")).rows[0]!.id;
    expect(await memory.search("digitless", String(owner))).toEqual([]);
    expect((await memory.search("digitless", "single digit")).map((r) => r.path)).toEqual(["words.md"]);
  });
});

describe("the index follows every change", () => {
  test("overwrite: old words are gone, new words are found, created time kept", async () => {
    const first = await memory.write(A, "notes/animals.md", "The zebra at the zoo.\n\n" + "Zebra stripes. ".repeat(120));
    const before = await memory.read(A, "notes/animals.md");
    expect(await paths(A, "zebra")).toEqual(["notes/animals.md"]);
    await Bun.sleep(5);
    const second = await memory.write(A, "notes/animals.md", "A giraffe now.");
    expect(await paths(A, "zebra")).toEqual([]);
    expect(await paths(A, "giraffe")).toEqual(["notes/animals.md"]);
    const after = await memory.read(A, "notes/animals.md");
    expect(after!.createdAt).toBe(before!.createdAt);
    expect(after!.updatedAt).toBeGreaterThan(first.updatedAt);
    expect(second.size).toBe(14);
    await integrityCheck();
  });

  test("chunks and index rows match the documents exactly", async () => {
    const chunks = await count("SELECT count(*) FROM memory_chunks");
    const indexed = await count("SELECT count(*) FROM memory_fts_docsize");
    expect(indexed).toBe(chunks);
    await integrityCheck();
  });

  test("delete: gone from read, tree and search; deleting again says so", async () => {
    await memory.write(A, "tmp/scratch.md", "A quokka was here.");
    expect(await paths(A, "quokka")).toEqual(["tmp/scratch.md"]);
    expect(await memory.delete(A, "tmp/scratch.md")).toBe(true);
    expect(await paths(A, "quokka")).toEqual([]);
    expect(await memory.read(A, "tmp/scratch.md")).toBeUndefined();
    expect((await memory.tree(A)).map((e) => e.path)).not.toContain("tmp/scratch.md");
    expect(await memory.delete(A, "tmp/scratch.md")).toBe(false);
    await integrityCheck();
  });

  test("an empty document exists but has nothing to find", async () => {
    await memory.write(A, "empty.md", "");
    expect((await memory.read(A, "empty.md"))!.content).toBe("");
    expect((await memory.tree(A)).find((e) => e.path === "empty.md")!.size).toBe(0);
    await integrityCheck();
  });

  test("writes of one path at the same time leave one consistent document", async () => {
    await Promise.all(Array.from({ length: 8 }, (_, i) => memory.write(A, "race.md", `version ${i} ` + `word${i} `.repeat(200))));
    const final = (await memory.read(A, "race.md"))!.content;
    const winner = /^version (\d)/.exec(final)![1];
    for (let i = 0; i < 8; i++) expect(await paths(A, `word${i}`)).toEqual(String(i) === winner ? ["race.md"] : []);
    await integrityCheck();
  });

  test("size is counted in UTF-8 bytes", async () => {
    expect((await memory.write(A, "utf8.md", "é🍅")).size).toBe(6);
  });
});

describe("a new user", () => {
  test("gets the identity files on first use, and only once", async () => {
    const tree = await memory.tree("newcomer");
    expect(tree.map((e) => e.path)).toEqual(["AGENTS.md", "IDENTITY.md", "SOUL.md", "USER.md"]);
    await memory.write("newcomer", "SOUL.md", "Changed.");
    expect((await memory.identity("newcomer")).find((doc) => doc.path === "SOUL.md")!.content).toBe("Changed.");
  });

  test("with all identity files deleted, they come back from the defaults", async () => {
    for (const p of ["AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md"]) await memory.delete("newcomer", p);
    const docs = await memory.identity("newcomer");
    expect(docs.map((doc) => doc.path).sort()).toEqual(["AGENTS.md", "IDENTITY.md", "SOUL.md", "USER.md"]);
    expect(docs.find((doc) => doc.path === "SOUL.md")!.content).not.toBe("Changed.");
  });
});
