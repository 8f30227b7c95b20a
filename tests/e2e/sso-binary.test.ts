// Single sign-on through the compiled binary, as an operator sets it up: config.json with an
// `oidc` provider pointing at an OpenID Connect issuer (oidc-provider on loopback), `service
// doctor` checking its discovery document, then `serve` and a person signing in with Chromium
// through the provider's login page, chatting and signing out. Run from a directory with no
// node_modules, so the client library is the one embedded in the binary.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawn } from "bun";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { BIN, ensureBinary, listeningUrl, serveUntil, type Served } from "../support/binary";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { listenOidcProvider, type RealOidc } from "../support/oidc-provider";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

setDefaultTimeout(60_000);

let dir: string;
let llm: ScriptedLLM;
let op: RealOidc;
let port: number;
let served: Served<string> | undefined;
let browser: Browser | undefined;

const env = () => ({
  PATH: process.env.PATH ?? "",
  HOME: dir,
  SERVICE_HOME: join(dir, "home"),
  CLI_ENABLED: "false",
  LLM_BASE_URL: llm.url,
  LLM_API_KEY: "k",
  LLM_MODEL: "scripted-model",
});

/** A port nothing listens on now, for a gateway whose redirect URI must be known in advance. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  if (!hasChromium) return;
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "service-sso-e2e-"));
  llm = await startScriptedLLM();
  op = await listenOidcProvider({ ada: { email: "ada@example.com", name: "Ada Lovelace" } });
  port = await freePort();
  await op.serve([`http://127.0.0.1:${port}/auth/sso/oidc/callback`]);
  mkdirSync(join(dir, "home"), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(dir, "home", "config.json"),
    JSON.stringify({
      gateway: { host: "127.0.0.1", port },
      auth: { sso: { oidc: { issuer: op.issuer, clientId: op.clientId, clientSecret: op.clientSecret, name: "Home SSO" }, allowedDomains: ["example.com"], autoCreate: true } },
    }),
  );
});

afterAll(async () => {
  await browser?.close();
  served?.proc.kill("SIGTERM");
  await served?.proc.exited;
  await op?.stop();
  await llm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasChromium)("the binary with an OpenID Connect provider", () => {
  test("service doctor checks the provider's discovery document and says the redirect URI", async () => {
    const p = spawn([BIN, "doctor"], { cwd: dir, env: env(), stdout: "pipe", stderr: "pipe" });
    const [, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
    expect(out).toContain(`ok    sso oidc      ${op.issuer}: discovery document ok; redirect URI http://127.0.0.1:${port}/auth/sso/oidc/callback\n`);
  });

  test("a person signs in through the provider's login page, chats as themselves and signs out", async () => {
    served = await serveUntil(["serve"], { cwd: dir, env: env() }, listeningUrl);
    const url = served.ready;
    expect(url).toBe(`http://127.0.0.1:${port}`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext();
    await context.route("**/*", (route) => (new URL(route.request().url()).hostname === "127.0.0.1" ? route.continue() : route.abort()));
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);

    await page.goto(`${url}/`);
    await page.getByRole("link", { name: "Sign in with Home SSO" }).click();
    await page.locator("input[name=login]").fill("ada");
    await page.locator("input[name=password]").fill("whatever");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.locator(".topbar").waitFor();
    expect(page.url()).toBe(`${url}/`);
    const token = (await page.evaluate(() => localStorage.getItem("service.token")))!;
    expect(token).toMatch(/^sso_[0-9a-f]{64}$/);

    llm.enqueue({ text: "Hello Ada." });
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("Hello?");
    await box.press("Enter");
    await page.locator(".msg.assistant", { hasText: "Hello Ada." }).waitFor();

    const logout = page.waitForResponse((r) => r.url() === `${url}/auth/logout`);
    await page.getByRole("button", { name: "Sign out" }).click();
    expect((await logout).status()).toBe(204);
    await page.getByText("You are signed out.").waitFor();
    const after = await fetch(`${url}/api/chat/threads`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
    expect(await after.text()).toBe("Invalid or missing auth token");

    const out = served.output();
    expect(out).toMatch(/sso oidc: ada@example\.com signed in as user [0-9a-f-]{36} \(created as a member\)/);
    expect(out).not.toContain(token);
  });
});
