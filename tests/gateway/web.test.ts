// The web UI in real headless Chromium, against the service started in-process with a
// scripted LLM. Every wait is on a selector, a URL or an event, never a fixed sleep.
//
// UPDATE_SCREENSHOTS=1 bun test tests/gateway/web.test.ts   rewrites docs/screenshots/*.png
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Type } from "@sinclair/typebox";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { defineTool } from "../../src/tools/tool";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { startTestService, type TestService } from "../support/harness";
import { thinkTags } from "../support/provider-wires";

setDefaultTimeout(30_000);

const SHOTS = process.env.UPDATE_SCREENSHOTS ? resolve(import.meta.dir, "../../docs/screenshots") : mkdtempSync(join(tmpdir(), "web-shots-"));

let t: TestService;
let browser: Browser;
let page: Page;
let weatherRuns = 0;
const pageErrors: string[] = [];

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function newPage(viewport: { width: number; height: number }, mobile = false): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: mobile ? 2 : 1, isMobile: mobile, hasTouch: mobile, colorScheme: "light" });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000); // fails with Playwright's own message before the test times out
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
  });
  page.on("dialog", (d) => {
    pageErrors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return { context, page };
}

/** Types a message and sends it with Enter. */
async function send(p: Page, text: string): Promise<void> {
  const box = p.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

const lastAssistant = (p: Page) => p.locator(".msg.assistant").last();

/** Waits until no turn runs in the open conversation (the Send button is back). */
const idle = (p: Page) => p.locator("button.send:visible").waitFor();

beforeAll(async () => {
  if (!hasChromium) return;
  t = await startTestService({ env: { TOOLS_ASK: "fetch_weather" } });
  t.service.services.tools.register(
    defineTool({
      name: "fetch_weather",
      description: "Current weather for a city",
      parameters: Type.Object({ city: Type.String() }),
      execute: async ({ city }) => {
        weatherRuns++;
        return `${city}: 21 °C, sunny, light wind from the north-west`;
      },
    }),
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  ({ page } = await newPage(DESKTOP));
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  if (!process.env.UPDATE_SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
});

describe.skipIf(!hasChromium)("web UI in Chromium", () => {
  test("signs in with /login?token=..., then the token is gone from the address and the page", async () => {
    await page.goto(`${t.url}/login?token=${t.token}`);
    await page.locator(".topbar").waitFor();
    expect(page.url()).toBe(`${t.url}/`);
    expect(await page.content()).not.toContain(t.token);
    expect(t.logs.join("\n")).not.toContain(t.token);
    await page.getByText("What can I help with?").waitFor();
  });

  test("streams a Markdown answer and renders it", async () => {
    t.llm.enqueue({
      text: "Here is what I can do with your **notes**:\n\n- Search them by keyword or meaning\n- Summarise a document\n- Keep `USER.md` up to date\n\n```bash\nservice chat --help\n```\n",
      chunks: 8,
      chunkDelayMs: 60,
    });
    await send(page, "What can you do with my notes?");
    await page.locator(".msg.user", { hasText: "What can you do with my notes?" }).waitFor();
    // seen while it streams, then complete
    await page.locator(".msg.assistant.streaming").waitFor();
    await page.locator(".msg.assistant:not(.streaming) pre code", { hasText: "service chat --help" }).waitFor();
    const answer = lastAssistant(page);
    expect(await answer.locator("strong").innerText()).toBe("notes");
    expect(await answer.locator("li").count()).toBe(3);
    expect(await answer.locator("code").first().innerText()).toBe("USER.md");
    await page.waitForURL(/\/\?thread=[0-9a-f-]{36}$/);
    await page.locator(".thread.active", { hasText: "What can you do with my notes?" }).waitFor();
    await idle(page);
  });

  test("history survives a reload", async () => {
    await page.reload();
    await page.locator(".msg.user", { hasText: "What can you do with my notes?" }).waitFor();
    await lastAssistant(page).locator("strong", { hasText: "notes" }).waitFor();
    expect(await lastAssistant(page).locator("li").count()).toBe(3);
  });

  test("/compact summarises the earlier turns; a mark shows where, with the summary inside", async () => {
    await send(page, "And my calendar?");
    await lastAssistant(page).getByText("You said: And my calendar?").waitFor();
    await idle(page);
    t.llm.enqueue({ text: "nothing to save" }, { text: "Summary: the user asked what the agent can do with notes." });
    await send(page, "/compact");
    await page.getByText("Compacted: 2 earlier items are now a summary for the model.").waitFor();
    const order = await page.locator(".messages > *").evaluateAll((els) => els.map((e) => e.className));
    expect(order).toEqual(["msg user", "msg assistant", "compaction", "msg user", "msg assistant", "notice info"]);
    await page.locator(".compaction summary", { hasText: "Earlier turns summarised (2 items)" }).click();
    await page.locator(".compaction-summary", { hasText: "Summary: the user asked what the agent can do with notes." }).waitFor();
    await page.screenshot({ path: `${SHOTS}/compaction.png` });
    await page.reload();
    await page.locator(".compaction").waitFor();
    expect(await page.locator(".msg.user").count()).toBe(2);
  });

  test("a tool that needs approval asks; Approve runs it and the answer follows", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "fetch_weather", arguments: { city: "Lisbon" } }] }, { text: "It is **21 °C and sunny** in Lisbon right now, with a light north-westerly wind.", chunks: 4 });
    await send(page, "What's the weather in Lisbon?");
    const prompt = page.locator(".approval[data-state=pending]");
    await prompt.waitFor();
    expect(await prompt.locator("code").innerText()).toBe("fetch_weather");
    expect(await prompt.locator("pre").innerText()).toContain('"city": "Lisbon"');
    expect(weatherRuns).toBe(0);
    await idle(page);
    await page.screenshot({ path: join(SHOTS, "approval.png") });

    await prompt.getByRole("button", { name: "Approve" }).click();
    await page.locator(".approval .decided", { hasText: "Approved" }).waitFor();
    await page.locator(".tool[data-state=done] .tool-name", { hasText: "fetch_weather" }).waitFor();
    await lastAssistant(page).locator("strong", { hasText: "21 °C and sunny" }).waitFor();
    expect(weatherRuns).toBe(1);
    await idle(page);
    await page.screenshot({ path: join(SHOTS, "chat-desktop.png") });

    // the call is collapsed; opening it shows arguments and result
    const tool = page.locator(".tool").last();
    expect(await tool.getAttribute("open")).toBeNull();
    await tool.locator("summary").click();
    await tool.locator("pre", { hasText: "21 °C, sunny" }).waitFor();
    // people see the tool's output, not the <tool_output ... trust="untrusted"> wrapper the model gets
    const result = "Lisbon: 21 °C, sunny, light wind from the north-west";
    expect(await tool.locator("pre").last().innerText()).toBe(result);
    await page.reload();
    const stored = page.locator(".tool").last();
    await stored.locator("summary").click();
    await stored.locator("pre", { hasText: "21 °C, sunny" }).waitFor();
    expect(await stored.locator("pre").last().innerText()).toBe(result);
  });

  test("model output with HTML is shown as text, never run", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForURL(`${t.url}/`);
    const hostile =
      'Try <img src=x onerror="window.__pwned=1;alert(1)"> and <script>window.__pwned=2</script> or [a link](javascript:window.__pwned=3)\n\n<iframe src="javascript:alert(4)"></iframe>';
    t.llm.enqueue({ text: hostile, chunks: 5 });
    await send(page, "Show me some HTML");
    await lastAssistant(page).locator("a", { hasText: "a link" }).waitFor();
    await idle(page);
    const answer = lastAssistant(page);
    const text = await answer.innerText();
    expect(text).toContain('<img src=x onerror="window.__pwned=1;alert(1)">');
    expect(text).toContain("<script>window.__pwned=2</script>");
    expect(await page.locator(".messages img, .messages script, .messages iframe").count()).toBe(0);
    expect(await answer.locator("a").getAttribute("href")).toBeNull();
    await answer.locator("a").click();
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  test("Stop cancels a turn that hangs", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    const before = t.llm.chatRequests().length;
    t.llm.enqueue({ hang: true });
    await send(page, "Think about this for a very long time");
    await t.llm.waitForRequests(before + 1);
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator(".notice.info", { hasText: "Stopped." }).waitFor();
    await idle(page);
    const threadId = new URL(page.url()).searchParams.get("thread")!;
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as any;
    expect(history.items.map((i: any) => i.content)).toEqual(["Think about this for a very long time"]);
  });

  test("Stop while the answer is streaming: stopped, the text so far stays and is stored as cut short", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    const words = Array.from({ length: 300 }, (_, i) => `webword${i}`).join(" ");
    t.llm.enqueue({ text: words, chunkDelayMs: 20 });
    await send(page, "Stream a long answer");
    await lastAssistant(page).getByText("webword8", { exact: false }).waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator(".notice.info", { hasText: "Stopped." }).waitFor();
    await idle(page);
    const shown = await lastAssistant(page).innerText();
    expect(shown).not.toContain("webword299");
    const threadId = new URL(page.url()).searchParams.get("thread")!;
    const history = (await (await t.api(`/api/chat/history?thread_id=${threadId}`)).json()) as any;
    const answer = history.items.at(-1);
    expect(answer).toMatchObject({ role: "assistant", status: "incomplete" });
    expect(words.startsWith(answer.content)).toBe(true);
    expect(answer.content.length).toBeLessThan(words.length / 2);
    // after a reload the answer is still marked as cut short
    await page.reload();
    await page.locator(".notice.info", { hasText: "This answer was cut short." }).waitFor();
  });

  test("a failing turn shows its error in words", async () => {
    t.llm.enqueue({ error: { status: 400, message: "The model refused the request" } });
    await send(page, "This will fail");
    await page.locator(".notice.error", { hasText: "The model refused the request" }).waitFor();
    await idle(page);
  });

  test("memory: edit SOUL.md, save, and the next turn's system prompt has the edit", async () => {
    await page.getByRole("link", { name: "Memory" }).click();
    await page.waitForURL(`${t.url}/memory`);
    await page.locator(".doc", { hasText: "SOUL.md" }).click();
    await page.waitForURL(/\/memory\?path=SOUL\.md$/);
    const editor = page.getByRole("textbox", { name: "Document text" });
    await page.locator(".doc-text:enabled").waitFor();
    const original = await editor.inputValue();
    const edit = "Speak like a friendly ship's captain: short sentences, nautical words.";
    await editor.fill(`${original.trimEnd()}\n\n${edit}\n`);
    await page.getByText("Unsaved changes").waitFor();
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved", { exact: true }).waitFor();
    const stored = (await (await t.api("/api/memory/read?path=SOUL.md")).json()) as any;
    expect(stored.content).toContain(edit);
    await page.screenshot({ path: join(SHOTS, "memory-editor.png") });

    // search finds it
    await page.getByRole("searchbox", { name: "Search memory" }).fill("captain");
    await page.locator(".doc .doc-path", { hasText: "SOUL.md" }).waitFor();
    await page.getByRole("searchbox", { name: "Search memory" }).fill("");

    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("button", { name: "New chat" }).click();
    t.llm.enqueue({ text: "Aye, all hands on deck!" });
    await send(page, "Hello there");
    await lastAssistant(page).getByText("Aye, all hands on deck!").waitFor();
    expect(t.llm.lastChat().messages[0].content).toContain(edit);
    await idle(page);
  });

  test("memory: search shows the matched words in bold, and markup in a document as text", async () => {
    const doc = "Plant the tomatoes in May. <img src=x onerror=\"window.__pwned=5\"> **Water** them daily.";
    expect((await t.api("/api/memory/write", { method: "POST", json: { path: "notes/garden.md", content: doc } })).status).toBe(200);
    await page.getByRole("link", { name: "Memory" }).click();
    await page.getByRole("searchbox", { name: "Search memory" }).fill("tomatoes");
    const hit = page.locator(".doc", { hasText: "notes/garden.md" });
    await hit.locator(".snippet strong", { hasText: "tomatoes" }).waitFor();
    const snippet = await hit.locator(".snippet").innerText();
    expect(snippet).not.toContain("**tomatoes**");
    expect(snippet).toContain("<img src=x");
    expect(await page.locator(".doc-list img").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.getByRole("searchbox", { name: "Search memory" }).fill("");
  });

  test("memory: delete a document, after a confirmation", async () => {
    expect((await t.api("/api/memory/write", { method: "POST", json: { path: "notes/old-plans.md", content: "Obsolete." } })).status).toBe(200);
    await page.goto(`${t.url}/memory?path=${encodeURIComponent("notes/old-plans.md")}`);
    await page.locator(".doc-text:enabled").waitFor();
    expect(await page.getByRole("textbox", { name: "Document text" }).inputValue()).toBe("Obsolete.");
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const confirm = page.getByRole("alertdialog", { name: "Confirm deletion" });
    await confirm.getByText("Delete notes/old-plans.md? This cannot be undone.").waitFor();
    // Cancel keeps it
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "hidden" });
    expect((await t.api(`/api/memory/read?path=${encodeURIComponent("notes/old-plans.md")}`)).status).toBe(200);
    // Delete for good removes it
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await confirm.getByRole("button", { name: "Delete for good" }).click();
    await page.waitForURL(`${t.url}/memory`);
    await page.getByText("notes/old-plans.md was deleted.").waitFor();
    await page.locator(".doc", { hasText: "garden.md" }).waitFor();
    expect(await page.locator(".doc", { hasText: "old-plans.md" }).count()).toBe(0);
    expect((await t.api(`/api/memory/read?path=${encodeURIComponent("notes/old-plans.md")}`)).status).toBe(404);
  });

  test("conversations from other channels are labelled in the list", async () => {
    t.llm.enqueue({ text: "Done." });
    expect((await t.respond({ model: "m", input: "A request from a script" })).body.status).toBe("completed");
    await page.goto(`${t.url}/`);
    const row = page.locator(".thread", { hasText: "A request from a script" });
    await row.locator(".badge.channel", { hasText: "API" }).waitFor();
    expect(await page.locator(".thread", { hasText: "What can you do with my notes?" }).locator(".badge.channel").count()).toBe(0);
  });

  test("works at phone width: conversations in a drawer", async () => {
    const phone = await newPage(PHONE, true);
    try {
      await phone.page.goto(`${t.url}/login?token=${t.token}`);
      await phone.page.locator(".topbar").waitFor();
      const threads = phone.page.locator(".chat .sidebar");
      expect(await threads.evaluate((el) => el.getBoundingClientRect().right <= 0)).toBe(true);
      await phone.page.getByRole("button", { name: "Show conversations" }).click();
      await phone.page.locator(".chat.drawer-open").waitFor();
      await phone.page.locator(".thread", { hasText: "Show me some HTML" }).waitFor();
      await phone.page.locator(".thread", { hasText: "What can you do with my notes?" }).click();
      await phone.page.locator(".chat:not(.drawer-open)").waitFor();
      await phone.page.locator(".msg.assistant strong", { hasText: "21 °C and sunny" }).waitFor();
      // scrolled to the newest message (a string: this file is typed without the DOM library)
      await phone.page.waitForFunction("(b => b.scrollHeight - b.scrollTop - b.clientHeight < 2)(document.querySelector('.messages'))");
      await phone.page.screenshot({ path: join(SHOTS, "chat-phone.png") });
      // nothing is wider than the screen
      expect(await phone.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(PHONE.width);
    } finally {
      await phone.context.close();
    }
  });

  test("a conversation can be deleted: asked first, then gone from the list and the server", async () => {
    t.llm.enqueue({ text: "This one will go away." });
    await page.getByRole("button", { name: "New chat" }).click();
    await send(page, "A conversation to delete");
    await page.waitForURL(/\/\?thread=[0-9a-f-]{36}$/);
    const threadId = new URL(page.url()).searchParams.get("thread")!;
    await page.locator(".thread", { hasText: "A conversation to delete" }).waitFor();
    await idle(page);
    // the first click only asks; Keep leaves everything as it was
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByRole("button", { name: "Keep" }).click();
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByRole("button", { name: "Delete conversation" }).click();
    await page.getByText("What can I help with?").waitFor();
    expect(page.url()).toBe(`${t.url}/`);
    await page.locator(".thread", { hasText: "A conversation to delete" }).waitFor({ state: "detached" });
    const gone = await t.api(`/api/chat/history?thread_id=${threadId}`);
    expect(gone.status).toBe(404);
    expect(await page.getByRole("button", { name: "Delete", exact: true }).isHidden()).toBe(true);
  });

  test("a thinking model: the reasoning is a collapsed block, open on demand, and not the answer", async () => {
    const thoughts = "The user asks about tides. The moon's pull makes two bulges of water.";
    t.llm.enqueue({ ...thinkTags(thoughts, "Tides come from the **moon's** pull."), frameDelayMs: 15 });
    await send(page, "Why are there tides?");
    const block = page.locator("details.thinking").last();
    // collapsed while it streams
    await page.locator("details.thinking.streaming").waitFor();
    expect(await block.evaluate((d) => d.hasAttribute("open"))).toBe(false);
    await page.locator(".msg.assistant:not(.streaming)", { hasText: "Tides come from the moon's pull." }).waitFor();
    await idle(page);
    expect(await block.locator("summary").innerText()).toBe("Thought");
    expect(await lastAssistant(page).innerText()).not.toContain("bulges");
    await block.locator("summary").click();
    expect(await block.locator(".thinking-text").innerText()).toContain("two bulges of water");
    expect(JSON.stringify(t.llm.lastChat())).not.toContain("bulges");
  });

  test("sign out, a wrong token is refused, the right one signs in", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    const field = page.getByLabel("Access token");
    await field.fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That token was not accepted.").waitFor();
    await field.fill(t.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".topbar").waitFor();
    expect(await page.content()).not.toContain(t.token);
  });

  test("no script errors and no blocked resources along the way", () => {
    expect(pageErrors.filter((e) => !e.includes("401 (Unauthorized)"))).toEqual([]);
  });
});
