// The write-ahead log of a libSQL file is copied back into the database once the database is
// quiet (src/store/libsql-checkpoints.ts), not inside a turn's commit.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLibsql } from "../../src/store/libsql";
import { until } from "../support/until";

const dir = mkdtempSync(join(tmpdir(), "checkpoints-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("writes reach the database file in a quiet moment, with no statement to carry them", async () => {
  const file = join(dir, "s.db");
  const store = await openLibsql(`file:${file}`);
  try {
    await store.client.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    const before = statSync(file).size;
    // about 250 pages: far below SQLite's own checkpoint (4,000 pages)
    for (let i = 0; i < 50; i++) {
      await store.client.batch(Array.from({ length: 5 }, (_, j) => ({ sql: "INSERT INTO t (v) VALUES (?)", args: [`${i}-${j} ${"x".repeat(4000)}`] })), "write");
    }
    expect(statSync(file).size).toBeLessThan(before + 100 * 4096);
    await until("the database file to take the log's pages", () => statSync(file).size > before + 200 * 4096, { timeoutMs: 3_000 });

    // the timer stops once the log is copied back (an idle store wakes nothing), and the next writes start it again
    const after = statSync(file).size;
    await Bun.sleep(600);
    for (let i = 0; i < 50; i++) {
      await store.client.batch(Array.from({ length: 5 }, (_, j) => ({ sql: "INSERT INTO t (v) VALUES (?)", args: [`again ${i}-${j} ${"x".repeat(4000)}`] })), "write");
    }
    await until("the database file to take the next writes too", () => statSync(file).size > after + 200 * 4096, { timeoutMs: 3_000 });
  } finally {
    await store.close();
  }
});
