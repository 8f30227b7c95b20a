// The OAuth connect flow as a person goes through it, in real headless Chromium: a chat
// message whose tool belongs to an unconnected oauth2 WebAssembly extension shows the
// Connect card; the card opens the connect page in a new tab, which goes to the (loopback)
// authorization server, which sends the browser back to /oauth/callback; the page says it is
// connected, the waiting turn goes on with the user's access token, and the answer is in the
// chat, live and when the thread is opened again. Every wait is on a selector, a URL or an
// event, never a fixed sleep.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import type { TestService } from "../support/harness";
import { startAuthorizationServer, writeGithubExtension, type AuthorizationServer } from "./oauth-server";
import { allLlmText, startWithExtensions, tempDir, toolMessages } from "./support";

setDefaultTimeout(30_000);

const TOOL = "ext__github__fetch_me";
const QUESTION = "Who am I on GitHub?";
const ANSWER = "You are alice on GitHub.";

let t: TestService;
let as: AuthorizationServer;
let tmp: ReturnType<typeof tempDir>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
/** Every page the browser loaded (new tabs from their first), in order. */
const navigations: string[] = [];

function watch(p: Page): Page {
  p.setDefaultTimeout(10_000); // fails with Playwright's own message before the test times out
  p.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  p.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
  });
  return p;
}

beforeAll(async () => {
  if (!hasChromium) return;
  tmp = tempDir();
  as = startAuthorizationServer();
  const source = writeGithubExtension(tmp.dir, as);
  t = await startWithExtensions([source]);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  context.on("request", (r) => {
    if (r.resourceType() === "document") navigations.push(r.url());
  });
  page = watch(await context.newPage());
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  as?.stop();
  tmp?.cleanup();
});

describe.skipIf(!hasChromium)("connecting an OAuth extension from the web UI, in Chromium", () => {
  let threadId: string;

  test("a chat message whose tool needs the extension shows the Connect card; the tool does not run", async () => {
    await page.goto(`${t.url}/login?token=${t.token}`);
    await page.locator(".topbar").waitFor();
    await page.getByText("What can I help with?").waitFor();

    t.llm.enqueue({ text: "Let me look you up.", toolCalls: [{ name: TOOL, arguments: {} }] });
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill(QUESTION);
    await box.press("Enter");
    await page.locator(".msg.user", { hasText: QUESTION }).waitFor();

    const card = page.getByRole("region", { name: "Connection needed" });
    await card.waitFor();
    expect(await card.locator("code").innerText()).toBe(TOOL);
    expect(await card.locator("strong").innerText()).toBe("github");
    await page.waitForURL(/\/\?thread=[0-9a-f-]{36}$/);
    threadId = new URL(page.url()).searchParams.get("thread")!;
    const link = card.getByRole("link", { name: "Connect github" });
    expect(await link.getAttribute("href")).toBe(`${t.url}/extensions/connect/github?thread=${threadId}`);
    await page.locator("button.send:visible").waitFor(); // the turn ended, waiting on the connection

    expect(as.log.authorizations).toHaveLength(0);
    expect(as.log.meAuth).toHaveLength(0);
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as any;
    expect(history.waiting).toMatchObject({ kind: "oauth", tool: TOOL, extension: "github" });
  });

  test("Connect → authorization server → /oauth/callback says connected, and the waiting turn goes on with the access token", async () => {
    t.llm.enqueue({ text: ANSWER });
    const requestsBefore = t.llm.chatRequests().length;
    const opened = context.waitForEvent("page");
    await page.getByRole("region", { name: "Connection needed" }).getByRole("link", { name: "Connect github" }).click();
    const tab = watch(await opened);

    // the connect page (signed in through the web UI's stored token) → the authorization server → back
    await tab.waitForURL((u) => u.pathname === "/oauth/callback");
    await tab.getByRole("heading", { name: "Connected" }).waitFor();
    await tab.getByText("The extension github is connected. You can close this tab.").waitFor();
    expect(new URL(tab.url()).origin).toBe(t.url);

    const connectAt = navigations.findIndex((u) => u.startsWith(`${t.url}/extensions/connect/github?thread=${threadId}`));
    const authorizeAt = navigations.findIndex((u) => u.startsWith(`${as.origin}/authorize?`));
    const callbackAt = navigations.findIndex((u) => u.startsWith(`${t.url}/oauth/callback?`));
    expect(connectAt).toBeGreaterThanOrEqual(0);
    expect(authorizeAt).toBeGreaterThan(connectAt);
    expect(callbackAt).toBeGreaterThan(authorizeAt);
    expect(as.log.authorizations).toHaveLength(1);
    expect(as.log.authorizations[0]!.get("redirect_uri")).toBe(`${t.url}/oauth/callback`);
    expect(as.log.badVerifiers).toBe(0);

    // the first tab, still open on the thread, sees the turn go on: the tool ran, the answer came
    await page.locator(".tool[data-state=done] .tool-name", { hasText: TOOL }).waitFor();
    await page.locator(".msg.assistant", { hasText: ANSWER }).waitFor();
    await page.locator("button.send:visible").waitFor();
    // the card it waited on is gone in this tab too, without a reload
    expect(await page.getByRole("region", { name: "Connection needed" }).count()).toBe(0);

    // the tool called the resource with the user's access token; the model got the result, never the token
    const [issued] = [...as.accessTokens.keys()];
    expect(issued).toBeDefined();
    expect(as.log.meAuth).toEqual([`Bearer ${issued}`]);
    expect(t.llm.chatRequests().length).toBe(requestsBefore + 1);
    expect(toolMessages(t).some((m) => m.content.includes('{\\"user\\":\\"alice\\"}'))).toBe(true);
    expect(allLlmText(t)).not.toContain(issued!);
    await tab.close();
  });

  test("going back to the thread shows the answer, and the connection is no longer asked for", async () => {
    const other = watch(await context.newPage());
    try {
      await other.goto(`${t.url}/`);
      await other.locator(".topbar").waitFor();
      await other.locator(".thread", { hasText: QUESTION }).click();
      await other.waitForURL(`${t.url}/?thread=${threadId}`);
      await other.locator(".msg.assistant", { hasText: ANSWER }).waitFor();
      await other.locator(".tool[data-state=done] .tool-name", { hasText: TOOL }).waitFor();
      expect(await other.getByRole("region", { name: "Connection needed" }).count()).toBe(0);
      expect(await other.locator(".thread .badge", { hasText: "needs connection" }).count()).toBe(0);
    } finally {
      await other.close();
    }
    const list = (await (await t.api("/api/extensions")).json()) as any;
    expect(list.extensions[0]).toMatchObject({ name: "github", authorized: true });
  });

  test("no script errors along the way", () => {
    expect(pageErrors).toEqual([]);
  });
});
