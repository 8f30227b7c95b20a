// The Usage and Activity pages in real headless Chromium: the per-day chart drawn by the
// charting library from GET /api/usage, the grouped table, the budget warning from 80 %; a
// webhook job's turn shown live, labelled, on the Activity page and in its conversation.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { startTestService, type TestService } from "../support/harness";

setDefaultTimeout(30_000);
const SECRET = "web-usage-secret-0123456789";

let t: TestService;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  t = await startTestService({
    env: { HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: SECRET, HTTP_HOST: "127.0.0.1", HTTP_PORT: "0" },
    config: { llm: { prices: { "scripted-model": { input_per_mtok: 3, output_per_mtok: 15 } } } },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    // a service without routines answers /api/routines 404: the page then shows none (checked below)
    if (m.type() === "error" && !m.text().includes("404")) pageErrors.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    // a webhook job's new conversation is stored when its turn ends: watched live before, it has no history yet
    if (r.status() === 404 && !r.url().endsWith("/api/routines") && !r.url().includes("/api/chat/history")) pageErrors.push(`404: ${r.url()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe.skipIf(!hasChromium)("Usage and Activity pages in Chromium", () => {
  test("the Usage page charts the cost per day with Chart.js and tables it by model; a budget past 80 % is a warning", async () => {
    // the owner's daily budget: $1; two turns spend $0.90 of it
    expect((await t.api("/api/webchat/v2/admin/users/owner", { method: "PATCH", json: { budget: { daily_usd: 1 } } })).status).toBe(200);
    t.llm.enqueue({ text: "One.", usage: { prompt_tokens: 100_000, completion_tokens: 20_000 } }, { text: "Two.", usage: { prompt_tokens: 10, completion_tokens: 10, cost: 0.3 } });
    for (const input of ["one", "two"]) expect((await t.respond({ model: "m", input })).body.status).toBe("completed");
    await page.goto(`${t.url}/login?token=${t.token}`);
    await page.locator(".topbar").waitFor();
    await page.getByRole("link", { name: "Usage" }).click();
    await page.waitForURL(`${t.url}/usage`);
    await page.getByRole("heading", { name: "Usage" }).waitFor();
    await page.locator(".usage-table tbody tr", { hasText: "scripted-model" }).waitFor();
    expect(await page.locator(".usage-table tfoot").innerText()).toContain("$0.90");
    expect(await page.locator(".usage-summary").innerText()).toContain("2 turns");
    const warning = page.locator(".usage-budget.warn");
    await warning.waitFor();
    expect(await warning.innerText()).toContain("daily budget: $0.90 of $1.00 (90 %)");
    // the chart: Chart.js drew today's bar on the canvas
    // (a string: this file is typed without the DOM library)
    const chart = (await page.evaluate(`(() => {
      const canvas = document.querySelector("canvas.usage-chart");
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return { width: canvas.width, painted };
    })()`)) as { width: number; painted: number };
    expect(chart.width).toBeGreaterThan(300);
    expect(chart.painted).toBeGreaterThan(500);
    // grouped another way
    await page.getByRole("combobox", { name: "Group by" }).selectOption("channel");
    await page.locator(".usage-table tbody tr", { hasText: "responses" }).waitFor();
    await page.screenshot({ path: `${process.env.TMPDIR ?? "/tmp"}/usage-page.png` });
    expect(pageErrors).toEqual([]);
  });

  test("a webhook job's turn: running on the Activity page, labelled in its conversation, then listed with its status", async () => {
    await page.getByRole("link", { name: "Activity" }).click();
    await page.waitForURL(`${t.url}/activity`);
    await page.getByText("Nothing is running that the chat did not start.").waitFor();
    t.llm.enqueue({ text: "The backup finished without errors and took four minutes.", chunks: 10, chunkDelayMs: 150 });
    const res = await fetch(`${t.service.webhookUrl}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-webhook-secret": SECRET },
      body: JSON.stringify({ user_id: "backup-bot", message: "How did the backup go?" }),
    });
    const { job_id } = (await res.json()) as any;
    const running = page.locator(".activity-table.live tr", { hasText: "Webhook job" });
    await running.waitFor();
    // watch it: its conversation shows the live turn, labelled
    await running.getByRole("link", { name: "Watch it" }).click();
    await page.getByText("Started by a webhook job.").waitFor();
    await page.locator(".msg.assistant", { hasText: "four minutes" }).waitFor();
    await page.getByRole("link", { name: "Activity" }).click();
    const row = page.locator(`.activity-table.jobs tr[data-job="${job_id}"]`);
    await row.locator(".status-badge.completed").waitFor();
    expect(await row.innerText()).toContain("backup-bot");
    expect(pageErrors).toEqual([]);
  });
});
