// insertRows (src/store/insert-rows.ts) writes what drizzle's insert builder writes: the same
// columns, encoders (JSON, booleans) and defaults for a value left out, on either store.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, like } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/store/db";
import { insertRows } from "../../src/store/insert-rows";
import { ensureOwner } from "../../src/store/users";
import { freshPostgres, onPostgres } from "../support/postgres";

const dir = mkdtempSync(join(tmpdir(), "insert-rows-"));
let d: Database;
let owner: string;
beforeAll(async () => {
  d = await openDatabase(onPostgres ? await freshPostgres() : `file:${join(dir, "s.db")}`);
  await ensureOwner(d.db);
  owner = (await d.db.select({ id: d.db.t.users.id }).from(d.db.t.users).limit(1))[0]!.id;
});
afterAll(async () => {
  await d.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A thread, its response and two items, under ids ending in `tag`; optional fields left out where `sparse`. */
const rowsOf = (tag: string, sparse: boolean) => ({
  thread: { id: `th-${tag}`, userId: owner, title: sparse ? undefined : "Hello ✓", channel: sparse ? undefined : "responses", tools: sparse ? null : [{ type: "function", name: "f", parameters: {} }], createdAt: 100, updatedAt: 101 },
  response: {
    id: `resp-${tag}`,
    threadId: `th-${tag}`,
    userId: owner,
    status: "completed",
    model: "m",
    error: sparse ? null : { code: "x", message: "y" },
    ...(sparse ? {} : { inputTokens: 3, outputTokens: 4, cachedTokens: 1, reasoningTokens: 2, costMicroUsd: 5, meta: { store: true, n: [1, 2] }, jobId: null }),
    createdAt: 100,
  },
  items: [
    { id: `item-${tag}-a`, threadId: `th-${tag}`, responseId: `resp-${tag}`, seq: 0, type: "message", data: { type: "message", id: `item-${tag}-a`, role: "user", content: "hi \"there\"" }, input: true, createdAt: 100 },
    { id: `item-${tag}-b`, threadId: `th-${tag}`, responseId: `resp-${tag}`, seq: 1, type: "message", data: { type: "message", id: `item-${tag}-b`, role: "assistant", content: "ok" }, ...(sparse ? {} : { input: false }), createdAt: 100 },
  ],
});

async function stored(tag: string) {
  const { threads, responses, items } = d.db.t;
  const strip = <T extends Record<string, unknown>>(r: T) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" ? v.replace(`-${tag}`, "") : v]));
  const [thread] = await d.db.select().from(threads).where(eq(threads.id, `th-${tag}`));
  const [response] = await d.db.select().from(responses).where(eq(responses.id, `resp-${tag}`));
  const rows = await d.db.select().from(items).where(eq(items.threadId, `th-${tag}`)).orderBy(items.seq);
  return { thread: strip(thread!), response: strip(response!), items: rows.map((r) => ({ ...strip(r), data: { ...(r.data as object), id: "" } }) as Record<string, unknown>) };
}

for (const sparse of [false, true]) {
  test(`the rows read back as the builder's${sparse ? ", with optional values left out" : ""}`, async () => {
    const { threads, responses, items } = d.db.t;
    const viaBuilder = rowsOf(`b${sparse}`, sparse);
    await d.db.engine.batch(d.db, (q) => [q.insert(threads).values(viaBuilder.thread as never), q.insert(responses).values(viaBuilder.response as never), q.insert(items).values(viaBuilder.items as never)]);
    const viaRows = rowsOf(`r${sparse}`, sparse);
    await d.db.engine.batch(d.db, (q) => [
      ...insertRows(q, d.db.engine, threads, [viaRows.thread]),
      ...insertRows(q, d.db.engine, responses, [viaRows.response]),
      ...insertRows(q, d.db.engine, items, viaRows.items),
    ]);
    const [a, b] = [await stored(`b${sparse}`), await stored(`r${sparse}`)];
    expect(b).toEqual(a);
    expect(b.items.map((i) => i.input)).toEqual([true, false]);
  });
}

test("a key the database assigns is left to it: usage rows read back as the builder's, each with its own id", async () => {
  const { turnUsage } = d.db.t;
  const row = (responseId: string) => ({ responseId, userId: owner, threadId: "th", channel: "responses", model: "m", inputTokens: 3, cachedTokens: 1, outputTokens: 4, reasoningTokens: 0, costMicroUsd: 7, day: "2026-11-27", createdAt: 100 });
  await d.db.insert(turnUsage).values([row("u-b1"), row("u-b2")]);
  await d.db.engine.batch(d.db, (q) => insertRows(q, d.db.engine, turnUsage, [row("u-r1"), row("u-r2")]));
  const read = await d.db.select().from(turnUsage).orderBy(turnUsage.id);
  const ids = read.map((r) => r.id);
  expect(new Set(ids).size).toBe(4);
  const strip = ({ id: _, responseId, ...rest }: (typeof read)[number]) => ({ ...rest, responseId: responseId.replace(/u-[br]/, "u-") });
  expect(read.filter((r) => r.responseId.startsWith("u-r")).map(strip)).toEqual(read.filter((r) => r.responseId.startsWith("u-b")).map(strip));
  expect(() => insertRows(d.db, d.db.engine, turnUsage, [{ ...row("u-x"), id: 99 }])).toThrow(/assigned by the database/);
});

test("rows past SQLite's parameters in one statement go in several, all in the transaction", async () => {
  const { turnUsage } = d.db.t;
  const rows = Array.from({ length: 6_000 }, (_, i) => ({ responseId: `many-${i}`, userId: owner, threadId: "th", channel: "responses", model: "m", inputTokens: i, cachedTokens: 0, outputTokens: 1, reasoningTokens: 0, costMicroUsd: 0, day: "2026-11-27", createdAt: 100 }));
  let statements = 0;
  await d.db.engine.batch(d.db, (q) => {
    const writes = insertRows(q, d.db.engine, turnUsage, rows);
    statements = writes.length;
    return writes;
  });
  expect(statements).toBe(3); // 13 values a row: 2,520 rows a statement
  const stored = await d.db.select({ inputTokens: turnUsage.inputTokens }).from(turnUsage).where(like(turnUsage.responseId, "many-%"));
  expect(stored.map((r) => r.inputTokens).sort((a, b) => a - b)).toEqual(rows.map((r) => r.inputTokens));
  expect(insertRows(d.db, d.db.engine, turnUsage, [])).toEqual([]);
});
