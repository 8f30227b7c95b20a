// A database that cannot be written is the service's trouble, said as such: every gateway
// route that writes answers 503 with the cause (the webhook channel its 500 with the cause in
// `error`), never a bare 500, while another connection holds the write lock or the disk is
// full. Once the database can be written again the service goes on by itself, and what it
// then writes is committed (libSQL leaves a statement that met a lock active, and SQLite
// commits nothing more on that connection until it is replaced).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, type Client, type Transaction } from "@libsql/client";
import { statfsSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startTestService, type TestService } from "../support/harness";
import { canMountTmpfs, mountTmpfs, type Tmpfs } from "../support/tmpfs";

const SECRET = "unavailable-test-secret-0123456789";
const env = { HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: SECRET, HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" };

/** What each write is done to: made fresh (while the database can be written) for each round. */
interface Fixture {
  conversation: string;
  threadId: string;
  responseId: string;
  userId: string;
}

async function fixture(t: TestService): Promise<Fixture> {
  const chat = (await (await t.api("/api/chat", { method: "POST", json: { message: "a thread" } })).json()) as any;
  const conv = (await (await t.api("/api/v1/conversations", { method: "POST", json: {} })).json()) as any;
  const user = await t.createUser();
  expect((await t.api("/api/memory/write", { method: "POST", json: { path: "notes/a.md", content: "kept" } })).status).toBe(200);
  return { conversation: conv.id, threadId: chat.thread_id, responseId: chat.response_id, userId: user.user.user_id };
}

/** Every kind of write a gateway route makes, and the webhook's. */
const writes = (t: TestService, f: Fixture): [string, () => Promise<Response>][] => {
  const send = (method: string, path: string, json?: unknown) => () => t.api(path, { method, ...(json === undefined ? {} : { json }) });
  return [
    ["POST /api/v1/conversations", send("POST", "/api/v1/conversations", { items: [{ type: "message", role: "user", content: "hi" }] })],
    ["POST /api/v1/conversations/{id}", send("POST", `/api/v1/conversations/${f.conversation}`, { metadata: { a: "b" } })],
    ["POST /api/v1/conversations/{id}/items", send("POST", `/api/v1/conversations/${f.conversation}/items`, { items: [{ type: "message", role: "user", content: "more" }] })],
    ["POST /api/v1/responses", send("POST", "/api/v1/responses", { model: "m", input: "a turn" })],
    ["POST /api/v1/responses (background)", send("POST", "/api/v1/responses", { model: "m", input: "a turn", background: true })],
    ["POST /api/chat", send("POST", "/api/chat", { message: "a chat turn", thread_id: f.threadId })],
    ["POST /api/chat/send", send("POST", "/api/chat/send", { content: "a sent turn" })],
    ["POST /api/memory/write", send("POST", "/api/memory/write", { path: "notes/b.md", content: "x".repeat(200_000) })],
    ["DELETE /api/memory", send("DELETE", "/api/memory?path=notes/a.md")],
    ["POST /api/webchat/v2/admin/users", send("POST", "/api/webchat/v2/admin/users", { role: "member" })],
    ["PATCH /api/webchat/v2/admin/users/{id}", send("PATCH", `/api/webchat/v2/admin/users/${f.userId}`, { display_name: "Renamed" })],
    ["POST /api/webchat/v2/admin/users/{id}/token", send("POST", `/api/webchat/v2/admin/users/${f.userId}/token`)],
    ["DELETE /api/v1/responses/{id}", send("DELETE", `/api/v1/responses/${f.responseId}`)],
    ["DELETE /api/v1/conversations/{id}", send("DELETE", `/api/v1/conversations/${f.conversation}`)],
    ["DELETE /api/chat/threads/{id}", send("DELETE", `/api/chat/threads/${f.threadId}`)],
    ["DELETE /api/webchat/v2/admin/users/{id}", send("DELETE", `/api/webchat/v2/admin/users/${f.userId}`)],
    [
      "POST /webhook",
      () => fetch(`${t.service.webhookUrl}/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-webhook-secret": SECRET }, body: JSON.stringify({ user_id: "u", message: "m" }) }),
    ],
  ];
};

/** Every write is refused with the cause, the webhook's with its own 500. */
async function expectRefused(t: TestService, f: Fixture, cause: RegExp) {
  for (const [name, send] of writes(t, f)) {
    const res = await send();
    const body = (await res.json()) as any;
    if (name === "POST /webhook") {
      expect({ name, status: res.status }).toEqual({ name, status: 500 });
      expect(body.error).toMatch(cause);
    } else {
      expect({ name, status: res.status, type: body.error?.type }).toEqual({ name, status: 503, type: "server_error" });
      expect(body.error.message).toMatch(cause);
    }
  }
}

/** Every write goes through again. */
async function expectAccepted(t: TestService, f: Fixture) {
  for (const [name, send] of writes(t, f)) {
    const res = await send();
    expect({ name, ok: res.ok, body: res.ok ? "" : await res.text() }).toEqual({ name, ok: true, body: "" });
  }
}

describe("the database locked by another connection", () => {
  let t: TestService;
  let other: Client;
  beforeAll(async () => {
    // a lock is waited for this long before a write fails (5 s in service)
    t = await startTestService({ env, busyTimeoutMs: 50 });
    other = createClient({ url: `file:${join(t.home, "service.db")}` });
  });
  afterAll(async () => {
    other.close();
    await t.stop();
  });

  test("every write is a 503 with the cause while the lock is held; once it is gone, writes go through and are committed", async () => {
    const f = await fixture(t);
    const lock: Transaction = await other.transaction("write");
    await lock.execute("UPDATE users SET updated_at = updated_at");
    try {
      await expectRefused(t, f, /database is locked \(SQLITE_BUSY\)/);
      // reads go on meanwhile
      expect((await t.api("/api/chat/threads")).status).toBe(200);
    } finally {
      await lock.rollback();
    }
    await expectAccepted(t, await fixture(t));
    // committed, as another connection sees: not left in a transaction of the service's
    const made = (await (await t.api("/api/webchat/v2/admin/users", { method: "POST", json: { role: "member", email: "after@example.com" } })).json()) as any;
    expect((await other.execute({ sql: "SELECT email FROM users WHERE id = ?", args: [made.user.user_id] })).rows[0]?.email).toBe("after@example.com");
  });
});

describe.skipIf(!canMountTmpfs("the full-disk test"))("a full disk", () => {
  let t: TestService;
  let disk: Tmpfs;
  beforeAll(async () => {
    disk = mountTmpfs("6m");
    t = await startTestService({ env, keepHome: join(disk.dir, "home") });
  });
  afterAll(async () => {
    await t?.stop();
    disk?.unmount();
  });

  test("every write is a 503 with the cause while the disk is full; once there is room, writes go through", async () => {
    const f = await fixture(t);
    // the WAL emptied, so that the next write needs new room on the disk, and the disk filled
    const db = createClient({ url: `file:${join(t.home, "service.db")}` });
    await db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    const filler = join(disk.dir, "filler");
    const { bavail, bsize } = statfsSync(disk.dir);
    writeFileSync(filler, Buffer.alloc(bavail * bsize));
    try {
      await expectRefused(t, f, /disk is full \(SQLITE_FULL\)/);
    } finally {
      rmSync(filler);
    }
    await expectAccepted(t, await fixture(t));
  });
});
