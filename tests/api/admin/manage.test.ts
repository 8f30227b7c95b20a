// Managing users over the admin API: list, change role and status, a new token, delete with
// all their data. Who may do what (owner, admin, member), and that a revoked or suspended
// token is refused at once even though the service caches tokens.
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestService, type TestService } from "../../support/harness";

const USERS = "/api/webchat/v2/admin/users";

let t: TestService;
let db: Client;

beforeAll(async () => {
  t = await startTestService();
  db = createClient({ url: `file:${join(t.home, "service.db")}` });
});
afterAll(async () => {
  db.close();
  await t.stop();
});

const patch = (id: string, json: unknown, token?: string) => t.api(`${USERS}/${id}`, { method: "PATCH", json, token });
const rotate = (id: string, token?: string) => t.api(`${USERS}/${id}/token`, { method: "POST", token });
const remove = (id: string, token?: string) => t.api(`${USERS}/${id}`, { method: "DELETE", token });
const status = (token: string) => t.api("/api/status", { token });
const count = async (sql: string, ...args: string[]) => Number((await db.execute({ sql, args })).rows[0]!.n);

async function envelope(res: Response, code: number, type: string) {
  expect(res.status).toBe(code);
  const body = (await res.json()) as any;
  expect(body.error.type).toBe(type);
  return body.error.message as string;
}

async function expectPlain401(res: Response) {
  expect(res.status).toBe(401);
  expect(await res.text()).toBe("Invalid or missing auth token");
}

describe("listing", () => {
  test("owners and admins list every user, the instance owner first; members get 403", async () => {
    const admin = await t.createUser("admin");
    const member = await t.createUser("member");
    for (const token of [t.token, admin.token]) {
      const res = await t.api(USERS, { token });
      expect(res.status).toBe(200);
      const { users } = (await res.json()) as any;
      expect(users[0]).toMatchObject({ user_id: "owner", role: "owner", status: "active" });
      const ids = users.map((u: any) => u.user_id);
      expect(ids).toContain(admin.user.user_id);
      expect(ids).toContain(member.user.user_id);
      expect(Object.keys(users.at(-1)).sort()).toEqual(["budget", "created_at", "display_name", "email", "role", "sign_in", "status", "updated_at", "user_id"]);
    }
    await envelope(await t.api(USERS, { token: member.token }), 403, "permission_error");
  });
});

describe("suspending", () => {
  test("a suspended user's token gets the plain-text 401 at once, and works again when activated", async () => {
    const u = await t.createUser("member");
    expect((await status(u.token)).status).toBe(200); // now cached by the service
    const res = await patch(u.user.user_id, { status: "suspended" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("suspended");
    await expectPlain401(await status(u.token));
    await expectPlain401(await t.api("/api/v1/responses", { method: "POST", json: { model: "m", input: "hi" }, token: u.token }));
    expect((await patch(u.user.user_id, { status: "active" })).status).toBe(200);
    expect((await status(u.token)).status).toBe(200);
  });

  test("a turn the user has running when suspended is cut short (cancelled), the text so far kept; the user can go on once active", async () => {
    const u = await t.createUser("member");
    t.llm.enqueue({ text: Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 20 });
    const chunks = t.llm.textChunksSent();
    const running = t.respond({ model: "m", input: "a long answer" }, u.token);
    await t.llm.waitForTextChunks(chunks + 5);
    expect((await patch(u.user.user_id, { status: "suspended" })).status).toBe(200);
    const r = await running;
    expect(r.body).toMatchObject({ status: "failed", error: { code: "cancelled", message: "The user was suspended." } });
    expect(r.body.output[0].status).toBe("incomplete");
    expect((await patch(u.user.user_id, { status: "active" })).status).toBe(200);
    t.llm.enqueue({ text: "back" });
    expect((await t.respond({ model: "m", input: "again" }, u.token)).body.status).toBe("completed");
  });

  test("the instance owner can be neither suspended, demoted nor deleted (400); nothing changes", async () => {
    await envelope(await patch("owner", { status: "suspended" }), 400, "invalid_request_error");
    await envelope(await patch("owner", { role: "member" }), 400, "invalid_request_error");
    await envelope(await remove("owner"), 400, "invalid_request_error");
    const row = (await db.execute("SELECT role, status FROM users WHERE id = 'owner'")).rows[0]!;
    expect(row.role).toBe("owner");
    expect(row.status).toBe("active");
    // a display name is fine
    const res = await patch("owner", { display_name: "Ada" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).display_name).toBe("Ada");
  });
});

describe("roles", () => {
  test("a role change applies to the next request (the cached principal is dropped)", async () => {
    const u = await t.createUser("member");
    await envelope(await t.api(USERS, { token: u.token }), 403, "permission_error");
    expect((await patch(u.user.user_id, { role: "admin" })).status).toBe(200);
    expect((await t.api(USERS, { token: u.token })).status).toBe(200);
  });

  test("only an owner makes or changes owners", async () => {
    const admin = await t.createUser("admin");
    const member = await t.createUser("member");
    const owner = await t.createUser("owner");
    await envelope(await patch(member.user.user_id, { role: "owner" }, admin.token), 403, "permission_error");
    for (const res of [
      await patch(owner.user.user_id, { status: "suspended" }, admin.token),
      await rotate(owner.user.user_id, admin.token),
      await remove(owner.user.user_id, admin.token),
      await patch("owner", { display_name: "x" }, admin.token),
    ]) {
      await envelope(res, 403, "permission_error");
    }
    expect((await status(owner.token)).status).toBe(200);
    // an admin manages members and admins
    expect((await patch(member.user.user_id, { role: "admin" }, admin.token)).status).toBe(200);
    // an owner (per-user token) may make an owner
    const res = await patch(member.user.user_id, { role: "owner" }, owner.token);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).role).toBe("owner");
  });

  test("a member gets the 403 envelope on every admin route", async () => {
    const member = await t.createUser("member");
    const other = await t.createUser("member");
    const id = other.user.user_id;
    for (const res of [
      await t.api(USERS, { token: member.token }),
      await t.api(USERS, { method: "POST", json: { role: "member" }, token: member.token }),
      await patch(id, { status: "suspended" }, member.token),
      await rotate(id, member.token),
      await remove(id, member.token),
    ]) {
      await envelope(res, 403, "permission_error");
    }
    expect((await status(other.token)).status).toBe(200);
  });
});

describe("bad requests change nothing", () => {
  test("400 for an empty, unknown or malformed change; 404 for an unknown user", async () => {
    const u = await t.createUser("member");
    const id = u.user.user_id;
    const before = (await db.execute({ sql: "SELECT * FROM users WHERE id = ?", args: [id] })).rows[0];
    expect(await envelope(await patch(id, {}), 400, "invalid_request_error")).toContain("role, status, display_name or budget");
    expect(await envelope(await patch(id, { nickname: "x" }), 400, "invalid_request_error")).toContain("nickname");
    expect(await envelope(await patch(id, { status: "banned" }), 400, "invalid_request_error")).toContain("status");
    expect(await envelope(await patch(id, { role: "root" }), 400, "invalid_request_error")).toContain("role");
    await envelope(await patch(id, { display_name: 7 }), 400, "invalid_request_error");
    await envelope(await t.api(`${USERS}/${id}`, { method: "PATCH", body: "{nope", headers: { "content-type": "application/json" } }), 400, "invalid_request_error");
    expect((await db.execute({ sql: "SELECT * FROM users WHERE id = ?", args: [id] })).rows[0]).toEqual(before!);
    for (const res of [await patch("no-such-user", { status: "suspended" }), await rotate("no-such-user"), await remove("no-such-user")]) {
      await envelope(res, 404, "not_found_error");
    }
    await envelope(await rotate("owner"), 400, "invalid_request_error");
  });
});

describe("tokens", () => {
  test("a new token works and every old one is refused at once", async () => {
    const u = await t.createUser("member");
    expect((await status(u.token)).status).toBe(200);
    const res = await rotate(u.user.user_id);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(Object.keys(body)).toEqual(["api_token"]);
    expect(body.api_token).toMatch(/^svc_[0-9a-f]{64}$/);
    await expectPlain401(await status(u.token));
    expect((await status(body.api_token)).status).toBe(200);
    expect(await count("SELECT count(*) AS n FROM tokens WHERE user_id = ?", u.user.user_id)).toBe(1);
  });
});

describe("deleting", () => {
  test("204; the user and every piece of their data are gone, other users' data stays", async () => {
    const u = await t.createUser("member");
    const keep = await t.createUser("member");
    const id = u.user.user_id;
    // data of every kind: a conversation, memory, a tool policy, files
    for (const who of [u, keep]) {
      t.llm.enqueue({ text: "Noted." });
      expect((await t.respond({ model: "m", input: "remember the tomatoes" }, who.token)).body.status).toBe("completed");
      expect((await t.api("/api/memory/write", { method: "POST", json: { path: "notes/garden.md", content: "tomatoes and basil" }, token: who.token })).status).toBe(200);
    }
    await db.execute({ sql: "INSERT INTO tool_policies (user_id, tool, policy, updated_at) VALUES (?, 'file_list', 'auto', 0)", args: [id] });
    mkdirSync(join(t.home, "files", id), { recursive: true });
    writeFileSync(join(t.home, "files", id, "a.txt"), "private");
    const tables = ["threads", "responses", "memory_documents", "memory_chunks", "memory_owners", "tool_policies", "tokens"];
    for (const table of tables) expect(await count(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`, id)).toBeGreaterThan(0);
    const items = "SELECT count(*) AS n FROM items WHERE thread_id IN (SELECT id FROM threads WHERE user_id = ?)";
    expect(await count(items, id)).toBeGreaterThan(0);

    // a turn of the user still running: it is cut short, and nothing of it stays
    const before = t.llm.chatRequests().length;
    t.llm.enqueue({ hang: true });
    const running = t.respond({ model: "m", input: "a turn in flight", stream: true }, u.token);
    await t.llm.waitForRequests(before + 1);

    const res = await remove(id);
    expect(res.status).toBe(204);
    await running;
    expect(await res.text()).toBe("");
    for (const table of tables) expect(await count(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`, id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM users WHERE id = ?", id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM items i LEFT JOIN threads th ON th.id = i.thread_id WHERE th.id IS NULL")).toBe(0);
    // the full-text index forgot the chunks too: a search of the other user still works
    expect(await count("SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH 'tomatoes'")).toBe(1);
    expect(existsSync(join(t.home, "files", id))).toBe(false);
    await expectPlain401(await status(u.token));
    await envelope(await remove(id), 404, "not_found_error");

    // the other user's data is untouched
    for (const table of tables.filter((x) => x !== "tool_policies")) {
      expect(await count(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`, keep.user.user_id)).toBeGreaterThan(0);
    }
    const search = await t.api("/api/memory?q=tomatoes", { token: keep.token });
    expect(((await search.json()) as any).results.map((r: any) => r.path)).toEqual(["notes/garden.md"]);
  });
});
