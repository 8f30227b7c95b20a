// The workspace memory endpoints over real HTTP: search, tree, read, write; every 400,
// the 404, auth, and isolation between users.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../support/harness";
import { BAD_PATHS, CORPUS } from "../memory/fixtures";

let t: TestService;
let member: { token: string; user: any };
beforeAll(async () => {
  t = await startTestService();
  member = await t.createUser("member");
  for (const [path, content] of Object.entries(CORPUS)) {
    const res = await t.api("/api/memory/write", { method: "POST", json: { path, content } });
    expect(res.status).toBe(200);
  }
});
afterAll(() => t.stop());

const get = async (path: string, token?: string) => {
  const res = await t.api(path, { token });
  return { status: res.status, type: res.headers.get("content-type") ?? "", body: (await res.json()) as any };
};
const write = async (body: unknown, token?: string, raw?: string) => {
  const res = raw === undefined
    ? await t.api("/api/memory/write", { method: "POST", json: body, token })
    : await t.api("/api/memory/write", { method: "POST", body: raw, headers: { "content-type": "application/json" }, token });
  return { status: res.status, body: (await res.json()) as any };
};
const q = (s: string) => encodeURIComponent(s);
const expectInvalid = (r: { status: number; body: any }, message?: RegExp) => {
  expect(r.status).toBe(400);
  expect(r.body.error.type).toBe("invalid_request_error");
  expect(typeof r.body.error.message).toBe("string");
  if (message) expect(r.body.error.message).toMatch(message);
};
/** The caller's documents with their times: proof that nothing changed. */
const snapshot = async (token?: string) => (await get("/api/memory/tree", token)).body.documents;

describe("POST /api/memory/write and GET /api/memory/read", () => {
  test("write answers {path, size, updated_at}; read gives the content back with both times", async () => {
    const w = await write({ path: "notes/new.md", content: "Fresh note: café ☕" });
    expect(w.status).toBe(200);
    expect(w.body).toEqual({ path: "notes/new.md", size: Buffer.byteLength("Fresh note: café ☕"), updated_at: expect.any(String) });
    expect(new Date(w.body.updated_at).toISOString()).toBe(w.body.updated_at);
    const r = await get(`/api/memory/read?path=${q("notes/new.md")}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ path: "notes/new.md", content: "Fresh note: café ☕", created_at: w.body.updated_at, updated_at: w.body.updated_at, tainted: false });
  });

  test("overwriting keeps created_at and moves updated_at", async () => {
    const first = await write({ path: "notes/twice.md", content: "one" });
    await Bun.sleep(5);
    const second = await write({ path: "notes/twice.md", content: "two" });
    const r = await get(`/api/memory/read?path=${q("notes/twice.md")}`);
    expect(r.body.content).toBe("two");
    expect(r.body.created_at).toBe(first.body.updated_at);
    expect(r.body.updated_at).toBe(second.body.updated_at);
    expect(Date.parse(second.body.updated_at)).toBeGreaterThan(Date.parse(first.body.updated_at));
  });

  test("content may be empty; extra fields are ignored; any content type carrying JSON works", async () => {
    expect((await write({ path: "notes/empty.md", content: "", extra: 1 })).body.size).toBe(0);
    const res = await t.api("/api/memory/write", { method: "POST", body: JSON.stringify({ path: "notes/form.md", content: "via curl -d" }), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(200);
  });

  test("reading a missing document: 404 envelope", async () => {
    const r = await get(`/api/memory/read?path=${q("notes/nope.md")}`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: { message: "No memory document at notes/nope.md.", type: "not_found_error", code: null } });
  });

  test("read without a path, with a bad path, or with two paths: 400", async () => {
    expectInvalid(await get("/api/memory/read"), /path/);
    expectInvalid(await get("/api/memory/read?path="), /path/);
    expectInvalid(await get(`/api/memory/read?path=a.md&path=b.md`), /more than once/);
    for (const [, path] of BAD_PATHS) {
      if (typeof path !== "string" || path === "" || !path.isWellFormed()) continue;
      expectInvalid(await get(`/api/memory/read?path=${q(path)}`), /Invalid memory path/);
    }
  });

  test("every bad path is a 400 and changes nothing", async () => {
    const before = await snapshot();
    for (const [name, path] of BAD_PATHS) {
      const r = await write({ path, content: "should not be stored" });
      expectInvalid(r);
      if (name !== "not a string" && name !== "null") expect(r.body.error.code).toBe("invalid_path");
    }
    expect(await snapshot()).toEqual(before);
  });

  test("bad bodies are 400 and change nothing", async () => {
    const before = await snapshot();
    expectInvalid(await write(undefined, undefined, "{not json"), /not valid JSON/);
    expectInvalid(await write(undefined, undefined, ""), /empty/);
    expectInvalid(await write(undefined, undefined, "[1,2]"), /JSON object/);
    expectInvalid(await write(undefined, undefined, '"text"'), /JSON object/);
    expectInvalid(await write({ content: "no path" }), /`path`/);
    expectInvalid(await write({ path: "notes/x.md" }), /`content`/);
    expectInvalid(await write({ path: "notes/x.md", content: 42 }), /`content`/);
    expectInvalid(await write({ path: "notes/x.md", content: null }), /`content`/);
    expectInvalid(await write({ path: ["notes/x.md"], content: "x" }), /`path`/);
    expectInvalid(await write({ path: "notes/x.md", content: "x".repeat(1024 * 1024 + 1) }), /1 MiB/);
    expect(await snapshot()).toEqual(before);
  });

  test("1 MiB of content exactly is accepted", async () => {
    const r = await write({ path: "notes/large.md", content: "word ".repeat(1024 * 1024 / 5) + "w".repeat((1024 * 1024) % 5) });
    expect(r.status).toBe(200);
    expect(r.body.size).toBe(1024 * 1024);
  });
});

describe("GET /api/memory/tree", () => {
  test("lists {path, size, updated_at} sorted by path, the owner's identity files included", async () => {
    const { status, body } = await get("/api/memory/tree");
    expect(status).toBe(200);
    const docs = body.documents as { path: string; size: number; updated_at: string }[];
    const listed = docs.map((d) => d.path);
    expect(listed).toEqual([...listed].sort());
    for (const p of [...Object.keys(CORPUS), "AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md"]) expect(listed).toContain(p);
    const garden = docs.find((d) => d.path === "notes/garden.md")!;
    expect(garden).toEqual({ path: "notes/garden.md", size: Buffer.byteLength(CORPUS["notes/garden.md"]!), updated_at: expect.any(String) });
  });
});

describe("GET /api/memory?q=&limit=", () => {
  test("answers {results:[{path, snippet, score}]}, the most relevant first", async () => {
    const { status, type, body } = await get(`/api/memory?q=${q("tomato blight")}`);
    expect(status).toBe(200);
    expect(type).toContain("application/json");
    expect(body.results[0]).toEqual({ path: "notes/garden.md", snippet: expect.stringContaining("**blight**"), score: expect.any(Number) });
  });

  test("limit caps the results; the default is 10", async () => {
    expect((await get(`/api/memory?q=${q("the euros water morning April")}&limit=2`)).body.results.length).toBe(2);
    expect((await get(`/api/memory?q=${q("the euros water morning April")}&limit=1`)).body.results.length).toBe(1);
    for (let i = 0; i < 12; i++) await write({ path: `bulk/${i}.md`, content: `Pelican number ${i}.` });
    expect((await get(`/api/memory?q=pelican`)).body.results.length).toBe(10);
    expect((await get(`/api/memory?q=pelican&limit=100`)).body.results.length).toBe(12);
  });

  test("search syntax in q is plain text: 200, never an error", async () => {
    for (const s of ['"', "AND OR NOT", "tomato*", "(", "NEAR(a b)", "text:tomato", "^x", "-", "'; DROP TABLE x;--", "🍅"]) {
      const r = await get(`/api/memory?q=${q(s)}`);
      expect(r.status).toBe(200);
      expect(Array.isArray(r.body.results)).toBe(true);
    }
  });

  test("a missing, blank, repeated or too long q, and a bad limit, are 400", async () => {
    expectInvalid(await get("/api/memory"), /`q` is required/);
    expectInvalid(await get("/api/memory?q="), /`q` is required/);
    expectInvalid(await get(`/api/memory?q=${q("   ")}`), /`q` is required/);
    expectInvalid(await get("/api/memory?q=a&q=b"), /more than once/);
    expectInvalid(await get(`/api/memory?q=${"x".repeat(1001)}`), /longer than 1000/);
    for (const limit of ["0", "101", "-1", "1.5", "abc", "1e2", " 5", "99999"]) {
      expectInvalid(await get(`/api/memory?q=tomato&limit=${q(limit)}`), /`limit`/);
    }
    expect((await get("/api/memory?q=tomato&limit=")).status).toBe(200);
  });
});

describe("auth and isolation", () => {
  test("every memory route needs a token (plain-text 401)", async () => {
    for (const [method, path] of [["GET", "/api/memory?q=x"], ["GET", "/api/memory/tree"], ["GET", "/api/memory/read?path=a.md"], ["POST", "/api/memory/write"]] as const) {
      const res = await t.api(path, { method, token: null, ...(method === "POST" ? { json: { path: "a.md", content: "x" } } : {}) });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe("Invalid or missing auth token");
    }
    expect((await get(`/api/memory/read?path=a.md`)).status).toBe(404); // nothing was written
  });

  test("a member sees only their own documents; the same path is two documents", async () => {
    const token = member.token;
    // a new member starts with the default identity files only
    expect((await get("/api/memory/tree", token)).body.documents.map((d: any) => d.path)).toEqual(["AGENTS.md", "IDENTITY.md", "SOUL.md", "USER.md"]);
    expect((await get(`/api/memory?q=${q("tomato blight")}`, token)).body.results).toEqual([]);
    expect((await get(`/api/memory/read?path=${q("notes/garden.md")}`, token)).status).toBe(404);

    expect((await write({ path: "notes/garden.md", content: "Member's garden: only cacti, no tomato." }, token)).status).toBe(200);
    expect((await write({ path: "private/diary.md", content: "Member's secret flamingo diary." }, token)).status).toBe(200);
    expect((await get(`/api/memory/read?path=${q("notes/garden.md")}`, token)).body.content).toBe("Member's garden: only cacti, no tomato.");
    expect((await get(`/api/memory/read?path=${q("notes/garden.md")}`)).body.content).toBe(CORPUS["notes/garden.md"]);

    expect((await get(`/api/memory?q=flamingo`)).body.results).toEqual([]);
    expect((await get(`/api/memory/read?path=${q("private/diary.md")}`)).status).toBe(404);
    expect((await get("/api/memory/tree")).body.documents.map((d: any) => d.path)).not.toContain("private/diary.md");
    const mine = (await get(`/api/memory?q=tomato`, token)).body.results;
    expect(mine.map((r: any) => r.path)).toEqual(["notes/garden.md"]);
    expect(mine[0].snippet).toContain("cacti");
  });
});

describe("DELETE /api/memory?path=", () => {
  const del = (path: string | null, token?: string) =>
    t.api(path === null ? "/api/memory" : `/api/memory?path=${q(path)}`, { method: "DELETE", token });

  test("204; the document is gone from read, tree and search; a second delete is the 404 envelope", async () => {
    expect((await write({ path: "notes/drop-me.md", content: "A note about zeppelins." })).status).toBe(200);
    expect((await get(`/api/memory?q=zeppelins`)).body.results.map((r: any) => r.path)).toEqual(["notes/drop-me.md"]);
    const res = await del("notes/drop-me.md");
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await get(`/api/memory/read?path=${q("notes/drop-me.md")}`)).status).toBe(404);
    expect((await get("/api/memory/tree")).body.documents.map((d: any) => d.path)).not.toContain("notes/drop-me.md");
    expect((await get(`/api/memory?q=zeppelins`)).body.results).toEqual([]);
    const again = await del("notes/drop-me.md");
    expect(again.status).toBe(404);
    expect(((await again.json()) as any).error.type).toBe("not_found_error");
  });

  test("a missing, repeated or bad path is a 400 and deletes nothing", async () => {
    const before = await snapshot();
    const bad = BAD_PATHS.flatMap(([, p]) => (typeof p === "string" && p.isWellFormed() ? [p] : []));
    for (const res of [await del(null), await t.api("/api/memory?path=a.md&path=b.md", { method: "DELETE" }), ...(await Promise.all(bad.map((p) => del(p))))]) {
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.code).toBe("invalid_path");
    }
    expect(await snapshot()).toEqual(before);
  });

  test("only the caller's own document: another user's path is a 404 and stays; no token is the plain-text 401", async () => {
    expect((await write({ path: "notes/shared-name.md", content: "owner's" })).status).toBe(200);
    expect((await del("notes/shared-name.md", member.token)).status).toBe(404);
    expect((await get(`/api/memory/read?path=${q("notes/shared-name.md")}`)).body.content).toBe("owner's");
    const anon = await del("notes/shared-name.md", null as unknown as string);
    expect(anon.status).toBe(401);
    expect(await anon.text()).toBe("Invalid or missing auth token");
  });
});
