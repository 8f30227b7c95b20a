// Headless Chromium for the browser tests. Without it they are skipped, with one line that
// says how to get it (as the tmux tests are skipped without tmux).
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const warned = globalThis as { __chromiumWarned?: boolean };
if (!hasChromium && !warned.__chromiumWarned) {
  warned.__chromiumWarned = true;
  console.warn(`skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
}
