// Single sign-on as a person goes through it, in headless Chromium: the sign-in card's
// provider button, a real OpenID Connect provider's own login and consent pages (oidc-provider
// on loopback), back in the web UI as that user, a chat turn, Sign out; GitHub's button with
// its loopback stand-in; and a session that stops working the moment its user is suspended.
// The browser may reach loopback only (the provider's page links a web font: refused here).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { startFakeGithub, type FakeGithub } from "../support/fake-idp";
import { startTestService, type TestService } from "../support/harness";
import { listenOidcProvider, type RealOidc } from "../support/oidc-provider";

setDefaultTimeout(30_000);

let op: RealOidc;
let gh: FakeGithub;
let t: TestService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let alice: { user_id: string };
const pageErrors: string[] = [];
const refused: string[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  op = await listenOidcProvider({ alice: { email: "alice@example.com", name: "Alice Liddell" } });
  gh = startFakeGithub();
  t = await startTestService({
    config: {
      auth: {
        sso: {
          github: gh.settings(),
          oidc: { issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, name: "Home SSO" },
          allowedDomains: ["example.com"],
          autoCreate: true,
        },
      },
    },
  });
  await op.serve([`${t.url}/auth/sso/oidc/callback`]);
  alice = (await (await t.api("/api/webchat/v2/admin/users", { method: "POST", json: { role: "member", email: "alice@example.com", display_name: "Alice" } })).json() as any).user;

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.route("**/*", (route) => {
    const host = new URL(route.request().url()).hostname;
    if (host === "127.0.0.1") return route.continue();
    refused.push(route.request().url());
    return route.abort();
  });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    // the provider's own pages are not ours to judge
    if (m.type() === "error" && page.url().startsWith(t.url)) pageErrors.push(`console: ${m.text()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await op?.stop();
  gh?.stop();
});

const storedToken = () => page.evaluate(() => localStorage.getItem("service.token"));

describe.skipIf(!hasChromium)("signing in with an identity provider, in Chromium", () => {
  let token: string;

  test("the sign-in card offers a button per provider", async () => {
    await page.goto(`${t.url}/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.getByRole("link", { name: "Sign in with Home SSO" }).waitFor();
    await page.getByRole("link", { name: "Sign in with GitHub" }).waitFor();
    // the token form is still there
    await page.getByLabel("Access token").waitFor();
  });

  test("button → the provider's login page → back in the web UI as that user", async () => {
    await page.getByRole("link", { name: "Sign in with Home SSO" }).click();
    await page.waitForURL((u) => u.origin === op.issuer);
    await page.locator("input[name=login]").fill("alice");
    await page.locator("input[name=password]").fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click(); // the provider's consent page
    await page.locator(".topbar").waitFor();
    await page.getByText("What can I help with?").waitFor();
    // the bearer is kept like a per-user token, and gone from the address bar and the history
    expect(page.url()).toBe(`${t.url}/`);
    token = (await storedToken())!;
    expect(token).toMatch(/^sso_[0-9a-f]{64}$/);
    expect(op.tokenRequests).toBe(1);
    const users = ((await (await t.api("/api/webchat/v2/admin/users")).json()) as any).users;
    expect(users.filter((u: any) => u.email === "alice@example.com")).toEqual([expect.objectContaining({ user_id: alice.user_id, sign_in: ["token", "oidc"] })]);
  });

  test("a chat turn runs as that user", async () => {
    t.llm.enqueue({ text: "Hello Alice, signed in through your provider." });
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("Who signed me in?");
    await box.press("Enter");
    await page.locator(".msg.assistant", { hasText: "Hello Alice, signed in through your provider." }).waitFor();
    await page.waitForURL(/\/\?thread=[0-9a-f-]{36}$/);
    const threadId = new URL(page.url()).searchParams.get("thread")!;
    // the thread is Alice's: her token sees it, the owner's list does not
    const mine = ((await (await t.api("/api/chat/threads", { token })).json()) as any).threads.map((th: any) => th.id ?? th.thread_id);
    expect(mine).toContain(threadId);
    const owners = ((await (await t.api("/api/chat/threads")).json()) as any).threads.map((th: any) => th.id ?? th.thread_id);
    expect(owners).not.toContain(threadId);
  });

  test("Sign out ends the session on the service", async () => {
    const logout = page.waitForResponse((r) => r.url() === `${t.url}/auth/logout`);
    await page.getByRole("button", { name: "Sign out" }).click();
    expect((await logout).status()).toBe(204);
    await page.getByText("You are signed out.").waitFor();
    expect(await storedToken()).toBeNull();
    expect((await t.api("/api/chat/threads", { token })).status).toBe(401);
  });

  test("GitHub's button signs in through the stand-in", async () => {
    gh.person = { id: 7, login: "alice-gh", name: "Alice on GitHub", emails: [{ email: "alice@example.com", primary: true, verified: true, visibility: null }] };
    await page.getByRole("link", { name: "Sign in with GitHub" }).click();
    await page.locator(".topbar").waitFor();
    const again = (await storedToken())!;
    expect(again).toMatch(/^sso_/);
    expect(again).not.toBe(token);
    expect(gh.log.apiCalls).toEqual(["/api/user", "/api/user/emails"]);
    expect((await t.api("/api/chat/threads", { token: again })).status).toBe(200);
    token = again;
  });

  test("suspended, the session stops at once: the web UI is sent back to the sign-in card", async () => {
    const errorsBefore = pageErrors.length;
    // the open page is left first: its event stream, refused at its next keepalive, would
    // otherwise sign it out while it reloads, and the reloaded page would find no token at all
    const url = page.url();
    await page.goto("about:blank");
    const patch = await t.api(`/api/webchat/v2/admin/users/${alice.user_id}`, { method: "PATCH", json: { status: "suspended" } });
    expect(patch.status).toBe(200);
    await page.goto(url);
    await page.getByText("Your token is no longer accepted. Sign in again.").waitFor();
    expect(await storedToken()).toBeNull();
    expect((await t.api("/api/chat/threads", { token })).status).toBe(401);
    // the browser reports the refused requests themselves; nothing else
    const refusals = pageErrors.splice(errorsBefore);
    expect(refusals.every((e) => e.includes("status of 401"))).toBe(true);
    // a reload of the whole web UI: slow on a loaded two-core machine
  }, 30_000);

  test("nothing left loopback, and no script errors on the service's pages", () => {
    expect(refused.every((u) => new URL(u).hostname === "fonts.googleapis.com")).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
