// Upgrading a database whose memory predates owner numbers (migrations up to 0006): the
// full-text index is rebuilt with them, and every user finds their own documents again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryService } from "../../src/memory/service";
import { openLibsql } from "../../src/store/libsql";
import { migrations } from "../../src/store/migrations";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "memory-migration-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("0007 numbers the owners and rebuilds the index; search works per user afterwards", async () => {
  const file = join(root, "old.db");
  const old = createClient({ url: `file:${file}` });
  await old.execute("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const upTo = migrations.findIndex((m) => m.tag === "0007_memory_owner");
  expect(upTo).toBeGreaterThan(0);
  for (const m of migrations.slice(0, upTo)) {
    const statements = m.sql.split("--> statement-breakpoint").map((s) => s.trim()).filter(Boolean);
    await old.batch([...statements, { sql: "INSERT INTO __migrations VALUES (?, 0)", args: [m.tag] }], "write");
  }
  // documents as the earlier schema stored them
  for (const [user, path, text] of [
    ["alice", "notes/garden.md", "Tomatoes and basil in the south bed."],
    ["bob", "notes/garden.md", "Bob grows cucumbers and tomatoes."],
    ["bob", "notes/bikes.md", "Bob's bicycle needs a new chain."],
  ]) {
    await old.batch(
      [
        { sql: "INSERT INTO memory_documents (user_id, path, content, size, created_at, updated_at) VALUES (?, ?, ?, ?, 1, 1)", args: [user!, path!, text!, text!.length] },
        { sql: "INSERT INTO memory_chunks (document_id, user_id, seq, text) VALUES (last_insert_rowid(), ?, 0, ?)", args: [user!, text!] },
      ],
      "write",
    );
  }
  old.close();

  const d = await openLibsql(`file:${file}`);
  try {
    const owners = await d.client.execute("SELECT user_id, id FROM memory_owners ORDER BY user_id");
    expect(owners.rows.map((r) => [r.user_id, r.id])).toEqual([["alice", 1], ["bob", 2]]);
    expect(Number((await d.client.execute("SELECT count(*) FROM memory_chunks WHERE owner = 0")).rows[0]![0])).toBe(0);
    await d.client.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')");
    const memory = new MemoryService({ db: d.db });
    expect((await memory.search("alice", "tomatoes")).map((r) => r.path)).toEqual(["notes/garden.md"]);
    expect((await memory.search("alice", "tomatoes"))[0]!.snippet).toContain("basil");
    expect((await memory.search("bob", "tomatoes chain")).map((r) => r.path).sort()).toEqual(["notes/bikes.md", "notes/garden.md"]);
    expect(await memory.search("alice", "bicycle")).toEqual([]);
    // and new writes go on from there
    await memory.write("carol", "a.md", "Carol's tomatoes.");
    expect((await memory.search("carol", "tomatoes")).map((r) => r.path)).toEqual(["a.md"]);
    expect((await memory.search("alice", "tomatoes")).map((r) => r.path)).toEqual(["notes/garden.md"]);
  } finally {
    d.close();
  }
});
