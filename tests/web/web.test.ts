// The web UI in real headless Chromium, against the service started in-process with a
// scripted LLM. Every wait is on a selector, a URL or an event, never a fixed sleep.
//
// UPDATE_SCREENSHOTS=1 bun test tests/web/web.test.ts   rewrites docs/screenshots/*.png
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Type } from "@sinclair/typebox";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { recordEgress } from "../../src/store/egress";
import { defineTool } from "../../src/tools/tool";
import { axeViolations } from "../support/axe";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { startTestService, type TestService } from "../support/harness";
import { thinkTags } from "../support/provider-wires";

setDefaultTimeout(30_000);

const SHOTS = process.env.UPDATE_SCREENSHOTS ? resolve(import.meta.dir, "../../docs/screenshots") : mkdtempSync(join(tmpdir(), "web-shots-"));

let t: TestService;
let browser: Browser;
let page: Page;
let context: BrowserContext;
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
/** The focused element's text, or one of its attributes. */
const focused = (p: Page, attribute?: string) =>
  p.evaluate(attribute ? `document.activeElement?.getAttribute(${JSON.stringify(attribute)})` : "document.activeElement?.textContent");
const lastUserMessage = () => t.llm.lastChat().messages.filter((m: any) => m.role === "user").at(-1)?.content;

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
  ({ page, context } = await newPage(DESKTOP));
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: t.url });
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
    expect(history.items.map((i: any) => i.content ?? i.type)).toEqual(["Think about this for a very long time", "turn_error"]);
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
    const answer = history.items.findLast((i: any) => i.type === "message");
    expect(history.items.at(-1)).toMatchObject({ type: "turn_error", code: "cancelled" });
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
      // every page stays reachable: the tabs scroll sideways, the last one comes into view and opens
      const last = phone.page.locator('nav.tabs a[href="/egress"]');
      await last.scrollIntoViewIfNeeded();
      await last.click();
      await phone.page.waitForURL(/\/egress$/);
      await phone.page.locator("#egress-title").waitFor();
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

  test("a new conversation is listed at once, under Today, titled without its Markdown", async () => {
    await page.keyboard.press("Control+Shift+O");
    await page.waitForURL(`${t.url}/`);
    t.llm.enqueue({ hang: true });
    await send(page, "**Plan** my `trip` to [Porto](https://example.com)");
    const row = page.locator(".thread", { hasText: "Plan my trip to Porto" });
    await row.waitFor(); // while the first answer is still running
    expect(await page.locator("button.stop:visible").count()).toBe(1);
    const group = await row.evaluate((el) => el.closest(".thread-group")?.querySelector(".group-label")?.textContent);
    expect(group).toBe("Today");
    await page.getByRole("button", { name: "Stop" }).click();
    await idle(page);
    // the Stop button went away under the focus: the focus is back in the message box
    expect(await focused(page, "aria-label")).toBe("Message");
  });

  test("code is coloured, labelled with its language and copied with a button; a whole answer too", async () => {
    await page.keyboard.press("Control+Shift+O");
    const code = 'def greet(name):\n    return f"Hello, {name}!"  # friendly';
    const answer = `Here you go:\n\n\`\`\`python\n${code}\n\`\`\`\n`;
    t.llm.enqueue({ text: answer });
    await send(page, "Write a Python greeting");
    const block = lastAssistant(page).locator(".code-block");
    await block.waitFor();
    await idle(page);
    expect(await block.locator(".code-lang").innerText()).toBe("python");
    expect(await block.locator(".hljs-keyword", { hasText: "def" }).count()).toBe(1);
    expect(await block.locator(".hljs-comment").innerText()).toBe("# friendly");
    await block.getByRole("button", { name: "Copy python code" }).click();
    await block.getByRole("button", { name: "Copy python code" }).filter({ hasText: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(code);
    await lastAssistant(page).getByRole("button", { name: "Copy answer" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(answer);
    await page.locator(".announcer", { hasText: "Answer copied." }).waitFor({ state: "attached" });
    await page.screenshot({ path: join(SHOTS, "code.png") });
  });

  test("Regenerate reaches the LLM; the earlier answer stays one arrow away, after a reload too", async () => {
    await page.keyboard.press("Control+Shift+O");
    t.llm.enqueue({ text: "Octopuses have three hearts." });
    await send(page, "Tell me a fact");
    await lastAssistant(page).getByText("three hearts").waitFor();
    await idle(page);
    const before = t.llm.chatRequests().length;
    t.llm.enqueue({ text: "Honey never spoils." });
    await lastAssistant(page).getByRole("button", { name: "Regenerate" }).click();
    await lastAssistant(page).getByText("Honey never spoils.").waitFor();
    await idle(page);
    expect(t.llm.chatRequests().length).toBe(before + 1);
    expect(lastUserMessage()).toBe("Tell me a fact");
    expect(t.llm.lastChat().messages.map((m: any) => m.content).join("\n")).not.toContain("three hearts");
    expect(await page.locator(".msg.assistant").count()).toBe(1);
    const arrows = page.getByRole("group", { name: "Alternative 2 of 2" });
    await arrows.getByRole("button", { name: "Previous alternative" }).click();
    await lastAssistant(page).getByText("three hearts").waitFor();
    await page.getByRole("group", { name: "Alternative 1 of 2" }).waitFor();
    await page.reload();
    await lastAssistant(page).getByText("three hearts").waitFor();
    await page.getByRole("group", { name: "Alternative 1 of 2" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "alternatives.png") });
  });

  test("Up in an empty message box edits the last message; the edit is answered in its place", async () => {
    const box = page.getByRole("textbox", { name: "Message" });
    await box.focus();
    await box.press("ArrowUp");
    expect(await box.inputValue()).toBe("Tell me a fact");
    await page.getByText("Editing your last message").waitFor();
    t.llm.enqueue({ text: "Bananas are berries." });
    await box.fill("Tell me a fruit fact");
    await box.press("Enter");
    await lastAssistant(page).getByText("Bananas are berries.").waitFor();
    await idle(page);
    expect(lastUserMessage()).toBe("Tell me a fruit fact");
    expect(await page.locator(".msg.user").allInnerTexts()).toEqual([expect.stringContaining("Tell me a fruit fact")]);
    await page.getByRole("group", { name: "Alternative 3 of 3" }).waitFor();
    // Esc leaves editing without sending
    await box.press("ArrowUp");
    await page.getByText("Editing your last message").waitFor();
    await box.press("Escape");
    await page.getByText("Editing your last message").waitFor({ state: "hidden" });
    expect(await box.inputValue()).toBe("");
  });

  test("Retry after a failed answer and after a Stop", async () => {
    t.llm.enqueue({ error: { status: 400, message: "The model is overloaded" } });
    await send(page, "Try something");
    const failed = page.locator(".notice.error", { hasText: "The model is overloaded" });
    await failed.waitFor();
    await idle(page);
    t.llm.enqueue({ text: "It worked on the second try." });
    await failed.getByRole("button", { name: "Retry" }).click();
    await lastAssistant(page).getByText("It worked on the second try.").waitFor();
    await idle(page);
    expect(lastUserMessage()).toBe("Try something");

    t.llm.enqueue({ hang: true });
    const before = t.llm.chatRequests().length;
    await send(page, "Take your time");
    await t.llm.waitForRequests(before + 1);
    await page.getByRole("button", { name: "Stop" }).click();
    const stopped = page.locator(".notice.info", { hasText: "Stopped." });
    await stopped.waitFor();
    await idle(page);
    t.llm.enqueue({ text: "Done, quickly." });
    await stopped.getByRole("button", { name: "Retry" }).click();
    await lastAssistant(page).getByText("Done, quickly.").waitFor();
    await idle(page);
    // the failure and the stop are in the record after a reload too, one arrow away
    await page.reload();
    await lastAssistant(page).getByText("Done, quickly.").waitFor();
    await page.getByRole("group", { name: "Alternative 2 of 2" }).last().getByRole("button", { name: "Previous alternative" }).click();
    await page.locator(".notice.info", { hasText: "Stopped." }).waitFor();
  });

  test("an approval prompt takes the focus and waits; a denied call reads refused, live and after a reload", async () => {
    await page.keyboard.press("Control+Shift+O");
    t.llm.enqueue({ toolCalls: [{ name: "fetch_weather", arguments: { city: "Oslo" } }] }, { text: "I did not check the weather." });
    await send(page, "What's the weather in Oslo?");
    const card = page.locator(".approval[data-state=pending]");
    await card.waitFor();
    await idle(page);
    await page.waitForFunction("document.activeElement?.classList.contains('approval-title')");
    await page.locator(".announcer", { hasText: "Approval needed: the agent wants to run fetch_weather." }).waitFor({ state: "attached" });
    // past the arguments (scrollable, so focusable) to Approve: the focus never lands on a decision by itself
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("Approve");
    // the pending call is listed at the side, with its conversation
    await page.locator(".pending-call", { hasText: "fetch_weather" }).filter({ hasText: "What's the weather in Oslo?" }).waitFor();

    // the message box keeps what is typed, and sends nothing while the call waits
    const before = t.llm.chatRequests().length;
    await send(page, "and tomorrow?");
    await page.locator(".composer-status", { hasText: "approve or deny it" }).waitFor();
    await page.waitForFunction("document.activeElement?.classList.contains('approval-title')");
    expect(await page.getByRole("textbox", { name: "Message" }).inputValue()).toBe("and tomorrow?");
    expect(t.llm.chatRequests().length).toBe(before);
    expect(await page.locator(".msg.user", { hasText: "and tomorrow?" }).count()).toBe(0);

    await card.getByRole("button", { name: "Deny" }).click();
    expect(await focused(page, "aria-label")).toBe("Message");
    const tool = page.locator(".tool", { hasText: "fetch_weather" });
    await tool.locator(".tool-status", { hasText: "refused: you denied it" }).waitFor();
    await lastAssistant(page).getByText("I did not check the weather.").waitFor();
    await idle(page);
    expect(weatherRuns).toBe(1);
    await page.reload();
    await page.locator(".approval .decided", { hasText: "Denied" }).waitFor();
    expect(await page.locator(".tool .tool-status").last().innerText()).toBe("refused: you denied it");
    expect(await page.locator(".pending-call").count()).toBe(0);
  });

  test("an approval prompt shows where the data would go and an identity file's change, as a diff", async () => {
    t.llm.enqueue({ toolCalls: [{ name: "fetch_weather", arguments: { city: "Bergen" } }] });
    await send(page, "And in Bergen?");
    await page.locator(".approval[data-state=pending]").waitFor();
    await idle(page);
    const threadId = new URL(page.url()).searchParams.get("thread")!;
    // what the gate of an egress or identity-file approval carries (the agent's side fills it in)
    const diff = "--- USER.md\n+++ USER.md\n@@ -1,2 +1,2 @@\n # About you\n-Lives in Lisbon.\n+Lives in Bergen.\n";
    await t.service.services.db.$client.execute({
      sql: "update gates set data = json_set(data, '$.details.destination', 'weather.example.com', '$.details.diff', ?) where thread_id = ?",
      args: [diff, threadId],
    });
    await page.reload();
    const card = page.locator(".approval[data-state=pending]");
    await card.locator(".approval-destination code", { hasText: "weather.example.com" }).waitFor();
    expect(await card.locator(".diff-add").innerText()).toBe("+Lives in Bergen.\n");
    expect(await card.locator(".diff-del").innerText()).toBe("-Lives in Lisbon.\n");
    const [added, removed] = await Promise.all([".diff-add", ".diff-del"].map((c) => card.locator(c).evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor)));
    expect(added).not.toBe(removed);
    expect(await axeViolations(page)).toEqual([]);
    await card.evaluate((el) => el.scrollIntoView({ block: "center" }));
    await page.screenshot({ path: join(SHOTS, "approval-diff.png") });
    await card.getByRole("button", { name: "Approve" }).click();
    await page.locator(".approval .decided", { hasText: "Approved" }).waitFor();
    await idle(page);
  });

  test("Esc stops a streaming answer; Ctrl+K searches the conversations; a conversation can be renamed", async () => {
    const words = Array.from({ length: 200 }, (_, i) => `escword${i}`).join(" ");
    t.llm.enqueue({ text: words, chunkDelayMs: 20 });
    await send(page, "Stream for a while");
    await lastAssistant(page).getByText("escword5", { exact: false }).waitFor();
    await page.keyboard.press("Escape");
    await page.locator(".notice.info", { hasText: "Stopped." }).waitFor();
    await idle(page);

    await page.getByRole("button", { name: "Rename" }).click();
    const title = page.getByRole("textbox", { name: "Conversation title" });
    await title.fill("Nordic weather");
    await title.press("Enter");
    await page.locator(".thread.active", { hasText: "Nordic weather" }).waitFor();
    await page.locator("h1.conv-title", { hasText: "Nordic weather" }).waitFor();
    expect(await page.title()).toBe("Nordic weather · service");

    await page.keyboard.press("Control+k");
    const search = page.getByRole("searchbox", { name: "Search conversations" });
    expect(await search.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
    await search.fill("fruit fact");
    await page.locator(".thread-list .group-label", { hasText: "Results for" }).waitFor();
    expect(await page.locator(".thread-list .thread").allInnerTexts()).toEqual([expect.stringContaining("Tell me a fact")]);
    await search.press("Escape");
    await page.locator(".thread", { hasText: "Nordic weather" }).waitFor();
  });

  test("the model answering is named, the connection says it is connected, and answers are announced once", async () => {
    await page.locator(".model-label", { hasText: "Answers by scripted-model" }).waitFor();
    expect(await page.locator(".conn").innerText()).toBe("Connected");
    // no live region is rebuilt while an answer streams; its start and end are said once each
    expect(await page.locator(".messages").getAttribute("aria-live")).toBeNull();
    expect(await page.locator(".messages").getAttribute("role")).not.toBe("log");
    t.llm.enqueue({ text: "Short and sweet." });
    await send(page, "Say something short");
    await lastAssistant(page).getByText("Short and sweet.").waitFor();
    await page.locator(".announcer", { hasText: "Answer complete: Short and sweet." }).waitFor({ state: "attached" });
  });

  test("right-to-left text reads right to left; each message and title takes its own direction", async () => {
    await page.keyboard.press("Control+Shift+O");
    t.llm.enqueue({ text: "Sure:\n\nمرحبا بالعالم، هذا نص عربي.\n\nThat was Arabic." });
    await send(page, "اكتب جملة بالعربية");
    await lastAssistant(page).getByText("That was Arabic.").waitFor();
    await idle(page);
    const direction = (l: ReturnType<Page["locator"]>) => l.evaluate((el) => (globalThis as any).getComputedStyle(el).direction);
    expect(await direction(page.locator(".msg.user .bubble").last())).toBe("rtl");
    expect(await direction(lastAssistant(page).locator("p", { hasText: "مرحبا" }))).toBe("rtl");
    expect(await direction(lastAssistant(page).locator("p", { hasText: "That was Arabic." }))).toBe("ltr");
    expect(await direction(page.locator(".thread-title", { hasText: "اكتب" }))).toBe("rtl");
  });

  test("a conversation's delete confirmation takes the focus; Esc keeps the conversation", async () => {
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const dialog = page.getByRole("alertdialog", { name: "Delete this conversation for good?" });
    await dialog.waitFor();
    expect(await focused(page)).toBe("Keep");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(await focused(page)).toBe("Delete");
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await dialog.getByRole("button", { name: "Delete conversation" }).click();
    await page.getByText("What can I help with?").waitFor();
    expect(await focused(page, "aria-label")).toBe("Message");
  });

  test("the streaming caret does not blink for people who asked for less motion", async () => {
    const words = Array.from({ length: 300 }, (_, i) => `slow${i}`).join(" ");
    t.llm.enqueue({ text: words, chunkDelayMs: 30 });
    await send(page, "Stream slowly");
    await page.locator(".msg.assistant.streaming .md p").waitFor();
    const caret = "getComputedStyle(document.querySelector('.msg.assistant.streaming .md > :last-child'), '::after').animationName";
    expect(await page.evaluate(caret)).toBe("blink");
    await page.emulateMedia({ reducedMotion: "reduce" });
    try {
      expect(await page.evaluate(caret)).toBe("none");
    } finally {
      await page.emulateMedia({ reducedMotion: "no-preference" });
    }
    await page.getByRole("button", { name: "Stop" }).click();
    await idle(page);
  });

  test("/memory opened directly is named Memory and has one main heading", async () => {
    await page.goto(`${t.url}/memory`);
    await page.locator(".doc", { hasText: "SOUL.md" }).waitFor();
    expect(await page.title()).toBe("Memory · service");
    expect(await page.locator("h1:visible").allInnerTexts()).toEqual(["Memory"]);
    await page.goto(`${t.url}/`);
  });

  test("the Egress page lists what left the box, where to and why", async () => {
    const threadId = "5f0c3a52-8c7e-4f43-9d0b-2d2f8f0a1b11";
    await recordEgress(t.service.services.db, { userId: "owner", threadId, responseId: "resp_x", tool: "web_fetch", destination: "wiki.example.org", approvedBy: "user", createdAt: Date.now() });
    await page.goto(`${t.url}/egress`);
    const row = page.locator("table.egress tr", { hasText: "wiki.example.org" });
    await row.waitFor();
    expect(await row.innerText()).toContain("you approved it");
    expect(await row.locator("a").getAttribute("href")).toBe(`/?thread=${threadId}`);
    expect(await page.locator('nav a[href="/egress"]').getAttribute("aria-current")).toBe("page");
    expect(await axeViolations(page)).toEqual([]);
  });

  test("sign out, a wrong token is refused, the right one signs in", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("You are signed out.").waitFor();
    await page.screenshot({ path: join(SHOTS, "sign-in.png") });
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

describe.skipIf(!hasChromium)("everyone can use it: axe-core (WCAG 2.2 AA) on every screen, light and dark, desktop and phone", () => {
  let rich: string;
  let waiting: string;

  beforeAll(async () => {
    if (!hasChromium) return;
    const chat = async (message: string, thread_id?: string) => (await (await t.api("/api/chat", { method: "POST", json: { message, thread_id } })).json()) as any;
    // a conversation with something of everything: Markdown, code, a wide table, right-to-left
    // text, a tool call that ran, one that was refused, a summary mark and a failed turn
    t.llm.enqueue({
      text: "Plans:\n\n| plan | price per month / year | notes |\n|---|---|---|\n| basic | $1.2 / 0 | for one person, no support |\n| pro | $9.9 / 99 | for teams of any size |\n\n```bash\nservice chat --thread 42 # reopen\n```\n\nمرحبا بالعالم\n\n> quoted, with `code` and a [link](https://example.com).",
    });
    rich = (await chat("Compare the plans")).thread_id;
    t.llm.enqueue({ toolCalls: [{ name: "fetch_weather", arguments: { city: "Rome" } }] }, { text: "Sunny in Rome." });
    await chat("Weather in Rome?", rich);
    await t.api(`/api/chat/approvals/${rich}`, { method: "POST", json: { decision: "approve" } });
    t.llm.enqueue({ toolCalls: [{ name: "fetch_weather", arguments: { city: "Paris" } }] }, { text: "As you wish." });
    await chat("And Paris?", rich);
    await t.api(`/api/chat/approvals/${rich}`, { method: "POST", json: { decision: "deny" } });
    t.llm.enqueue({ text: "nothing to save" }, { text: "Summary: plans compared, weather asked." });
    await t.api(`/api/chat/threads/${rich}/compact`, { method: "POST" });
    t.llm.enqueue({ error: { status: 400, message: "The model refused the request" } });
    await chat("One more thing", rich);
    t.llm.enqueue({ toolCalls: [{ name: "fetch_weather", arguments: { city: "Kyiv" } }] });
    waiting = (await chat("Weather in Kyiv?")).thread_id;
    await t.service.services.db.$client.execute({
      sql: "update gates set data = json_set(data, '$.details.destination', 'api.weather.example', '$.details.diff', ?) where thread_id = ?",
      args: ["--- USER.md\n+++ USER.md\n@@ -1 +1 @@\n-Lives in Lisbon.\n+Lives in Kyiv.\n", waiting],
    });
  });

  /** Each screen as a person reaches it; `phone` only at phone width. */
  const screens: { name: string; phone?: boolean; open: (p: Page) => Promise<void> }[] = [
    { name: "new chat", open: async (p) => (await p.goto(`${t.url}/`), await p.getByText("What can I help with?").waitFor()) },
    {
      name: "a conversation with code, a table, tool calls, decisions, a summary mark and a failure",
      open: async (p) => {
        await p.goto(`${t.url}/?thread=${rich}`);
        await p.locator(".notice.error", { hasText: "The model refused the request" }).waitFor();
        for (const d of await p.locator("details").all()) await d.evaluate((el) => el.setAttribute("open", ""));
      },
    },
    { name: "an approval waiting, with where the data goes and a diff", open: async (p) => (await p.goto(`${t.url}/?thread=${waiting}`), await p.locator(".approval[data-state=pending] .diff").waitFor()) },
    {
      name: "the delete confirmation",
      open: async (p) => {
        await p.goto(`${t.url}/?thread=${rich}`);
        await p.getByRole("button", { name: "Delete", exact: true }).click();
        await p.getByRole("alertdialog").waitFor();
      },
    },
    {
      name: "renaming",
      open: async (p) => {
        await p.goto(`${t.url}/?thread=${rich}`);
        await p.getByRole("button", { name: "Rename" }).click();
        await p.getByRole("textbox", { name: "Conversation title" }).waitFor();
      },
    },
    {
      name: "search results",
      open: async (p) => {
        await p.goto(`${t.url}/`);
        await p.keyboard.press("Control+k");
        await p.getByRole("searchbox", { name: "Search conversations" }).fill("Rome");
        await p.locator(".group-label", { hasText: "Results for" }).waitFor();
      },
    },
    {
      name: "the conversations drawer",
      phone: true,
      open: async (p) => {
        await p.goto(`${t.url}/`);
        await p.getByRole("button", { name: "Show conversations" }).click();
        await p.locator(".chat.drawer-open").waitFor();
      },
    },
    { name: "memory", open: async (p) => (await p.goto(`${t.url}/memory`), await p.locator(".doc", { hasText: "SOUL.md" }).waitFor()) },
    { name: "a memory document", open: async (p) => (await p.goto(`${t.url}/memory?path=SOUL.md`), await p.locator(".doc-text:enabled").waitFor()) },
    {
      name: "a memory document's preview and delete confirmation",
      open: async (p) => {
        await p.goto(`${t.url}/memory?path=SOUL.md`);
        await p.locator(".doc-text:enabled").waitFor();
        await p.getByRole("button", { name: "Preview" }).click();
        await p.getByRole("button", { name: "Delete", exact: true }).click();
        await p.getByRole("alertdialog", { name: "Confirm deletion" }).waitFor();
      },
    },
  ];

  for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
    test(`no violations at ${size} width, light and dark`, async () => {
      const { context: ctx, page: p } = await newPage(viewport, size === "phone");
      const found: string[] = [];
      try {
        await p.goto(`${t.url}/`);
        for (const scheme of ["light", "dark"] as const) {
          await p.emulateMedia({ colorScheme: scheme });
          await p.evaluate("localStorage.clear()");
          await p.goto(`${t.url}/`);
          await p.getByLabel("Access token").waitFor();
          found.push(...(await axeViolations(p)).map((v) => `sign-in (${scheme}): ${v}`));
          await p.goto(`${t.url}/login?token=${t.token}`);
          await p.locator(".topbar").waitFor();
          for (const screen of screens) {
            if (screen.phone && size !== "phone") continue;
            await screen.open(p);
            found.push(...(await axeViolations(p)).map((v) => `${screen.name} (${scheme}): ${v}`));
            if (scheme === "dark" && screen.name.startsWith("a conversation with code")) await p.screenshot({ path: join(SHOTS, `chat-dark-${size}.png`) });
          }
        }
      } finally {
        await ctx.close();
      }
      expect(found).toEqual([]);
    }, 120_000);
  }

  test("at phone width: the drawer says whether it is open and Esc closes it; wide tables scroll sideways", async () => {
    const { context: ctx, page: p } = await newPage(PHONE, true);
    try {
      await p.goto(`${t.url}/login?token=${t.token}`);
      await p.goto(`${t.url}/?thread=${rich}`);
      const toggle = p.getByRole("button", { name: "Show conversations" });
      expect(await toggle.getAttribute("aria-expanded")).toBe("false");
      await toggle.click();
      await p.locator(".chat.drawer-open").waitFor();
      const hide = p.getByRole("button", { name: "Hide conversations" });
      expect(await hide.getAttribute("aria-expanded")).toBe("true");
      expect(await focused(p)).toBe("New chat");
      await p.keyboard.press("Escape");
      await p.locator(".chat:not(.drawer-open)").waitFor();
      expect(await focused(p, "aria-label")).toBe("Show conversations");

      const scroller = p.locator(".table-scroll").first();
      await scroller.waitFor();
      const [scrollWidth, clientWidth] = await scroller.evaluate((el) => [el.scrollWidth, el.clientWidth]);
      expect(scrollWidth).toBeGreaterThan(clientWidth);
      // a value stays on one line: its cell is as tall as a one-word cell
      const cell = (text: string) => p.locator("td", { hasText: text }).first().evaluate((el) => el.getBoundingClientRect().height);
      expect(await cell("$1.2 / 0")).toBe(await cell("basic"));
      expect(await p.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(PHONE.width);
      await p.evaluate("document.activeElement.blur()");
      await scroller.evaluate((el) => el.scrollIntoView({ block: "start" }));
      await p.screenshot({ path: join(SHOTS, "table-phone.png") });
    } finally {
      await ctx.close();
    }
  });

  test("no script errors here either", () => {
    expect(pageErrors.filter((e) => !e.includes("401 (Unauthorized)"))).toEqual([]);
  });
});

