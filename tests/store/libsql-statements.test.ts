// Prepared statements are kept per connection (src/store/libsql-statements.ts): the same SQL
// is prepared once, a statement that failed is made again, and a connection goes on
// committing after a failure as it did without the cache.
import { afterAll, expect, test } from "bun:test";
import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keepPreparedStatements } from "../../src/store/libsql-statements";
import { openLibsql } from "../../src/store/libsql";

const dir = mkdtempSync(join(tmpdir(), "statements-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
keepPreparedStatements();

test("the same SQL on one connection is one statement; on another connection, its own", () => {
  const a = new Database(join(dir, "a.db"));
  const b = new Database(join(dir, "a.db"));
  expect(a.prepare("SELECT 1 AS one")).toBe(a.prepare("SELECT 1 AS one"));
  expect(a.prepare("SELECT 1 AS one")).not.toBe(b.prepare("SELECT 1 AS one"));
  expect(a.prepare("SELECT 2 AS two")).not.toBe(a.prepare("SELECT 1 AS one"));
  a.close();
  b.close();
});

test("a statement that failed is prepared anew, and the connection still commits", () => {
  const db = new Database(join(dir, "b.db"));
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
  const insert = "INSERT INTO t (k) VALUES (?)";
  const first = db.prepare(insert);
  first.run("x");
  expect(() => db.prepare(insert).run("x")).toThrow(/UNIQUE/);
  expect(db.prepare(insert)).not.toBe(first);
  db.prepare("BEGIN").run();
  db.prepare(insert).run("y");
  db.prepare("COMMIT").run();
  expect((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(2);
  db.close();
});

test("through the client: a write refused by a constraint leaves later batches committed", async () => {
  const store = await openLibsql(`file:${join(dir, "c.db")}`);
  await store.client.execute("CREATE TABLE t (k TEXT PRIMARY KEY)");
  await store.client.batch([{ sql: "INSERT INTO t (k) VALUES (?)", args: ["x"] }], "write");
  await expect(store.client.batch([{ sql: "INSERT INTO t (k) VALUES (?)", args: ["x"] }], "write")).rejects.toThrow(/UNIQUE/);
  for (const k of ["y", "z"]) await store.client.batch([{ sql: "INSERT INTO t (k) VALUES (?)", args: [k] }], "write");
  await store.close();
  const again = await openLibsql(`file:${join(dir, "c.db")}`);
  expect(Number((await again.client.execute("SELECT count(*) AS n FROM t")).rows[0]!.n)).toBe(3);
  await again.close();
});

test("a kept statement that returns no rows refuses raw() with the same error each time; one that returns rows takes it", async () => {
  const db = new Database(join(dir, "raw.db"));
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
  const insert = db.prepare("INSERT INTO t (k) VALUES (?)");
  let first: unknown;
  try {
    insert.raw(true);
  } catch (e) {
    first = e;
  }
  expect(first).toBeInstanceOf(Error);
  let again: unknown;
  try {
    db.prepare("INSERT INTO t (k) VALUES (?)").raw(true);
  } catch (e) {
    again = e;
  }
  expect(again).toBe(first);
  insert.run("a");
  const select = db.prepare("SELECT k FROM t");
  expect(select.raw(true).all()).toEqual([["a"]]);
  db.close();
  // through @libsql/client, which asks raw() of every statement: writes and reads as before
  const { client } = await openLibsql(`file:${join(dir, "raw-client.db")}`);
  await client.batch(["CREATE TABLE u (k TEXT PRIMARY KEY)", { sql: "INSERT INTO u (k) VALUES (?)", args: ["b"] }], "write");
  await client.execute({ sql: "INSERT INTO u (k) VALUES (?)", args: ["c"] });
  expect((await client.execute("SELECT k FROM u ORDER BY k")).rows.map((r) => r.k)).toEqual(["b", "c"]);
  client.close();
});
