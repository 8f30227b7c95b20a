// The compiled binary serves the web UI embedded in it: run from an empty directory with no
// node_modules and no source, sign in with Chromium, and chat with a scripted LLM.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawn, type Subprocess } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

setDefaultTimeout(60_000);

const root = resolve(import.meta.dir, "../..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const TOKEN = "web-binary-token-0123456789abcdef0123";

let llm: ScriptedLLM;
let dir: string;
let proc: Subprocess<"ignore", "pipe", "pipe">;
let url: string;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(BIN)) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build failed");
  }
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-web-e2e-"));
  proc = spawn([BIN, "serve"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      SERVICE_HOME: join(dir, "home"),
      GATEWAY_HOST: "127.0.0.1",
      GATEWAY_PORT: "0",
      CLI_ENABLED: "false",
      SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: "k",
      LLM_MODEL: "scripted-model",
    },
    stdout: "pipe",
    stderr: "pipe",
  }) as Subprocess<"ignore", "pipe", "pipe">;
  // ready when it prints its URL
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited early: ${out}${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  void (async () => {
    while (!(await reader.read()).done);
  })();
});

afterAll(async () => {
  await browser?.close();
  proc?.kill("SIGTERM");
  await proc?.exited;
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the binary's web UI", () => {
  test("serves index.html and hashed assets from the embedded copy", async () => {
    const page = await fetch(`${url}/login?token=${TOKEN}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).not.toContain(TOKEN);
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(url + script);
    expect(js.status).toBe(200);
    expect(js.headers.get("cache-control")).toContain("immutable");
  });

  test.skipIf(!hasChromium)("signs in and chats in Chromium", async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${url}/login?token=${TOKEN}`);
    await page.locator(".topbar").waitFor();
    expect(page.url()).toBe(`${url}/`);
    llm.enqueue({ text: "Hello from the **binary**.", chunks: 3 });
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("hi");
    await box.press("Enter");
    await page.locator(".msg.assistant strong", { hasText: "binary" }).waitFor();
  });
});
