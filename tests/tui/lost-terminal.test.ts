// A TUI whose terminal disappears (window closed, tmux killed) must end, not spin on a dead pty.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startTestService, TOKEN, type TestService } from "../support/harness";
import { until } from "../support/until";

const root = resolve(import.meta.dir, "../..");
const SOCKET = `service-lost-terminal-${process.pid}`;
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-L", SOCKET, "-f", "/dev/null", ...args], { stdout: "pipe", stderr: "pipe" });

let svc: TestService;
let dir: string;

beforeAll(async () => {
  svc = await startTestService();
  dir = mkdtempSync(join(tmpdir(), "service-lost-"));
});
afterAll(async () => {
  tmux("kill-server");
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
});

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");

test.skipIf(!hasTmux)("service chat exits when its terminal goes away", async () => {
  const pidFile = join(dir, "chat.pid");
  const cmd = `echo $$ > ${pidFile}; exec bun ${join(root, "src/main.ts")} chat --url ${svc.url} --token ${TOKEN}`;
  tmux("new-session", "-d", "-s", "lost", "-x", "100", "-y", "30", "-e", `SERVICE_HOME=${join(dir, "home")}`, "--", "sh", "-c", cmd);
  await until("the TUI to draw", () => tmux("capture-pane", "-p", "-t", "lost").stdout.toString().includes("conversation"), { everyMs: 50 });
  const pid = Number(readFileSync(pidFile, "utf8"));
  expect(alive(pid)).toBe(true);
  tmux("kill-server");
  await until(`process ${pid} to exit`, () => !alive(pid));
}, 30_000);
