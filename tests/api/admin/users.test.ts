// POST /api/webchat/v2/admin/users: who may create whom, the user record, the one-time token
// (scoped to its user, stored only as a hash) and request validation.
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestService, type TestService } from "../../support/harness";

const PATH = "/api/webchat/v2/admin/users";
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

let t: TestService;
let db: Client;

beforeAll(async () => {
  t = await startTestService();
  // a second, independent connection to the service's own database file
  db = createClient({ url: `file:${join(t.home, "service.db")}` });
});
afterAll(async () => {
  db.close();
  await t.stop();
});

const create = (json: unknown, token?: string | null) => t.api(PATH, { method: "POST", json, token });
const userCount = async () => Number((await db.execute("SELECT count(*) AS n FROM users")).rows[0]!.n);
const tokenCount = async () => Number((await db.execute("SELECT count(*) AS n FROM tokens")).rows[0]!.n);

async function expectEnvelope(res: Response, status: number, type: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type") ?? "").toContain("application/json");
  const body = (await res.json()) as any;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "type"]);
  expect(body.error.type).toBe(type);
  expect(body.error.code === null || typeof body.error.code === "string").toBe(true);
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

function expectIso(s: unknown) {
  expect(typeof s).toBe("string");
  expect(new Date(s as string).toISOString()).toBe(s as string);
}

describe("owner (instance token) creates users", () => {
  for (const role of ["owner", "admin", "member"] as const) {
    test(`role ${role}: api_token once, user record`, async () => {
      const before = Date.now();
      const res = await create({ role, email: `${role}@example.com`, display_name: `The ${role}` });
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(Object.keys(body).sort()).toEqual(["api_token", "user"]);
      expect(typeof body.api_token).toBe("string");
      expect(body.api_token.length).toBeGreaterThanOrEqual(32);
      const u = body.user;
      expect(Object.keys(u).sort()).toEqual(["budget", "created_at", "display_name", "email", "role", "sign_in", "status", "updated_at", "user_id"]);
      expect(u).toMatchObject({ email: `${role}@example.com`, display_name: `The ${role}`, status: "active", role });
      expect(typeof u.user_id).toBe("string");
      expect(u.user_id.length).toBeGreaterThan(0);
      expectIso(u.created_at);
      expectIso(u.updated_at);
      expect(Date.parse(u.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(u.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
      // the record is in the database as returned
      const row = (await db.execute({ sql: "SELECT * FROM users WHERE id = ?", args: [u.user_id] })).rows[0]!;
      expect(row).toBeDefined();
      expect(row.role).toBe(role);
      expect(row.email).toBe(`${role}@example.com`);
      expect(row.status).toBe("active");
    });
  }

  test("email and display_name are optional", async () => {
    const res = await create({ role: "member" });
    expect(res.status).toBe(200);
    const { user, api_token } = (await res.json()) as any;
    expect(typeof api_token).toBe("string");
    expect(user.role).toBe("member");
    expect(user.status).toBe("active");
    expect(user.email ?? null).toBeNull();
    expect(user.display_name ?? null).toBeNull();
  });

  test("every user gets a distinct id and a distinct token", async () => {
    const a = await t.createUser("member");
    const b = await t.createUser("member");
    expect(a.user.user_id).not.toBe(b.user.user_id);
    expect(a.token).not.toBe(b.token);
  });
});

describe("the per-user token", () => {
  test("works for the Responses API and is scoped to its user", async () => {
    const a = await t.createUser("member");
    const b = await t.createUser("member");
    const ra = await t.respond({ model: "m", input: "hello from a" }, a.token);
    const rb = await t.respond({ model: "m", input: "hello from b" }, b.token);
    expect(ra.status).toBe(200);
    expect(rb.status).toBe(200);
    expect(ra.body.status).toBe("completed");
    expect(ra.body.id).toMatch(/^resp_[0-9a-f]{64}$/);

    // each user reads their own response
    const ownA = await t.api(`/api/v1/responses/${ra.body.id}`, { token: a.token });
    expect(ownA.status).toBe(200);
    expect(((await ownA.json()) as any).id).toBe(ra.body.id);
    expect((await t.api(`/api/v1/responses/${rb.body.id}`, { token: b.token })).status).toBe(200);

    // and nobody else's: not the other member, not the instance owner
    await expectEnvelope(await t.api(`/api/v1/responses/${ra.body.id}`, { token: b.token }), 404, "not_found_error");
    await expectEnvelope(await t.api(`/api/v1/responses/${rb.body.id}`, { token: a.token }), 404, "not_found_error");
    await expectEnvelope(await t.api(`/api/v1/responses/${ra.body.id}`), 404, "not_found_error");

    // the database records the response under A's user id
    const row = (await db.execute({ sql: "SELECT user_id FROM responses WHERE id = ?", args: [ra.body.id] })).rows[0]!;
    expect(row.user_id).toBe(a.user.user_id);
  });

  test("is stored only as its SHA-256 hash", async () => {
    const { token, user } = await t.createUser("admin");
    expect((await t.api("/api/status", { token })).status).toBe(200);

    const hashRows = (await db.execute({ sql: "SELECT * FROM tokens WHERE user_id = ?", args: [user.user_id] })).rows;
    expect(hashRows.length).toBe(1);
    expect(hashRows[0]!.hash).toBe(sha256(token));

    // no cell of any table holds the token (or its secret part)
    const secret = token.replace(/^[a-z]+_/, "");
    const tables = (await db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")).rows.map((r) => String(r.name));
    expect(tables).toContain("tokens");
    for (const table of tables) {
      const rows = (await db.execute(`SELECT * FROM "${table}"`)).rows;
      for (const row of rows) {
        for (const cell of Object.values(row)) {
          const text = String(cell);
          expect(text.includes(token)).toBe(false);
          expect(text.includes(secret)).toBe(false);
        }
      }
    }
    // nor do the raw database files or the service's logs
    for (const file of ["service.db", "service.db-wal"]) {
      const path = join(t.home, file);
      if (existsSync(path)) expect(readFileSync(path).includes(secret)).toBe(false);
    }
    expect(t.logs.some((l) => l.includes(secret))).toBe(false);
  });
});

describe("authorization", () => {
  test("a member token gets 403 permission_error for every role, and nothing is created", async () => {
    const member = await t.createUser("member");
    const users = await userCount();
    for (const role of ["owner", "admin", "member"]) {
      await expectEnvelope(await create({ role }, member.token), 403, "permission_error");
    }
    expect(await userCount()).toBe(users);
  });

  test("an admin token creates members and admins but not owners", async () => {
    const admin = await t.createUser("admin");
    for (const role of ["member", "admin"]) {
      const res = await create({ role }, admin.token);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.user.role).toBe(role);
      // what the admin created works
      expect((await t.api("/api/status", { token: body.api_token })).status).toBe(200);
    }
    const users = await userCount();
    await expectEnvelope(await create({ role: "owner" }, admin.token), 403, "permission_error");
    expect(await userCount()).toBe(users);
  });

  test("an admin created by an admin can itself create members", async () => {
    const admin = await t.createUser("admin");
    const res = await create({ role: "admin" }, admin.token);
    const second = ((await res.json()) as any).api_token;
    const made = await create({ role: "member" }, second);
    expect(made.status).toBe(200);
  });

  test("a per-user owner token may create owners", async () => {
    const owner = await t.createUser("owner");
    const res = await create({ role: "owner" }, owner.token);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).user.role).toBe("owner");
  });

  test("no token or a wrong token: plain-text 401", async () => {
    for (const token of [null, "nope"]) {
      const res = await create({ role: "member" }, token);
      expect(res.status).toBe(401);
      expect(await res.text()).toBe("Invalid or missing auth token");
    }
  });
});

describe("validation", () => {
  const badBodies: [string, string][] = [
    ["missing role", JSON.stringify({ email: "x@example.com" })],
    ["unknown role", JSON.stringify({ role: "superuser" })],
    ["role in capitals", JSON.stringify({ role: "ADMIN" })],
    ["role not a string", JSON.stringify({ role: 1 })],
    ["role null", JSON.stringify({ role: null })],
    ["email not a string", JSON.stringify({ role: "member", email: 5 })],
    ["display_name not a string", JSON.stringify({ role: "member", display_name: { a: 1 } })],
    ["email far too long", JSON.stringify({ role: "member", email: "x".repeat(1000) + "@example.com" })],
    ["body is an array", JSON.stringify([{ role: "member" }])],
    ["body is a string", JSON.stringify("member")],
    ["body is null", "null"],
    ["malformed JSON", '{"role": "member"'],
    ["trailing garbage", '{"role": "member"} x'],
    ["empty body", ""],
  ];

  for (const [name, body] of badBodies) {
    test(`${name} → 400 invalid_request_error, nothing created`, async () => {
      const users = await userCount();
      const tokens = await tokenCount();
      const res = await t.api(PATH, { method: "POST", body, headers: { "content-type": "application/json" } });
      await expectEnvelope(res, 400, "invalid_request_error");
      expect(await userCount()).toBe(users);
      expect(await tokenCount()).toBe(tokens);
    });
  }

  test("the message names the problem", async () => {
    const missing = await expectEnvelope(await create({}), 400, "invalid_request_error");
    expect(missing.error.message).toContain("role");
    const email = await expectEnvelope(await create({ role: "member", email: 5 }), 400, "invalid_request_error");
    expect(email.error.message).toContain("email");
  });
});
