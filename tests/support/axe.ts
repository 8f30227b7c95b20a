// axe-core in the page under test, with the WCAG 2.2 AA rules (and the A and 2.0/2.1 ones
// under them). The page's Content-Security-Policy forbids inline scripts, so the engine is
// evaluated through the DevTools protocol rather than added as a <script>.
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";

const ENGINE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"];

/** The WCAG 2.2 AA violations on the page as it is now, one line each (empty: none). */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(ENGINE);
  const run = `axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(TAGS)} }, resultTypes: ["violations"] })
    .then((r) => r.violations.flatMap((v) => v.nodes.map((n) => v.id + ": " + n.target.join(" ") + " — " + n.failureSummary.replace(/\\s+/g, " "))))`;
  return (await page.evaluate(run)) as string[];
}
