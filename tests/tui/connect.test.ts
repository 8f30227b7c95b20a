// The terminal UI when a tool waits for an OAuth extension to be connected: it says so and
// where to connect it (a browser page), live and when the conversation is opened again.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join, resolve } from "node:path";
import { startAuthorizationServer, writeGithubExtension, type AuthorizationServer } from "../extensions/oauth-server";
import { startWithExtensions, tempDir } from "../extensions/support";
import { TOKEN, type TestService } from "../support/harness";
import { until } from "../support/until";

setDefaultTimeout(30_000);

const root = resolve(import.meta.dir, "../..");
const SOCKET = `service-tui-connect-${process.pid}`;
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
const TOOL = "ext__github__fetch_me";

function tmux(...args: string[]): string {
  const r = Bun.spawnSync(["tmux", "-L", SOCKET, "-f", "/dev/null", ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** The pane's text with blessed's line wrapping undone, polled (bounded) until it has `text`. */
function see(session: string, text: string, timeoutMs = 15_000): Promise<string> {
  return until(
    () => `"${text}" on:\n${tmux("capture-pane", "-p", "-t", session)}`,
    () => {
      // box borders come out as the letter x (tmux prints line-drawing characters so), before
      // text or space; no word of the messages checked here starts with an x
      const flat = tmux("capture-pane", "-p", "-t", session)
        .split("\n")
        .map((line) => line.replace(/(^|\s)x{1,2}/g, " "))
        .join(" ")
        .replace(/\s+/g, " ");
      return flat.includes(text) && flat;
    },
    { timeoutMs, everyMs: 50 },
  );
}

let t: TestService;
let as: AuthorizationServer;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  if (!hasTmux) return;
  tmp = tempDir();
  as = startAuthorizationServer();
  const source = writeGithubExtension(tmp.dir, as, ["profile"]);
  t = await startWithExtensions([source]);
});

afterAll(async () => {
  if (!hasTmux) return;
  Bun.spawnSync(["tmux", "-L", SOCKET, "kill-server"], { stdout: "ignore", stderr: "ignore" });
  await t?.stop();
  as?.stop();
  tmp?.cleanup();
});

test.skipIf(!hasTmux)("a tool waiting for an extension connection: the TUI says which and where", async () => {
  const chat = (session: string, extra: string[] = []) =>
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "40", "-e", `SERVICE_HOME=${join(tmp.dir, "tui-home")}`, "--",
      "bun", join(root, "src/main.ts"), "chat", "--url", t.url, "--token", TOKEN, ...extra);

  chat("live");
  await see("live", "connected");
  t.llm.enqueue({ toolCalls: [{ name: TOOL, arguments: {} }] });
  tmux("send-keys", "-t", "live", "-l", "Who am I on GitHub?");
  tmux("send-keys", "-t", "live", "Enter");
  const shown = await see("live", "connected to your account");
  expect(shown).toContain(`${TOOL} needs the extension github`);
  // the link may be wrapped over lines: compare without white space
  expect(shown.replace(/\s/g, "")).toContain(`${t.url}/extensions/connect/github?thread=`);

  // reopened from history, the conversation still says what it waits for
  const threads = ((await (await t.api("/api/chat/threads")).json()) as any).threads;
  const waiting = threads.find((x: any) => x.waiting === "oauth");
  expect(waiting).toBeDefined();
  chat("again", ["--thread", waiting.id]);
  const again = await see("again", "connected to your account");
  expect(again.replace(/\s/g, "")).toContain(`${t.url}/extensions/connect/github?thread=${waiting.id}`);
});
