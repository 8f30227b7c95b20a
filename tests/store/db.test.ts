// The store: migrations (once, idempotent), WAL on a file database, and atomic turn commits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { commitTurn, getGate, getResponse, getThread, loadItems, type TurnRecord } from "../../src/store/conversations";
import { openLibsql, type LibsqlDatabase } from "../../src/store/libsql";
import { migrations } from "../../src/store/migrations";
import { createUserWithToken, ensureOwner, findUserByTokenHash, OWNER_ID } from "../../src/store/users";

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "db-test-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const freshFile = () => join(root, `db-${++n}.db`);
const rows = async (d: LibsqlDatabase, sql: string, args: any[] = []) => (await d.client.execute({ sql, args })).rows;
const count = async (d: LibsqlDatabase, sql: string, args: any[] = []) => Number((await rows(d, sql, args))[0]![0]);

describe("migrations", () => {
  test("run once on a new database and create the schema", async () => {
    const file = freshFile();
    const d = await openLibsql(`file:${file}`);
    try {
      const applied = await rows(d, "SELECT tag FROM __migrations ORDER BY tag");
      expect(applied.map((r) => r.tag)).toEqual(migrations.map((m) => m.tag));
      const tables = (await rows(d, "SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => String(r.name));
      for (const t of ["users", "tokens", "threads", "responses", "items", "gates"]) expect(tables).toContain(t);
    } finally {
      d.close();
    }
  });

  test("are idempotent on reopen: nothing re-applied, data kept", async () => {
    const file = freshFile();
    const first = await openLibsql(`file:${file}`);
    await ensureOwner(first.db);
    await createUserWithToken(first.db, { id: "u1", role: "member", email: "a@example.com" }, { id: "t1", hash: "h1" });
    const appliedAt = (await rows(first, "SELECT tag, applied_at FROM __migrations ORDER BY tag")).map((r) => ({ ...r }));
    first.close();

    for (let i = 0; i < 3; i++) {
      const again = await openLibsql(`file:${file}`);
      try {
        const now = (await rows(again, "SELECT tag, applied_at FROM __migrations ORDER BY tag")).map((r) => ({ ...r }));
        expect(now).toEqual(appliedAt);
        expect(await count(again, "SELECT count(*) FROM users")).toBe(2);
        expect((await findUserByTokenHash(again.db, "h1"))?.email).toBe("a@example.com");
        await ensureOwner(again.db); // also idempotent
        expect(await count(again, "SELECT count(*) FROM users WHERE id = ?", [OWNER_ID])).toBe(1);
      } finally {
        again.close();
      }
    }
  });

  test("an in-memory database migrates too", async () => {
    const d = await openLibsql(":memory:");
    try {
      expect(await count(d, "SELECT count(*) FROM __migrations")).toBe(migrations.length);
    } finally {
      d.close();
    }
  });
});

describe("file database settings", () => {
  test("WAL journal mode, persisted in the file; foreign keys on", async () => {
    const file = freshFile();
    const d = await openLibsql(`file:${file}`);
    try {
      expect(String((await rows(d, "PRAGMA journal_mode"))[0]![0]).toLowerCase()).toBe("wal");
      expect(Number((await rows(d, "PRAGMA foreign_keys"))[0]![0])).toBe(1);
      await ensureOwner(d.db);
      expect(existsSync(`${file}-wal`)).toBe(true);
    } finally {
      d.close();
    }
    // WAL is a property of the file: a plain second client sees it without setting it
    const { createClient } = await import("@libsql/client");
    const plain = createClient({ url: `file:${file}` });
    try {
      expect(String((await plain.execute("PRAGMA journal_mode")).rows[0]![0]).toLowerCase()).toBe("wal");
    } finally {
      plain.close();
    }
  });

  test("tokens reference users: a token for a missing user is refused", async () => {
    const d = await openLibsql(`file:${freshFile()}`);
    try {
      await expect(d.client.execute("INSERT INTO tokens (id, user_id, hash, created_at) VALUES ('t', 'ghost', 'h', 'x')")).rejects.toThrow();
      expect(await count(d, "SELECT count(*) FROM tokens")).toBe(0);
    } finally {
      d.close();
    }
  });
});

describe("commitTurn is atomic", () => {
  let d: LibsqlDatabase;
  let file: string;
  beforeAll(async () => {
    file = freshFile();
    d = await openLibsql(`file:${file}`);
  });
  afterAll(() => d.close());

  const turn = (threadId: string, responseId: string, isNew: boolean, itemIds: string[], seq0 = 0, gate = false): TurnRecord => ({
    thread: { id: threadId, userId: "u1", isNew, tools: null },
    response: {
      id: responseId,
      status: "completed",
      meta: null,
      model: "m",
      error: null,
      inputTokens: 1,
      outputTokens: 2,
      cachedTokens: 0,
      reasoningTokens: 0,
      costMicroUsd: 0,
      createdAt: 1_000 + seq0,
    },
    items: itemIds.map((id, i) => ({
      seq: seq0 + i,
      item: { type: "message", id, role: i % 2 ? "assistant" : "user", content: `text ${id}` },
      input: i % 2 === 0,
    })),
    gate: gate ? { kind: "external_tool", callId: "call_1", responseId, pending: [] } : null,
  });

  test("a clean turn writes thread, response, items and gate together", async () => {
    await commitTurn(d.db, turn("th-ok", "resp-ok", true, ["item_a", "item_b"], 0, true));
    expect(await getThread(d.db, "th-ok")).toBeDefined();
    expect((await getResponse(d.db, "resp-ok"))?.status).toBe("completed");
    expect((await loadItems(d.db, "th-ok")).map((i) => i.id)).toEqual(["item_a", "item_b"]);
    expect((await getGate(d.db, "th-ok"))?.callId).toBe("call_1");
  });

  test("a duplicate item id inside one turn fails it and leaves no thread, response or item", async () => {
    await expect(commitTurn(d.db, turn("th-dup", "resp-dup", true, ["item_x", "item_y", "item_x"]))).rejects.toThrow();
    expect(await getThread(d.db, "th-dup")).toBeUndefined();
    expect(await getResponse(d.db, "resp-dup")).toBeUndefined();
    expect(Number((await d.client.execute("SELECT count(*) FROM items WHERE id IN ('item_x', 'item_y')")).rows[0]![0])).toBe(0);
    expect(Number((await d.client.execute("SELECT count(*) FROM threads WHERE id = 'th-dup'")).rows[0]![0])).toBe(0);
  });

  test("a follow-up turn that clashes with a stored item changes nothing of the thread", async () => {
    const before = await getThread(d.db, "th-ok");
    // item_a already exists: the whole follow-up must roll back, including the gate delete
    await expect(commitTurn(d.db, turn("th-ok", "resp-next", false, ["item_c", "item_a"], 2))).rejects.toThrow();
    expect(await getResponse(d.db, "resp-next")).toBeUndefined();
    expect(await getThread(d.db, "th-ok")).toEqual(before!);
    expect((await loadItems(d.db, "th-ok")).map((i) => i.id)).toEqual(["item_a", "item_b"]);
    expect((await getGate(d.db, "th-ok"))?.callId).toBe("call_1");
  });

  test("a duplicate response id fails the turn without writing its items", async () => {
    await expect(commitTurn(d.db, turn("th-other", "resp-ok", true, ["item_z"]))).rejects.toThrow();
    expect(await getThread(d.db, "th-other")).toBeUndefined();
    expect(Number((await d.client.execute("SELECT count(*) FROM items WHERE id = 'item_z'")).rows[0]![0])).toBe(0);
  });

  test("after failed commits the next good turn on the thread goes through", async () => {
    await commitTurn(d.db, turn("th-ok", "resp-next", false, ["item_c", "item_d"], 2));
    expect((await loadItems(d.db, "th-ok")).map((i) => i.id)).toEqual(["item_a", "item_b", "item_c", "item_d"]);
    expect(await getGate(d.db, "th-ok")).toBeUndefined();
    expect((await getThread(d.db, "th-ok"))!.updatedAt).toBe(1_002);
  });
  test("turns committed together are written in one transaction, and one at fault fails alone", async () => {
    // another connection's data_version counts the transactions this one commits
    const watcher = new Database(file);
    const commits = () => (watcher.prepare("PRAGMA data_version").get() as { data_version: number }).data_version;
    try {
      const before = commits();
      await Promise.all([
        commitTurn(d.db, turn("th-g1", "resp-g1", true, ["item_g1a", "item_g1b"])),
        commitTurn(d.db, turn("th-g2", "resp-g2", true, ["item_g2a", "item_g2b"], 0, true)),
        commitTurn(d.db, turn("th-g3", "resp-g3", true, ["item_g3a"])),
      ]);
      expect(commits() - before).toBe(1);
      expect((await loadItems(d.db, "th-g2")).map((i) => i.id)).toEqual(["item_g2a", "item_g2b"]);
      expect((await getGate(d.db, "th-g2"))?.callId).toBe("call_1");

      const [good, clash, alsoGood] = await Promise.allSettled([
        commitTurn(d.db, turn("th-g4", "resp-g4", true, ["item_g4a"])),
        commitTurn(d.db, turn("th-g5", "resp-g5", true, ["item_g1a"])),
        commitTurn(d.db, turn("th-g6", "resp-g6", true, ["item_g6a"])),
      ]);
      expect([good.status, clash.status, alsoGood.status]).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((await loadItems(d.db, "th-g4")).map((i) => i.id)).toEqual(["item_g4a"]);
      expect(await getThread(d.db, "th-g5")).toBeUndefined();
      expect((await loadItems(d.db, "th-g6")).map((i) => i.id)).toEqual(["item_g6a"]);
    } finally {
      watcher.close();
    }
  });
});
