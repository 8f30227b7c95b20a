// Single sign-on over HTTP, against identity providers on loopback (tests/support/fake-idp.ts):
// the flow's start and callback, every check that must refuse (state, browser binding, nonce,
// signature, expiry, audience, issuer, verified email, allowed domains, autoCreate), the
// session bearer's life (logout, suspension, a new token, deletion, expiry) and the token
// store being down. The browser flow is in sso-browser.test.ts.
import type { Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeGithub, startFakeOidc, type FakeGithub, type FakeOidc } from "../support/fake-idp";
import { startTestService, type TestService } from "../support/harness";

const UNAUTHORIZED = "Invalid or missing auth token";

interface SignIn {
  /** The callback's answer. */
  res: Response;
  /** The provider's authorization request, as the service sent the browser to it. */
  authorize: URL;
  /** The callback URL (on the service) the provider sent the browser back to. */
  callback: URL;
  /** The binding cookie the start set (`name=value`). */
  cookie: string;
}

/** A browser's sign-in, with fetch: start → the provider (which signs in at once) → the callback. */
async function signIn(t: TestService, id: string, o: { cookie?: string | false; edit?: (callback: URL) => void } = {}): Promise<SignIn> {
  const start = await fetch(`${t.url}/auth/sso/${id}/start`, { redirect: "manual" });
  expect(start.status).toBe(302);
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  const authorize = new URL(start.headers.get("location")!);
  const atProvider = await fetch(authorize, { redirect: "manual" });
  expect(atProvider.status).toBe(302);
  const sent = new URL(atProvider.headers.get("location")!);
  // the provider sends the browser to the public URL; the test reaches the service itself
  const callback = new URL(sent.pathname + sent.search, t.url);
  o.edit?.(callback);
  const send = o.cookie === undefined ? cookie : o.cookie;
  const res = await fetch(callback, { redirect: "manual", headers: send ? { cookie: send } : {} });
  return { res, authorize, callback, cookie };
}

const tokenOf = (res: Response) => /^\/login#token=(sso_[0-9a-f]{64})$/.exec(res.headers.get("location") ?? "")?.[1];

async function expectPlain(res: Response, status: number, body: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type") ?? "").toStartWith("text/plain");
  expect(await res.text()).toBe(body);
}

async function users(t: TestService): Promise<any[]> {
  return ((await (await t.api("/api/webchat/v2/admin/users")).json()) as any).users;
}

const sessionRows = async (t: TestService) => Number((await client(t).execute("SELECT count(*) AS n FROM sso_sessions")).rows[0]!.n);
const client = (t: TestService) => (t.service.services.db as unknown as { $client: Client }).$client;

describe("single sign-on with autoCreate and allowed domains", () => {
  let idp: FakeOidc;
  let gh: FakeGithub;
  let t: TestService;
  beforeAll(async () => {
    idp = await startFakeOidc();
    gh = startFakeGithub();
    t = await startTestService({
      config: {
        auth: {
          sso: {
            oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, name: "Home SSO" },
            github: gh.settings(),
            allowedDomains: ["Example.com"],
            autoCreate: true,
          },
        },
      },
    });
  });
  afterAll(async () => {
    await t.stop();
    idp.stop();
    gh.stop();
  });

  test("GET /auth/sso/providers needs no token and lists the configured providers in order", async () => {
    const res = await fetch(`${t.url}/auth/sso/providers`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ providers: [{ id: "github", name: "GitHub" }, { id: "oidc", name: "Home SSO" }] });
  });

  test("start sends the browser to the provider with PKCE S256, state and nonce, bound to the browser by a cookie", async () => {
    const start = await fetch(`${t.url}/auth/sso/oidc/start`, { redirect: "manual" });
    expect(start.status).toBe(302);
    expect(start.headers.get("cache-control")).toBe("no-store");
    const to = new URL(start.headers.get("location")!);
    expect(to.origin + to.pathname).toBe(`${idp.issuer}/authorize`);
    const q = to.searchParams;
    expect(q.get("response_type")).toBe("code");
    expect(q.get("client_id")).toBe(idp.clientId);
    expect(q.get("redirect_uri")).toBe(`${t.url}/auth/sso/oidc/callback`);
    expect(q.get("scope")).toBe("openid email profile");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")!.length).toBeGreaterThanOrEqual(43);
    expect(q.get("nonce")!.length).toBeGreaterThanOrEqual(43);
    const cookie = start.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^service_sso=[0-9a-f]{64}; Path=\/auth\/sso\/; Max-Age=600; HttpOnly; SameSite=Lax$/);

    const gh2 = await fetch(`${t.url}/auth/sso/github/start`, { redirect: "manual" });
    const g = new URL(gh2.headers.get("location")!);
    expect(g.origin + g.pathname).toBe(`${gh.url}/login/oauth/authorize`);
    expect(g.searchParams.get("scope")).toBe("read:user user:email");
    expect(g.searchParams.get("code_challenge_method")).toBe("S256");
    expect(g.searchParams.get("redirect_uri")).toBe(`${t.url}/auth/sso/github/callback`);
  });

  test("an unknown provider is a 404", async () => {
    const res = await fetch(`${t.url}/auth/sso/facebook/start`, { redirect: "manual" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.type).toBe("not_found_error");
  });

  let aliceToken: string;
  test("a good sign-in creates the member, and the bearer in the fragment works like a per-user token", async () => {
    const { res } = await signIn(t, "oidc");
    expect(res.status).toBe(302);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    aliceToken = tokenOf(res)!;
    expect(aliceToken).toBeDefined();
    const alice = (await users(t)).find((u) => u.email === "alice@example.com");
    expect(alice).toMatchObject({ role: "member", status: "active", display_name: "Alice", sign_in: ["oidc"] });

    const threads = await t.api("/api/chat/threads", { token: aliceToken });
    expect(threads.status).toBe(200);
    const r = await t.respond({ model: "default", input: "hello" }, aliceToken);
    expect(r.status).toBe(200);
    const thread = (await client(t).execute({ sql: "SELECT user_id FROM threads ORDER BY created_at DESC LIMIT 1", args: [] })).rows[0]!;
    expect(thread.user_id).toBe(alice.user_id);
    // stored hashed, and never written to the log
    const stored = (await client(t).execute("SELECT hash, provider, created_at, expires_at FROM sso_sessions")).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0]!.hash).not.toBe(aliceToken);
    expect(stored[0]!.provider).toBe("oidc");
    expect(Number(stored[0]!.expires_at) - Number(stored[0]!.created_at)).toBe(30 * 86_400_000);
    expect(t.logLines.join("\n")).not.toContain(aliceToken);
    expect(t.logs).toContain(`sso oidc: alice@example.com signed in as user ${alice.user_id} (created as a member)`);
  });

  test("signing in again finds the same user; the second session is a new bearer", async () => {
    const { res } = await signIn(t, "oidc");
    const token = tokenOf(res)!;
    expect(token).not.toBe(aliceToken);
    expect((await users(t)).filter((u) => u.email === "alice@example.com")).toHaveLength(1);
    expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
  });

  test("a replayed callback (same state, same browser) is a plain-text 401 and makes no session", async () => {
    const first = await signIn(t, "oidc");
    expect(tokenOf(first.res)).toBeDefined();
    const sessions = await sessionRows(t);
    const replay = await fetch(first.callback, { redirect: "manual", headers: { cookie: first.cookie } });
    await expectPlain(replay, 401, UNAUTHORIZED);
    expect(await sessionRows(t)).toBe(sessions);
  });

  test("a wrong state, a missing cookie or another browser's cookie is a 401; the code is never exchanged", async () => {
    const before = { tokens: idp.log.tokenRequests, sessions: await sessionRows(t) };
    const wrongState = await signIn(t, "oidc", { edit: (u) => u.searchParams.set("state", "x".repeat(43)) });
    await expectPlain(wrongState.res, 401, UNAUTHORIZED);
    await expectPlain((await signIn(t, "oidc", { cookie: false })).res, 401, UNAUTHORIZED);
    await expectPlain((await signIn(t, "oidc", { cookie: `service_sso=${"0".repeat(64)}` })).res, 401, UNAUTHORIZED);
    // a state of one provider is no good at another's callback
    const crossed = await signIn(t, "oidc", { edit: (u) => (u.pathname = "/auth/sso/github/callback") });
    await expectPlain(crossed.res, 401, UNAUTHORIZED);
    expect(idp.log.tokenRequests).toBe(before.tokens);
    expect(await sessionRows(t)).toBe(before.sessions);
  });

  test("the provider's error (the person said no) is a 401", async () => {
    const res = await signIn(t, "oidc", { edit: (u) => (u.search = `?error=access_denied&state=${u.searchParams.get("state")}`) });
    await expectPlain(res.res, 401, UNAUTHORIZED);
  });

  describe("a bad ID token is a plain-text 401, and nothing is created", () => {
    const cases: { name: string; set: (idp: FakeOidc) => void; why: string }[] = [
      { name: "a wrong nonce", set: (i) => (i.tamper = { nonce: "not-the-nonce-that-was-sent" }), why: 'unexpected ID Token "nonce" claim value' },
      { name: "a signature by a key not in the issuer's JWKS", set: (i) => (i.tamper = { foreignKey: true }), why: "JWT signature verification failed" },
      { name: "an expired token", set: (i) => (i.tamper = { expiredS: 600 }), why: '"exp" (expiration time) claim value, expiration is past' },
      { name: "another audience", set: (i) => (i.tamper = { aud: "someone-else" }), why: '"aud" (audience)' },
      { name: "another issuer", set: (i) => (i.tamper = { iss: "http://127.0.0.1:1" }), why: '"iss" (issuer)' },
      {
        name: "an unverified email",
        set: (i) => (i.person = { ...i.person, email_verified: false }),
        why: "no verified email address: it says mallory@example.com is not verified (email_verified)",
      },
      { name: "no email at all", set: (i) => (i.person = { sub: i.person.sub }), why: "no verified email" },
    ];
    for (const c of cases) {
      test(c.name, async () => {
        const before = { users: (await users(t)).length, sessions: await sessionRows(t), logs: t.logs.length };
        idp.person = { sub: "mallory-sub", email: "mallory@example.com", email_verified: true, name: "Mallory" };
        c.set(idp);
        try {
          const { res } = await signIn(t, "oidc");
          await expectPlain(res, 401, UNAUTHORIZED);
        } finally {
          idp.tamper = {};
          idp.person = { sub: "alice-sub", email: "alice@example.com", email_verified: true, name: "Alice" };
        }
        expect((await users(t)).length).toBe(before.users);
        expect(await sessionRows(t)).toBe(before.sessions);
        expect(t.logs.slice(before.logs).filter((l) => l.startsWith("sso oidc: sign-in refused: "))).toEqual([expect.stringContaining(c.why)]);
      });
    }
  });

  test("the email only in the userinfo answer (as Authelia and others do) is read from there", async () => {
    idp.emailOnlyInUserinfo = true;
    idp.person = { sub: "dora-sub", email: "dora@example.com", email_verified: true, name: "Dora" };
    const calls = idp.log.userinfo;
    try {
      const { res } = await signIn(t, "oidc");
      expect(tokenOf(res)).toBeDefined();
    } finally {
      idp.emailOnlyInUserinfo = false;
      idp.person = { sub: "alice-sub", email: "alice@example.com", email_verified: true, name: "Alice" };
    }
    expect(idp.log.userinfo).toBe(calls + 1);
    expect((await users(t)).some((u) => u.email === "dora@example.com")).toBe(true);
  });

  test("an email outside the allowed domains is the plain-text 403 Forbidden, and nothing is created", async () => {
    idp.person = { sub: "eve-sub", email: "eve@elsewhere.org", email_verified: true, name: "Eve" };
    const before = { users: (await users(t)).length, sessions: await sessionRows(t) };
    try {
      await expectPlain((await signIn(t, "oidc")).res, 403, "Forbidden");
    } finally {
      idp.person = { sub: "alice-sub", email: "alice@example.com", email_verified: true, name: "Alice" };
    }
    expect((await users(t)).length).toBe(before.users);
    expect(await sessionRows(t)).toBe(before.sessions);
  });

  test("GitHub: the verified email in an allowed domain signs in (primary first); the API is called with a User-Agent", async () => {
    const { res, authorize } = await signIn(t, "github");
    const token = tokenOf(res)!;
    expect(token).toBeDefined();
    expect(authorize.searchParams.get("state")).toBeTruthy();
    expect(gh.log.refused).toEqual([]);
    expect(gh.log.apiCalls).toEqual(["/api/user", "/api/user/emails"]);
    const bob = (await users(t)).find((u) => u.email === "bob@example.com");
    expect(bob).toMatchObject({ role: "member", display_name: "Bob", sign_in: ["github"] });
    expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
  });

  test("GitHub: only unverified emails in the allowed domain → 403; no verified email at all → 401", async () => {
    const saved = structuredClone(gh.person);
    try {
      gh.person.emails = [
        { email: "carl@example.com", primary: true, verified: false, visibility: null },
        { email: "carl@elsewhere.org", primary: false, verified: true, visibility: null },
      ];
      await expectPlain((await signIn(t, "github")).res, 403, "Forbidden");
      gh.person.emails = [{ email: "carl@example.com", primary: true, verified: false, visibility: null }];
      await expectPlain((await signIn(t, "github")).res, 401, UNAUTHORIZED);
    } finally {
      gh.person = saved;
    }
    expect((await users(t)).some((u) => u.email?.startsWith("carl@"))).toBe(false);
  });

  test("GitHub: a wrong client secret (GitHub's HTTP 200 error body) is a 401", async () => {
    const secret = gh.clientSecret;
    gh.clientSecret = "rotated-at-github";
    try {
      await expectPlain((await signIn(t, "github")).res, 401, UNAUTHORIZED);
    } finally {
      gh.clientSecret = secret;
    }
  });

  describe("the session's life", () => {
    const fresh = async () => tokenOf((await signIn(t, "oidc")).res)!;
    const alice = async () => (await users(t)).find((u) => u.email === "alice@example.com")!;

    test("POST /auth/logout ends the session at once; the bearer is then a 401", async () => {
      const token = await fresh();
      expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
      const out = await t.api("/auth/logout", { method: "POST", token });
      expect(out.status).toBe(204);
      await expectPlain(await t.api("/api/chat/threads", { token }), 401, UNAUTHORIZED);
      await expectPlain(await t.api("/auth/logout", { method: "POST", token }), 401, UNAUTHORIZED);
      await expectPlain(await t.api("/auth/logout", { method: "POST", token: null }), 401, UNAUTHORIZED);
    });

    test("logout with a per-user token or the instance token ends nothing", async () => {
      const { token } = await t.createUser("member");
      expect((await t.api("/auth/logout", { method: "POST", token })).status).toBe(204);
      expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
      expect((await t.api("/auth/logout", { method: "POST" })).status).toBe(204);
      expect((await t.api("/api/status")).status).toBe(200);
    });

    test("a suspended user's sessions end at once, and stay ended when the user is active again", async () => {
      const token = await fresh();
      const user = await alice();
      expect((await t.api("/api/chat/threads", { token })).status).toBe(200); // now in the 30 s cache
      const patch = (status: string) => t.api(`/api/webchat/v2/admin/users/${user.user_id}`, { method: "PATCH", json: { status } });
      expect((await patch("suspended")).status).toBe(200);
      await expectPlain(await t.api("/api/chat/threads", { token }), 401, UNAUTHORIZED);
      // signing in again while suspended is refused too
      await expectPlain((await signIn(t, "oidc")).res, 401, UNAUTHORIZED);
      expect((await patch("active")).status).toBe(200);
      await expectPlain(await t.api("/api/chat/threads", { token }), 401, UNAUTHORIZED);
      expect((await t.api("/api/chat/threads", { token: await fresh() })).status).toBe(200);
    });

    test("a new token for the user ends their sessions at once; the user list says how they sign in", async () => {
      const token = await fresh();
      const user = await alice();
      expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
      const rotated = await t.api(`/api/webchat/v2/admin/users/${user.user_id}/token`, { method: "POST" });
      expect(rotated.status).toBe(200);
      await expectPlain(await t.api("/api/chat/threads", { token }), 401, UNAUTHORIZED);
      expect((await alice()).sign_in).toEqual(["token", "oidc"]);
      expect((await users(t)).find((u) => u.user_id === "owner").sign_in).toEqual(["instance_token"]);
    });

    test("an expired session is a 401", async () => {
      const token = await fresh();
      await client(t).execute({ sql: "UPDATE sso_sessions SET expires_at = ? WHERE expires_at > ?", args: [Date.now() - 1, Date.now()] });
      await expectPlain(await t.api("/api/chat/threads", { token }), 401, UNAUTHORIZED);
    });

    test("deleting the user ends their sessions, and their sign-in records go with them", async () => {
      idp.person = { sub: "fred-sub", email: "fred@example.com", email_verified: true, name: "Fred" };
      let token: string;
      try {
        token = await fresh();
      } finally {
        idp.person = { sub: "alice-sub", email: "alice@example.com", email_verified: true, name: "Alice" };
      }
      const fred = (await users(t)).find((u) => u.email === "fred@example.com");
      expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
      expect((await t.api(`/api/webchat/v2/admin/users/${fred.user_id}`, { method: "DELETE" })).status).toBe(204);
      await expectPlain(await t.api("/api/chat/threads", { token }), 401, UNAUTHORIZED);
      for (const table of ["sso_sessions", "sso_identities"]) {
        const n = (await client(t).execute({ sql: `SELECT count(*) AS n FROM ${table} WHERE user_id = ?`, args: [fred.user_id] })).rows[0]!.n;
        expect(Number(n)).toBe(0);
      }
    });
  });

  test("the token store down: a session bearer and a callback both get the plain-text 503 Database unavailable", async () => {
    const token = tokenOf((await signIn(t, "oidc")).res)!;
    // a sign-in that is at the provider when the store goes down
    const start = await fetch(`${t.url}/auth/sso/oidc/start`, { redirect: "manual" });
    const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
    const back = new URL((await fetch(start.headers.get("location")!, { redirect: "manual" })).headers.get("location")!);
    const db = client(t);
    db.close();
    try {
      await expectPlain(await t.api("/api/chat/threads", { token }), 503, "Database unavailable");
      await expectPlain(await fetch(back, { redirect: "manual", headers: { cookie } }), 503, "Database unavailable");
    } finally {
      await db.reconnect();
    }
    expect((await t.api("/api/chat/threads", { token })).status).toBe(200);
  });
});

describe("single sign-on without autoCreate, behind a public URL", () => {
  let idp: FakeOidc;
  let t: TestService;
  beforeAll(async () => {
    idp = await startFakeOidc();
    t = await startTestService({
      config: { auth: { sso: { oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }, publicUrl: "https://agent.example.com/", sessionDays: 2 } } },
    });
  });
  afterAll(async () => {
    await t.stop();
    idp.stop();
  });

  test("the redirect URI is the public URL's; the binding cookie is Secure there", async () => {
    const start = await fetch(`${t.url}/auth/sso/oidc/start`, { redirect: "manual" });
    expect(new URL(start.headers.get("location")!).searchParams.get("redirect_uri")).toBe("https://agent.example.com/auth/sso/oidc/callback");
    expect(start.headers.get("set-cookie")).toEndWith("; Secure");
    expect(await (await fetch(`${t.url}/auth/sso/providers`)).json()).toEqual({ providers: [{ id: "oidc", name: "Single sign-on" }] });
  });

  test("an email no user has → plain-text 403, and no user is created", async () => {
    const before = (await users(t)).length;
    await expectPlain((await signIn(t, "oidc")).res, 403, "Forbidden");
    expect((await users(t)).length).toBe(before);
    expect(await sessionRows(t)).toBe(0);
  });

  test("an existing user with that email (any case) signs in as themselves, for sessionDays", async () => {
    const created = await t.api("/api/webchat/v2/admin/users", { method: "POST", json: { role: "admin", email: "Alice@Example.COM" } });
    const { user } = (await created.json()) as any;
    const { res } = await signIn(t, "oidc");
    const token = tokenOf(res)!;
    expect(token).toBeDefined();
    // the session is the admin's: the admin routes answer it
    expect((await t.api("/api/webchat/v2/admin/users", { token })).status).toBe(200);
    const row = (await client(t).execute("SELECT user_id, created_at, expires_at FROM sso_sessions")).rows[0]!;
    expect(row.user_id).toBe(user.user_id);
    expect(Number(row.expires_at) - Number(row.created_at)).toBe(2 * 86_400_000);
    expect((await users(t)).find((u) => u.user_id === user.user_id).sign_in).toEqual(["token", "oidc"]);
  });

  test("two users with the same email: refused (403) rather than a guess", async () => {
    await t.api("/api/webchat/v2/admin/users", { method: "POST", json: { role: "member", email: "alice@example.com" } });
    await expectPlain((await signIn(t, "oidc")).res, 403, "Forbidden");
  });
});

describe("no single sign-on configured", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t.stop());

  test("the sign-in card gets no providers, and every provider route is a 404", async () => {
    expect(await (await fetch(`${t.url}/auth/sso/providers`)).json()).toEqual({ providers: [] });
    for (const id of ["google", "github", "oidc"]) {
      expect((await fetch(`${t.url}/auth/sso/${id}/start`, { redirect: "manual" })).status).toBe(404);
      expect((await fetch(`${t.url}/auth/sso/${id}/callback?state=x&code=y`, { redirect: "manual" })).status).toBe(404);
    }
  });
});

describe("a provider that cannot be reached", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ config: { auth: { sso: { oidc: { issuer: "http://127.0.0.1:1", clientId: "c", clientSecret: "s" } } } } });
  });
  afterAll(() => t.stop());

  test("start is a 503 that says so; the service goes on", async () => {
    const res = await fetch(`${t.url}/auth/sso/oidc/start`, { redirect: "manual" });
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body.error.type).toBe("server_error");
    expect(body.error.message).toStartWith("Single sign-on could not be reached to sign in: ");
    expect(res.headers.get("set-cookie")).toBeNull();
    expect((await t.api("/api/status")).status).toBe(200);
  });
});
