// `/routines` in the terminal UI (`bun src/main.ts chat` in a tmux pane, against a real
// service): the user's routines with their schedule in words, next run and last answer.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { routinesNotice } from "../../src/tui/routines";
import { ChatClient } from "../../src/client/http";
import { startTestService, TOKEN, type TestService } from "../support/harness";
import { until } from "../support/until";

setDefaultTimeout(30_000);

const root = resolve(import.meta.dir, "../..");
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
const SOCKET = `service-tui-routines-${process.pid}`;

let svc: TestService;
let dir: string;

function tmux(...args: string[]): string {
  const r = Bun.spawnSync(["tmux", "-L", SOCKET, "-f", "/dev/null", ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function see(name: string, text: string, timeoutMs = 15_000): Promise<void> {
  await until(() => `"${text}" on screen:\n${tmux("capture-pane", "-p", "-t", name)}`, () => tmux("capture-pane", "-p", "-t", name).includes(text), { timeoutMs, everyMs: 40 });
}

beforeAll(async () => {
  svc = await startTestService();
  dir = mkdtempSync(join(tmpdir(), "service-tui-routines-"));
});
afterAll(async () => {
  if (hasTmux) Bun.spawnSync(["tmux", "-L", SOCKET, "kill-server"], { stdout: "ignore", stderr: "ignore" });
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
});

const client = () => new ChatClient({ baseUrl: svc.url, token: TOKEN });

test("with none, /routines says how to make one", async () => {
  expect(await routinesNotice(client())).toContain("No routines yet.");
});

describe.skipIf(!hasTmux)("/routines in the TUI", () => {
  test("lists each routine with its schedule in words, its next run and its last answer", async () => {
    svc.llm.enqueue({ text: "Nothing happened overnight." });
    const created = (await (await svc.api("/api/routines", { method: "POST", json: { name: "Night watch", schedule: "30 6 * * *", timezone: "UTC", prompt: "What happened overnight?" } })).json()) as any;
    await svc.api(`/api/routines/${created.id}/run`, { method: "POST" });
    await until("the run to complete", async () => ((await (await svc.api(`/api/routines/${created.id}`)).json()) as any).last_run?.status === "completed");
    const S = "routines";
    const cmd = [process.execPath, join(root, "src/main.ts"), "chat", "--url", svc.url, "--token", TOKEN].map((a) => `'${a}'`).join(" ");
    tmux("new-session", "-d", "-s", S, "-x", "140", "-y", "40", "-e", `HOME=${dir}`, "-e", `SERVICE_HOME=${join(dir, "home")}`, "-e", "LANG=C.UTF-8", "--", "sh", "-c", `cd '${dir}' && ${cmd}; exec sleep 3600`);
    await see(S, "● connected", 20_000);
    tmux("send-keys", "-t", S, "-l", "/routines");
    tmux("send-keys", "-t", S, "Enter");
    await see(S, "Routines (1):");
    await see(S, "• Night watch: At 06:30 (UTC); next ");
    await see(S, "(run now)  completed: Nothing happened overnight.");
    await see(S, `${svc.url}/routines`);
    tmux("send-keys", "-t", S, "C-c");
  });
});
