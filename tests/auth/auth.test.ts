// Authentication: the bearer middleware in front of every protected route, the instance
// token's precedence, the token store being down, and the constant-time comparison.
import type { Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Authenticator } from "../../src/auth/principal";
import { hashToken, newToken, sameSecret } from "../../src/auth/tokens";
import { errorResponse } from "../../src/http/envelope";
import { loadConfig, servicePaths, type Env } from "../../src/config/load";
import { AuthFailure } from "../../src/errors";
import { resolveInstanceToken } from "../../src/server";
import { openDatabase } from "../../src/store/db";
import { ensureOwner } from "../../src/store/users";
import { startTestService, TOKEN, type TestService } from "../support/harness";

const UNAUTHORIZED = "Invalid or missing auth token";

/** Every protected route, with a body that would be acceptable if the caller were authenticated. */
const PROTECTED: { method: string; path: string; json?: unknown }[] = [
  { method: "POST", path: "/api/v1/responses", json: { model: "m", input: "hi" } },
  { method: "POST", path: "/v1/responses", json: { model: "m", input: "hi" } },
  { method: "GET", path: "/api/v1/responses/resp_" + "0".repeat(64) },
  { method: "POST", path: "/api/v1/responses/resp_" + "0".repeat(64) + "/cancel" },
  { method: "POST", path: "/api/webchat/v2/admin/users", json: { role: "member" } },
  { method: "GET", path: "/api/status" },
  { method: "POST", path: "/v1/chat/completions", json: { model: "m", messages: [{ role: "user", content: "hi" }] } },
  { method: "GET", path: "/v1/models" },
];

/** Authorization header values that must all be refused (undefined: no header at all). */
const BAD_AUTH: { name: string; header: string | undefined }[] = [
  { name: "missing", header: undefined },
  { name: "empty", header: "" },
  { name: "Basic scheme", header: "Basic x" },
  { name: "Basic with the right secret", header: `Basic ${TOKEN}` },
  { name: "Bearer alone", header: "Bearer" },
  { name: "Bearer and spaces", header: "Bearer   " },
  { name: "two words", header: `Bearer ${TOKEN} extra` },
  { name: "raw token, no scheme", header: TOKEN },
  { name: "wrong token", header: "Bearer not-the-token" },
  { name: "token prefix", header: `Bearer ${TOKEN.slice(0, -1)}` },
  { name: "token plus a character", header: `Bearer ${TOKEN}x` },
  { name: "hash of the token", header: `Bearer ${hashToken(TOKEN)}` },
];

async function expectUnauthorized(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get("content-type") ?? "").toStartWith("text/plain");
  expect(await res.text()).toBe(UNAUTHORIZED);
}

describe("bearer middleware", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  for (const route of PROTECTED) {
    test(`${route.method} ${route.path} refuses every bad Authorization header with plain-text 401`, async () => {
      for (const bad of BAD_AUTH) {
        const headers: Record<string, string> = {};
        if (bad.header !== undefined) headers.authorization = bad.header;
        const res = await t.api(route.path, { method: route.method, json: route.json, token: null, headers });
        try {
          await expectUnauthorized(res);
        } catch (e) {
          throw new Error(`${bad.name}: ${(e as Error).message}`);
        }
      }
    });
  }

  test("no LLM call and nothing stored for refused requests", async () => {
    const before = t.llm.chatRequests().length;
    await expectUnauthorized(await t.api("/api/v1/responses", { method: "POST", json: { model: "m", input: "hi" }, token: "nope" }));
    await expectUnauthorized(await t.api("/v1/chat/completions", { method: "POST", json: { messages: [] }, token: null }));
    expect(t.llm.chatRequests().length).toBe(before);
  });

  test("auth comes before body validation: garbage body without a token is still 401", async () => {
    const res = await t.api("/api/v1/responses", { method: "POST", body: "{not json", token: null });
    await expectUnauthorized(res);
  });

  test("the instance token is accepted; scheme is case-insensitive and surrounding spaces are tolerated", async () => {
    expect((await t.api("/api/status")).status).toBe(200);
    for (const header of [`bearer ${TOKEN}`, `BEARER ${TOKEN}`, `Bearer    ${TOKEN}  `]) {
      const res = await t.api("/api/status", { token: null, headers: { authorization: header } });
      expect(res.status).toBe(200);
    }
  });

  test("/health is public, with or without a token", async () => {
    for (const token of [null, "wrong", TOKEN]) {
      const res = await t.api("/health", { token });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "ok" });
    }
  });

  test("a per-user token authenticates; a token of a similar shape does not", async () => {
    const { token } = await t.createUser("member");
    expect(token).toStartWith("svc_");
    expect((await t.api("/api/status", { token })).status).toBe(200);
    await expectUnauthorized(await t.api("/api/status", { token: token.slice(0, -1) + (token.endsWith("0") ? "1" : "0") }));
    await expectUnauthorized(await t.api("/api/status", { token: hashToken(token) }));
  });
});

describe("token store down", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  test("a per-user token while the database is closed → 503 plain text `Database unavailable`; it recovers on reconnect", async () => {
    const { token } = await t.createUser("member");
    // drizzle keeps the libSQL client it runs on; closing it takes the token store down for real
    const client = (t.service.services.db as unknown as { $client: Client }).$client;
    client.close();
    try {
      for (const path of ["/api/status", "/v1/models"]) {
        const res = await t.api(path, { token });
        expect(res.status).toBe(503);
        expect(res.headers.get("content-type") ?? "").toStartWith("text/plain");
        expect(await res.text()).toBe("Database unavailable");
      }
      const post = await t.api("/api/v1/responses", { method: "POST", json: { model: "m", input: "hi" }, token: "unknown-token" });
      expect(post.status).toBe(503);
      expect(await post.text()).toBe("Database unavailable");
      // the instance token needs no lookup and a missing token needs none either
      expect((await t.api("/api/status")).status).toBe(200);
      await expectUnauthorized(await t.api("/api/status", { token: null }));
    } finally {
      await client.reconnect();
    }
    expect((await t.api("/api/status", { token })).status).toBe(200);
  });

  test("an Authenticator on a closed database rejects with the store-down failure", async () => {
    const dir = mkdtempSync(join(tmpdir(), "auth-closed-"));
    try {
      const database = await openDatabase(`file:${join(dir, "t.db")}`);
      await ensureOwner(database.db);
      database.close();
      const auth = new Authenticator(database.db, "instance-secret");
      // the instance token needs no database
      expect(await auth.authenticate("Bearer instance-secret")).toEqual({ userId: "owner", role: "owner", operator: true });
      const failure = await auth.authenticate("Bearer someone-else").then(
        () => undefined,
        (e) => e,
      );
      expect(failure).toBeInstanceOf(AuthFailure);
      expect(failure.status).toBe(503);
      const res = errorResponse(failure);
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type") ?? "").toStartWith("text/plain");
      expect(await res.text()).toBe("Database unavailable");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("resolveInstanceToken precedence", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "instance-token-"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  let n = 0;
  /** A fresh home with optional config.json and webui-token; returns env and the resolved token. */
  function resolve(opts: { env?: Env; configJson?: unknown; file?: string }) {
    const home = join(root, `home-${++n}`);
    mkdirSync(home, { recursive: true });
    const env: Env = { SERVICE_HOME: home, ...opts.env };
    const paths = servicePaths(env);
    if (opts.configJson !== undefined) writeFileSync(paths.config, JSON.stringify(opts.configJson));
    if (opts.file !== undefined) writeFileSync(paths.token, opts.file);
    return resolveInstanceToken(env, loadConfig(paths, env), paths);
  }

  const all = {
    env: { SERVICE_REBORN_WEBUI_TOKEN: "from-reborn-env", GATEWAY_AUTH_TOKEN: "from-gateway-env" },
    configJson: { gateway: { authToken: "from-config-json" } },
    file: "from-file\n",
  };

  test("SERVICE_REBORN_WEBUI_TOKEN wins over everything", () => {
    expect(resolve(all)).toEqual({ token: "from-reborn-env", source: "SERVICE_REBORN_WEBUI_TOKEN" });
  });

  test("GATEWAY_AUTH_TOKEN wins over config.json and the file", () => {
    expect(resolve({ ...all, env: { GATEWAY_AUTH_TOKEN: "from-gateway-env" } })).toEqual({
      token: "from-gateway-env",
      source: "GATEWAY_AUTH_TOKEN",
    });
  });

  test("config.json gateway.authToken counts as GATEWAY_AUTH_TOKEN and wins over the file", () => {
    expect(resolve({ configJson: all.configJson, file: all.file })).toEqual({
      token: "from-config-json",
      source: "GATEWAY_AUTH_TOKEN",
    });
  });

  test("the webui-token file is used next, trimmed", () => {
    expect(resolve({ file: "  from-file \n" })).toEqual({ token: "from-file", source: "webui-token" });
  });

  test("empty values fall through to the next source", () => {
    expect(resolve({ env: { SERVICE_REBORN_WEBUI_TOKEN: "", GATEWAY_AUTH_TOKEN: "" }, file: "from-file" })).toEqual({
      token: "from-file",
      source: "webui-token",
    });
  });

  test("with nothing set, a fresh 32-byte hex token is generated and not written anywhere", () => {
    const a = resolve({});
    const b = resolve({ file: "\n  \n" });
    expect(a.source).toBe("generated");
    expect(b.source).toBe("generated");
    expect(a.token).toMatch(/^[0-9a-f]{64}$/);
    expect(b.token).toMatch(/^[0-9a-f]{64}$/);
    expect(a.token).not.toBe(b.token);
    expect(existsSync(join(root, `home-${n - 1}`, "webui-token"))).toBe(false);
  });

  test("a service started with a GATEWAY_AUTH_TOKEN accepts it (and the harness's env token is not needed)", async () => {
    const t = await startTestService({ env: { SERVICE_REBORN_WEBUI_TOKEN: undefined, GATEWAY_AUTH_TOKEN: "gw-token-xyz" } });
    try {
      expect(t.service.token).toEqual({ token: "gw-token-xyz", source: "GATEWAY_AUTH_TOKEN" });
      expect((await t.api("/api/status", { token: "gw-token-xyz" })).status).toBe(200);
      await expectUnauthorized(await t.api("/api/status", { token: TOKEN }));
    } finally {
      await t.stop();
    }
  });
});

describe("tokens", () => {
  test("sameSecret: equal strings are equal, anything else is not, whatever the lengths", () => {
    expect(sameSecret("abc", "abc")).toBe(true);
    expect(sameSecret("", "")).toBe(true);
    expect(sameSecret("abc", "abd")).toBe(false);
    expect(sameSecret("abc", "ab")).toBe(false);
    expect(sameSecret("ab", "abc")).toBe(false);
    expect(sameSecret("", "a")).toBe(false);
    expect(sameSecret("a".repeat(10_000), "a".repeat(10_001))).toBe(false);
    expect(sameSecret("ünïcødé", "ünïcødé")).toBe(true);
    expect(sameSecret("ünïcødé", "unicode")).toBe(false);
    expect(sameSecret("ABC", "abc")).toBe(false);
  });

  test("sameSecret compares through fixed-length digests (timingSafeEqual would throw on unequal lengths)", () => {
    // A length mismatch neither throws nor short-circuits into a different code path.
    expect(() => sameSecret("x", "x".repeat(1000))).not.toThrow();
  });

  test("newToken: 32 random bytes as hex, with an optional prefix", () => {
    const a = newToken();
    const b = newToken();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(newToken("svc_")).toMatch(/^svc_[0-9a-f]{64}$/);
  });

  test("hashToken is SHA-256 hex", () => {
    expect(hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
