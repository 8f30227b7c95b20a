// The web UI's Routines page in headless Chromium: add a routine with the schedule put into
// words as it is typed (and a bad one explained), see its next three times, run it now and
// read the answer among its recent runs, pause it, edit it, delete it.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, hasChromium } from "../support/browser";
import { startTestService, type TestService } from "../support/harness";

setDefaultTimeout(30_000);

const SHOTS = process.env.UPDATE_SCREENSHOTS ? resolve(import.meta.dir, "../../docs/screenshots") : mkdtempSync(join(tmpdir(), "routines-shots-"));

let t: TestService;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  t = await startTestService();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light", timezoneId: "Europe/Berlin" });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().includes("400")) pageErrors.push(`console: ${m.text()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  if (!process.env.UPDATE_SCREENSHOTS) rmSync(SHOTS, { recursive: true, force: true });
});

describe.skipIf(!hasChromium)("the Routines page", () => {
  test("reached from the top bar; says what routines are when there are none", async () => {
    await page.goto(`${t.url}/login?token=${t.token}`);
    await page.getByRole("link", { name: "Routines" }).click();
    await page.waitForURL(`${t.url}/routines`);
    await page.getByText("A routine runs a prompt on a schedule").waitFor();
    expect(await page.getByRole("link", { name: "Routines" }).getAttribute("aria-current")).toBe("page");
  });

  test("add: the schedule in words and its next three times as it is typed; a bad one says why", async () => {
    await page.getByRole("button", { name: "New routine" }).click();
    const schedule = page.getByRole("textbox", { name: "Schedule" });
    await schedule.fill("0 7 * *");
    await page.locator(".schedule-preview.bad", { hasText: "has 4 fields" }).waitFor();
    await schedule.fill("0 7 * * 1-5");
    await page.locator(".schedule-preview:not(.bad)", { hasText: "At 07:00, Monday through Friday (Europe/Berlin)" }).waitFor();
    const times = await page.locator(".schedule-preview .next-runs li").allInnerTexts();
    expect(times).toHaveLength(3);
    for (const time of times) expect(time).toMatch(/(Mon|Tue|Wed|Thu|Fri).*07:00/);
    expect(await page.getByRole("textbox", { name: "Time zone" }).inputValue()).toBe("Europe/Berlin");
    await page.getByRole("textbox", { name: "Name" }).fill("Morning alerts");
    await page.getByRole("textbox", { name: "Prompt" }).fill("Summarise the night's alerts.");
    await page.getByRole("button", { name: "Create" }).click();
    await page.locator(".routine-name", { hasText: "Morning alerts" }).waitFor();
    await page.waitForURL(/\/routines\?id=/);
    expect(await page.locator(".routine-facts .next-runs li").count()).toBe(3);
    expect(await page.locator(".schedule-words").innerText()).toBe("At 07:00, Monday through Friday (Europe/Berlin)");
    const [routine] = ((await (await t.api("/api/routines")).json()) as any).routines;
    expect(routine).toMatchObject({ name: "Morning alerts", schedule: "0 7 * * 1-5", timezone: "Europe/Berlin", prompt: "Summarise the night's alerts." });
  });

  test("run now: the run appears among the recent runs with its answer", async () => {
    t.llm.enqueue({ text: "No alerts tonight: **all green**." });
    await page.getByRole("button", { name: "Run now" }).click();
    // the page shows the run at once, then its answer on the next look
    await page.locator(".run").first().waitFor();
    for (let i = 0; i < 50 && !(await page.locator(".run-state.completed").count()); i++) {
      await page.getByRole("link", { name: /Morning alerts/ }).click();
      await page.waitForTimeout(100);
    }
    await page.locator(".run-answer strong", { hasText: "all green" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "routines.png") });
  });

  test("pause, edit with the preview, delete", async () => {
    await page.getByRole("button", { name: "Pause" }).click();
    await page.locator(".routine-detail .badge", { hasText: "paused" }).waitFor();
    expect(await page.locator(".routine-facts dd", { hasText: "paused" }).count()).toBe(1);
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("button", { name: "Pause" }).waitFor();
    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByRole("textbox", { name: "Schedule" }).fill("every 6h");
    await page.locator(".schedule-preview", { hasText: "every 6 hours" }).waitFor();
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator(".schedule-words", { hasText: "every 6 hours" }).waitFor();
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Delete for good" }).click();
    await page.getByText("A routine runs a prompt on a schedule").waitFor();
    expect(((await (await t.api("/api/routines")).json()) as any).routines).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
