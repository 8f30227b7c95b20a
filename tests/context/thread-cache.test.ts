// The threads kept in memory between turns: read once, then only what was stored since; read
// again whole when the database says the copy is stale.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { ThreadCache } from "../../src/context/thread-cache";
import { loadThreadContext, storeCompaction } from "../../src/store/compactions";
import { getThread } from "../../src/store/conversations";
import { items } from "../support/tables";
import { startTestService, type TestService } from "../support/harness";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

const threadOf = (id: string) => id.slice(37).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
const contents = (rows: { history: { item: { type: string } }[] }) => rows.history.map((p) => (p.item as { content?: string }).content);

test("the same rows as a full read, through new turns, a compaction and a deleted response", async () => {
  const db = t.service.services.db;
  const cache = new ThreadCache();
  let prev: string | undefined;
  const ids: string[] = [];
  for (const m of ["a", "b"]) ids.push((prev = (await t.respond({ model: "m", input: m, previous_response_id: prev })).body.id));
  const threadId = threadOf(prev!);
  const check = async () => {
    const thread = (await getThread(db, threadId))!;
    const cached = await cache.load(db, thread);
    expect(cached).toEqual(await loadThreadContext(db, thread));
    return cached;
  };
  expect(contents(await check())).toEqual(["a", "You said: a", "b", "You said: b"]);
  await t.respond({ model: "m", input: "c", previous_response_id: prev });
  expect(contents(await check())).toEqual(["a", "You said: a", "b", "You said: b", "c", "You said: c"]);
  // a response deleted in the middle: the count no longer matches, the copy is read again
  await db.delete(items).where(eq(items.responseId, ids[1]!));
  expect(contents(await check())).toEqual(["a", "You said: a", "c", "You said: c"]);
  // a compaction moves the thread's pointers
  const rows = await check();
  await storeCompaction(db, threadId, { type: "compaction", id: "item_k", summary: "S", first_kept_seq: rows.history[2]!.seq, summarised_items: 2, trigger: "manual", memory_notes: 0, created_at: 0 }, rows.nextSeq);
  const after = await check();
  expect(after.compaction?.summary).toBe("S");
  expect(contents(after)).toEqual(["c", "You said: c"]);
  await t.respond({ model: "m", input: "d", previous_response_id: prev });
  expect(contents(await check())).toEqual(["c", "You said: c", "d", "You said: d"]);
});

test("keeps at most `max` threads", async () => {
  const db = t.service.services.db;
  const cache = new ThreadCache(2);
  const threads = [];
  for (const m of ["x", "y", "z"]) threads.push((await getThread(db, threadOf((await t.respond({ model: "m", input: m })).body.id)))!);
  for (const th of threads) await cache.load(db, th);
  expect(cache.size).toBe(2);
  expect(contents(await cache.load(db, threads[0]!))).toEqual(["x", "You said: x"]);
  expect(cache.size).toBe(2);
});
