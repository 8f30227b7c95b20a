// The terminal UI as a user runs it: `service chat` (the compiled binary, and once under
// `bun src/main.ts`) and `service serve` inside tmux panes, typed at with send-keys and read
// with capture-pane, against a real service and the scripted LLM.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Type } from "@sinclair/typebox";
import type { ChatEvent } from "../../src/gateway/events";
import { defineTool } from "../../src/tools/tool";
import { resetTerminalWidths, textWidth } from "../../src/tui/cells";
import { startTestService, TOKEN, type TestService } from "../support/harness";
import { lengthCut, thinkTags } from "../support/provider-wires";
import { until } from "../support/until";

setDefaultTimeout(30_000);

const root = resolve(import.meta.dir, "../..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
const SOCKET = `service-tui-test-${process.pid}`;
const SHIFT_ENTER_CSI_U = "\x1b[13;2u";
const SHIFT_ENTER_MOK = "\x1b[27;2;13~";

let svc: TestService;
let dir: string;
const events: ChatEvent[] = [];
const stopEvents = new AbortController();

function tmux(...args: string[]): string {
  const r = Bun.spawnSync(["tmux", "-L", SOCKET, "-f", "/dev/null", ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `argv` in a new 120x40 tmux session, under a shell that prints "[exited CODE]" when it
 * ends (tmux itself has been seen to leave an exited pane process unreaped for a while).
 */
function open(name: string, argv: string[], env: Record<string, string> = {}, opts: { cwd?: string; term?: string } = {}): void {
  const vars = { LANG: "C.UTF-8", HOME: dir, ...env };
  // run in the test's temp folder by default (no node_modules for the binary to lean on);
  // tmux sets TERM in the pane itself, so a different TERM is set for the command
  const cmd = `cd ${quote(opts.cwd ?? dir)} && ${opts.term ? `TERM=${opts.term} ` : ""}${argv.map(quote).join(" ")}`;
  const script = `${cmd}; echo "[exited $?]"; exec sleep 3600`;
  tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]), "--", "sh", "-c", script);
}

const screen = (name: string) => tmux("capture-pane", "-p", "-t", name);
const keys = (name: string, ...k: string[]) => tmux("send-keys", "-t", name, ...k);
const type = (name: string, text: string) => tmux("send-keys", "-t", name, "-l", text);

const see = (name: string, text: string | RegExp, timeoutMs?: number) =>
  until(
    () => `${text} on ${name}:\n${screen(name)}`,
    () => {
      const s = screen(name);
      return (typeof text === "string" ? s.includes(text) : text.test(s)) && s;
    },
    { timeoutMs, everyMs: 40 },
  );
/** An answer on screen, and the turn over (the status line says "ready" again). */
async function reply(name: string, text: string): Promise<void> {
  await see(name, text);
  await see(name, "ready");
}
/** Waits for the pane's program to end; resolves to its exit code. */
const exited = async (name: string, timeoutMs?: number) => Number((await see(name, /\[exited (\d+)\]/, timeoutMs)).match(/\[exited (\d+)\]/)![1]);

/** Follows the service's chat events the way the TUI does, to check outcomes through the API. */
async function followEvents(): Promise<void> {
  const res = await svc.api("/api/chat/events", { signal: stopEvents.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const data = buf.slice(0, i).split("\n").find((l) => l.startsWith("data: "));
          buf = buf.slice(i + 2);
          if (data) events.push(JSON.parse(data.slice(6)));
        }
      }
    } catch {}
  })();
}

/** What the message line shows (its first line), without the box around it. */
function messageLine(name: string): string {
  const lines = screen(name).split("\n");
  const label = lines.findIndex((l) => l.includes("q message q"));
  // the thread list's row, then the box's left border; its right border last
  return (lines[label + 1] ?? "").replace(/^x\s*xx/, "").replace(/x\s*$/, "").trim();
}

const lastUserMessage = () => svc.llm.lastChat().messages.filter((m: any) => m.role === "user").at(-1)?.content;

beforeAll(async () => {
  if (!hasTmux) return;
  // build the binary when it is missing or predates `service chat`
  const probe = existsSync(BIN) ? Bun.spawnSync([BIN, "chat", "--help"], { stdout: "ignore", stderr: "ignore" }).exitCode : 1;
  if (probe !== 0) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build failed");
  }
  dir = mkdtempSync(join(tmpdir(), "service-tui-"));
  svc = await startTestService({ env: { TOOLS_ASK: "file_list" } });
  svc.service.services.tools.register(
    defineTool({ name: "echo_lines", description: "Says the text back", parameters: Type.Object({ text: Type.String() }), execute: async ({ text }) => text }),
  );
  await followEvents();
}, 120_000);

afterAll(async () => {
  if (!hasTmux) return;
  try {
    tmux("kill-server");
  } catch {}
  stopEvents.abort();
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTmux)("service chat (compiled binary) in tmux", () => {
  const S = "chat";

  test("connects and shows the model, a conversation view and the key hints", async () => {
    open(S, [BIN, "chat", "--url", svc.url, "--token", TOKEN, "--home", join(dir, "home")]);
    await see(S, "scripted-model"); // the model, from GET /api/status
    const s = await see(S, "● connected");
    expect(s).toContain("conversation");
    expect(s).toContain("Shift+Enter newline");
  });

  test("Enter sends a message and the answer streams in", async () => {
    type(S, "hello tui");
    keys(S, "Enter");
    await reply(S, "Assistant: You said: hello tui");
    expect(lastUserMessage()).toBe("hello tui");
  });

  test("a thinking model: the reasoning shows as one collapsed line, the answer without it", async () => {
    svc.llm.enqueue(thinkTags("The user wants a haiku. Five, seven, five syllables.", "Autumn moon rises"));
    type(S, "a haiku please");
    keys(S, "Enter");
    await reply(S, "Assistant: Autumn moon rises");
    const s = screen(S);
    expect(s).toMatch(/▸ thought \(\d+ characters of reasoning, not kept\)/);
    expect(s).not.toContain("syllables");
    expect(s).not.toContain("think>");
  });

  test("an answer cut at the model's token limit says it was cut", async () => {
    svc.llm.enqueue(lengthCut("The list goes on and"));
    type(S, "list everything");
    keys(S, "Enter");
    await reply(S, "Assistant: The list goes on and");
    await see(S, "(cut short)");
  });

  test("Shift+Enter (both encodings) inserts new lines: the LLM gets ONE message with them", async () => {
    const before = svc.llm.chatRequests().length;
    type(S, "first line");
    type(S, SHIFT_ENTER_CSI_U);
    type(S, "second line");
    type(S, SHIFT_ENTER_MOK);
    type(S, "third line");
    keys(S, "S-Enter"); // tmux's own Shift+Enter: sent as CSI u since the TUI asked for modifyOtherKeys
    type(S, "fourth line");
    await see(S, "fourth line");
    keys(S, "Enter");
    await reply(S, "Assistant: You said: first line");
    expect(svc.llm.chatRequests().length).toBe(before + 1);
    expect(lastUserMessage()).toBe("first line\nsecond line\nthird line\nfourth line");
  });

  test("Alt+Enter and Ctrl+J insert new lines too", async () => {
    type(S, "alpha");
    keys(S, "M-Enter");
    type(S, "beta");
    keys(S, "C-j");
    type(S, "gamma");
    keys(S, "Enter");
    await reply(S, "Assistant: You said: alpha");
    expect(lastUserMessage()).toBe("alpha\nbeta\ngamma");
  });

  test("Ctrl+L clears the screen", async () => {
    expect(screen(S)).toContain("You said: hello tui");
    keys(S, "C-l");
    await until("the transcript to clear", () => !screen(S).includes("You said") && screen(S));
    expect(screen(S)).toContain("● connected"); // the status line stays
  });

  test("Esc cancels a reply that hangs; the turn ends cancelled", async () => {
    svc.llm.enqueue({ hang: true });
    const before = svc.llm.chatRequests().length;
    type(S, "please hang");
    keys(S, "Enter");
    await svc.llm.waitForRequests(before + 1);
    await see(S, "thinking");
    keys(S, "Escape");
    await see(S, "Cancelled.");
    const done = await until("turn.completed", () =>
      events.find((e) => e.type === "turn.completed" && e.status === "failed" && e.error?.code === "cancelled"),
    );
    const r = await svc.api(`/api/v1/responses/${done.response_id}`);
    const body = (await r.json()) as any;
    expect(body.status).toBe("failed");
    expect(body.error.code).toBe("cancelled");
    await see(S, "ready");
  });

  test("Esc while the reply is streaming: cancelled, the text so far stays, nothing claims it finished", async () => {
    const words = Array.from({ length: 300 }, (_, i) => `tuiword${i}`).join(" ");
    svc.llm.enqueue({ text: words, chunkDelayMs: 20 });
    const chunks = svc.llm.textChunksSent();
    const seen = events.length;
    type(S, "stream something long");
    keys(S, "Enter");
    await svc.llm.waitForTextChunks(chunks + 8);
    await see(S, "tuiword5");
    keys(S, "Escape");
    const done = await until("turn.completed", () => events.slice(seen).find((e) => e.type === "turn.completed"));
    expect(done).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    await see(S, "Cancelled.");
    const body = (await (await svc.api(`/api/v1/responses/${done.response_id}`)).json()) as any;
    expect(body.status).toBe("failed");
    expect(body.output[0].status).toBe("incomplete");
    const kept = body.output[0].content[0].text as string;
    expect(kept.length).toBeGreaterThan(0);
    expect(words.startsWith(kept)).toBe(true);
    expect(kept.length).toBeLessThan(words.length / 2);
    expect(screen(S)).not.toContain("tuiword299");
    await see(S, "ready");
  });

  test("a tool under TOOLS_ASK asks for approval; approving runs it and the reply continues", async () => {
    svc.llm.enqueue({ toolCalls: [{ name: "file_list", arguments: {} }] }, { text: "Your files are listed." });
    type(S, "list my files");
    keys(S, "Enter");
    await see(S, "wants to run with");
    expect(screen(S)).toContain("file_list");
    type(S, "a");
    await reply(S, "Your files are listed.");
    const s = screen(S);
    expect(s).toContain("approved");
    expect(s).toContain("↳");
    const sent = svc.llm.lastChat().messages;
    expect(sent.at(-1).role).toBe("tool");
  });

  test("typed text is text while an approval waits: Esc, then a message starting with a or d decides nothing", async () => {
    svc.llm.enqueue({ toolCalls: [{ name: "file_list", arguments: {} }] }, { text: "I will not list them." });
    type(S, "list them once more");
    keys(S, "Enter");
    await see(S, "wants to run with");
    keys(S, "Escape"); // decide later: back to the message line
    await until("the prompt to close", () => !screen(S).includes("wants to run with") && screen(S));
    const pending = async () => ((await (await svc.api("/api/chat/approvals")).json()) as any).approvals;
    type(S, "about this");
    await see(S, "about this");
    type(S, " and does it wait");
    await see(S, "about this and does it wait");
    expect(await pending()).toHaveLength(1);
    keys(S, "C-u");
    type(S, "deny nothing");
    await see(S, "deny nothing");
    expect(await pending()).toHaveLength(1);
    // Enter does not send past the prompt: the text stays, the prompt comes back
    keys(S, "Enter");
    await see(S, "wants to run with");
    expect(screen(S)).toContain("deny nothing");
    type(S, "d"); // in the prompt, d denies
    await reply(S, "I will not list them.");
    expect(screen(S)).toContain("→ denied");
    expect(await pending()).toHaveLength(0);
    expect(screen(S)).toContain("deny nothing"); // still in the message line, whole
    // Tab reaches the prompt again only while one waits: now it goes to the conversation
    keys(S, "C-u");
  });

  test("answers read as Markdown: styles instead of marks, code under its language, tables aligned", async () => {
    svc.llm.enqueue({ text: "Use **care** with `rm`:\n\n```bash\nrm -rf build\n```\n\n| plan | price |\n|---|---|\n| basic | $1 |\n| team | $10 |" });
    type(S, "markdown please");
    keys(S, "Enter");
    await reply(S, "Assistant: Use care with rm:");
    const s = screen(S);
    expect(s).not.toContain("**");
    expect(s).not.toContain("```");
    expect(s).toContain("bash:");
    expect(s).toContain("  rm -rf build");
    // the columns line up (box drawing comes out of tmux as x and q)
    const rows = s.split("\n").filter((l) => /basic|team|plan/.test(l)).map((l) => l.indexOf("$") >= 0 ? l.indexOf("$") : l.indexOf("price"));
    expect(new Set(rows).size).toBe(1);
  });

  test("a long tool result is cut in the conversation and opens whole with /show N", async () => {
    const long = Array.from({ length: 30 }, (_, i) => `entry-${i + 1}.txt (file, ${i} bytes)`).join("\n");
    svc.llm.enqueue({ toolCalls: [{ name: "echo_lines", arguments: { text: long } }] }, { text: "There they are." });
    type(S, "list the entries");
    keys(S, "Enter");
    await reply(S, "There they are.");
    const cut = await see(S, /… \/show (\d+) to read it whole/);
    const n = /… \/show (\d+) to read it whole/.exec(cut)![1]!;
    expect(cut).not.toContain("entry-30.txt");
    type(S, `/show ${n}`);
    keys(S, "Enter");
    await see(S, "Esc close");
    keys(S, "End");
    await see(S, "entry-30.txt (file, 29 bytes)");
    keys(S, "Escape");
    await until("the viewer to close", () => !screen(S).includes("Esc close") && screen(S));
  });

  test("Up in an empty message line brings back the last prompt, and the one before", async () => {
    keys(S, "Up");
    await until("the last prompt back", () => /^\/show \d+$/.test(messageLine(S)) && screen(S));
    keys(S, "Up");
    await until("the prompt before", () => messageLine(S) === "list the entries" && screen(S));
    keys(S, "Down", "Down");
    await until("the line to be empty again", () => messageLine(S) === "" && screen(S));
  });

  test("/retry answers again; /alt shows the earlier answer", async () => {
    svc.llm.enqueue({ text: "First take." });
    type(S, "give me a take");
    keys(S, "Enter");
    await reply(S, "First take.");
    svc.llm.enqueue({ text: "Second take." });
    type(S, "/retry");
    keys(S, "Enter");
    await reply(S, "Second take.");
    await see(S, "alternative 2 of 2");
    expect(screen(S)).not.toContain("First take.");
    type(S, "/alt 1");
    keys(S, "Enter");
    await see(S, "First take.");
    await see(S, "alternative 1 of 2");
  });

  test("an approval prompt shows where the data would go and an identity file's change", async () => {
    svc.llm.enqueue({ toolCalls: [{ name: "file_list", arguments: {} }] }, { text: "Listed after all." });
    type(S, "one more listing");
    keys(S, "Enter");
    await see(S, "wants to run with");
    const waiting = ((await (await svc.api("/api/chat/approvals")).json()) as any).approvals[0];
    await svc.service.services.db.$client.execute({
      sql: "update gates set data = json_set(data, '$.details.destination', 'files.example.net', '$.details.diff', ?) where thread_id = ?",
      args: ["--- USER.md\n+++ USER.md\n@@ -1 +1 @@\n-Likes tea.\n+Likes coffee.\n", waiting.thread_id],
    });
    keys(S, "Escape");
    keys(S, "C-l"); // the prompt stays; Tab opens it again, read afresh
    const T = "look";
    open(T, [BIN, "chat", "--url", svc.url, "--token", TOKEN, "--home", join(dir, "home"), "--thread", waiting.thread_id]);
    const shown = await see(T, "Likes coffee.");
    expect(shown).toContain("The data would go to files.example.net");
    expect(shown).toContain("-Likes tea.");
    type(T, "a");
    await reply(T, "Listed after all.");
    keys(T, "C-c");
    expect(await exited(T)).toBe(0);
    await see(S, "Listed after all.");
  });

  test("Up/Down scroll the transcript", async () => {
    keys(S, "C-l");
    const n = 12; // 8 lines each: more than the view holds
    for (let i = 1; i <= n; i++) svc.llm.enqueue({ text: `answer ${i}\n${"filler\n".repeat(3)}` });
    for (let i = 1; i <= n; i++) {
      type(S, "many");
      keys(S, "Enter");
      await reply(S, `answer ${i}`);
    }
    expect(screen(S)).not.toContain("answer 1 ");
    keys(S, "Tab"); // the conversation (Up in the message line recalls the last prompt)
    await see(S, "PgUp/PgDn scroll");
    keys(S, ...Array(10).fill("Up"));
    await until("the transcript to scroll up", () => !screen(S).includes(`answer ${n}`) && screen(S));
    expect(screen(S)).toContain(`answer ${n - 1}`);
    keys(S, ...Array(10).fill("Down"));
    await see(S, `answer ${n}`);
    keys(S, "Escape");
    await see(S, "Shift+Enter newline");
  });

  test("Tab focuses the thread list; Enter there opens a new conversation; Esc goes back", async () => {
    // the status line tells what the keys do where the focus is
    keys(S, "Tab");
    await see(S, "PgUp/PgDn scroll"); // the transcript
    keys(S, "Tab");
    await see(S, "Enter open"); // the thread list
    keys(S, "Up", "Up", "Up", "Up", "Up", "Up", "Up", "Up", "Up", "Up"); // to "+ new conversation"
    keys(S, "Enter");
    await see(S, "New conversation");
    await see(S, "Shift+Enter newline"); // back in the input
    keys(S, "Tab");
    await see(S, "PgUp/PgDn scroll");
    keys(S, "Escape"); // goes back to the input
    await see(S, "Shift+Enter newline");
    type(S, "fresh start");
    keys(S, "Enter");
    await reply(S, "Assistant: You said: fresh start");
    const threads = (await (await svc.api("/api/chat/threads")).json()) as any;
    expect(threads.threads.length).toBeGreaterThanOrEqual(2);
  });

  test("Ctrl+C quits: the pane's process exits with 0", async () => {
    keys(S, "C-c");
    expect(await exited(S)).toBe(0);
  });
});

describe.skipIf(!hasTmux)("everyone can use it in a terminal", () => {
  // Terminals disagree on how wide some emoji sequences are: the TUI asks the terminal at start
  // and lays out by its answer, which it logs. (tmux 3.3a cannot hold a cluster over 21 bytes,
  // such as the four-person family, whatever the program does: three people here.)
  const measuredWidths = () => {
    const line = readFileSync(join(dir, "home", "logs", "service.log"), "utf8").split("\n").findLast((l) => l.includes("terminal: draws"));
    if (!line) throw new Error("the TUI did not log how the terminal draws emoji");
    return { zwjJoins: line.includes("ZWJ sequences joined"), modifierJoins: line.includes("skin tones joined"), vs16Wide: line.includes("VS16 emoji wide") };
  };
  const TEXT = "Family 👨‍👩‍👧 coder 👩🏽‍💻 नमस्ते षि 中文 ✅ 日本語 مرحبا";

  test("emoji sequences, Devanagari and CJK keep every border in place, and the real cursor follows the typing", async () => {
    const U = "unicode";
    open(U, [BIN, "chat", "--url", svc.url, "--token", TOKEN, "--home", join(dir, "home")]);
    await see(U, "● connected");
    svc.llm.enqueue({ text: `Same here: ${TEXT}` });
    type(U, TEXT);
    keys(U, "Enter");
    await reply(U, "Same here:");
    resetTerminalWidths(measuredWidths());
    try {
      const rows = screen(U).split("\n").map((l) => l.trimEnd()).filter((l) => l.endsWith("x") || l.endsWith("k") || l.endsWith("j"));
      // every boxed row reaches the right edge exactly: no cluster pushed a border out or left a gap
      expect(rows.length).toBeGreaterThan(30);
      expect(rows.filter((row) => textWidth(row) !== 120).map((row) => [row, textWidth(row)])).toEqual([]);
    } finally {
      resetTerminalWidths();
    }
    const shown = screen(U);
    expect(shown).toContain("You: Family 👨‍👩‍👧 coder 👩🏽‍💻 नमस्ते षि 中文 ✅"); // the vowel sign stays with its letter
    expect(shown).toContain("Same here: Family 👨‍👩‍👧 coder 👩🏽‍💻");
    type(U, "hello");
    await until("hello typed", () => messageLine(U) === "hello" && screen(U));
    // the terminal's own cursor sits after "hello" in the message box (thread list 28 wide, then the border)
    const [flag, x, y] = tmux("display", "-p", "-t", U, "#{cursor_flag} #{cursor_x} #{cursor_y}").trim().split(" ").map(Number);
    expect({ flag, x, y }).toEqual({ flag: 1, x: 28 + 1 + 5, y: 40 - 3 });
    keys(U, "C-u");
    keys(U, "C-c");
    expect(await exited(U)).toBe(0);
  });

  test("the approval prompt, once closed, leaves nothing of its border in the conversation", async () => {
    const A = "prompt";
    open(A, [BIN, "chat", "--url", svc.url, "--token", TOKEN, "--home", join(dir, "home")]);
    await see(A, "● connected");
    svc.llm.enqueue({ toolCalls: [{ name: "file_list", arguments: { path: TEXT } }] }, { text: "Done listing." });
    type(A, "list with a long unicode path please");
    keys(A, "Enter");
    await see(A, "lq approval");
    keys(A, "Escape");
    await until("the prompt to close", () => !screen(A).includes("lq approval") && screen(A));
    const s = screen(A);
    expect(s).not.toContain("wants to run with");
    // the conversation rows are text between two borders: no stray box corner or side inside them
    const inside = s.split("\n").slice(1, 30).map((l) => l.slice(30, 110));
    expect(inside.filter((l) => /[lkmj]q|q[lkmj]|x\s{3,}x/.test(l))).toEqual([]);
    keys(A, "Tab");
    await see(A, "wants to run with");
    type(A, "d");
    await reply(A, "Done listing.");
    keys(A, "C-c");
    expect(await exited(A)).toBe(0);
  });

  test("at 60 columns with a long title the key hints stay on the status line", async () => {
    const N = "narrow";
    const vars = { LANG: "C.UTF-8", HOME: dir };
    tmux("new-session", "-d", "-s", N, "-x", "60", "-y", "24", ...Object.entries(vars).flatMap(([k, v]) => ["-e", `${k}=${v}`]), "--", BIN, "chat", "--url", svc.url, "--token", TOKEN, "--home", join(dir, "home"));
    await see(N, "connected");
    type(N, "A very long first message that becomes this conversation's title and would push everything else off the line");
    keys(N, "Enter");
    await see(N, "ready");
    const status = screen(N).trimEnd().split("\n").at(-1)!;
    expect(status).toContain("Enter send");
    expect(status).toContain("^C quit");
    keys(N, "C-c");
  });
});

describe.skipIf(!hasTmux)("service chat from source, and with --thread", () => {
  test("bun src/main.ts chat --thread opens the history, sends, compacts and quits", async () => {
    const threads = (await (await svc.api("/api/chat/threads")).json()) as any;
    const hello = threads.threads.find((t: any) => t.title?.startsWith("hello tui"));
    expect(hello).toBeDefined();
    const S = "src";
    open(S, [process.execPath, join(root, "src/main.ts"), "chat", "--url", svc.url, "--token", TOKEN, "--thread", hello.id], {
      SERVICE_HOME: join(dir, "home"),
    });
    await see(S, "Assistant: answer 12", 20_000); // the end of that thread's history
    await see(S, "● connected");
    type(S, "again");
    keys(S, "Enter");
    await reply(S, "Assistant: You said: again");
    // /compact: the memory step, the summary, then a mark where the summary starts to stand in
    svc.llm.enqueue({ text: "nothing to save" }, { text: "Summary: the user said hello." });
    type(S, "/compact");
    keys(S, "Enter");
    await see(S, /Compacted: \d+ earlier items are now a summary for the model\./);
    await see(S, "earlier turns summarised for the model (");
    expect(svc.llm.lastChat().max_tokens).toBeGreaterThan(0);
    keys(S, "C-c");
    expect(await exited(S)).toBe(0);
    expect(readFileSync(join(dir, "home", "logs", "service.log"), "utf8")).toContain("terminal: TERM=");
  }, 30_000);

  test("a refused token and an unreachable service are clear errors", async () => {
    // not spawnSync: the service answering runs in this process
    const run = async (args: string[]) => {
      const p = Bun.spawn([BIN, "chat", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", HOME: dir } });
      const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      return { code, err };
    };
    const refused = await run(["--url", svc.url, "--token", "wrong-token"]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("refused the token (401)");
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = closed.port;
    await closed.stop(true);
    const unreachable = await run(["--url", `http://127.0.0.1:${port}`, "--token", "t"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain(`cannot connect to http://127.0.0.1:${port}`);
    const help = Bun.spawnSync([BIN, "chat", "--help"], { stdout: "pipe" });
    expect(help.exitCode).toBe(0);
    expect(help.stdout.toString()).toContain("Shift+Enter");
    expect(Bun.spawnSync([BIN, "chat", "--bogus"], { stderr: "pipe" }).exitCode).toBe(2);
  });
});

describe.skipIf(!hasTmux)("the event stream", () => {
  test("is reconnected when the service restarts, and chat goes on", async () => {
    const free = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = String(free.port);
    await free.stop(true);
    const home = join(dir, "restart-home");
    let second = await startTestService({ env: { GATEWAY_PORT: port }, keepHome: home, llm: svc.llm });
    const S = "restart";
    open(S, [BIN, "chat", "--url", second.url, "--token", TOKEN, "--home", join(dir, "home")]);
    await see(S, "● connected");
    await second.stop();
    await see(S, "reconnecting");
    second = await startTestService({ env: { GATEWAY_PORT: port }, keepHome: home, llm: svc.llm });
    try {
      await see(S, "● connected");
      type(S, "still here");
      keys(S, "Enter");
      await reply(S, "Assistant: You said: still here");
      keys(S, "C-c");
      expect(await exited(S)).toBe(0);
    } finally {
      await second.stop();
    }
  });
});

describe.skipIf(!hasTmux)("service serve in a terminal", () => {
  for (const term of ["xterm-256color", "tmux-256color"]) {
    test(`runs the TUI (TERM=${term}, binary from an empty directory); Ctrl+C stops the service`, async () => {
      const S = `serve-${term}`;
      const cwd = mkdtempSync(join(dir, "empty-"));
      const home = join(cwd, "home");
      open(S, [BIN, "serve"], {
        SERVICE_HOME: home,
        SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
        LLM_BASE_URL: svc.llm.url,
        LLM_API_KEY: "k",
        LLM_MODEL: "scripted-model",
        GATEWAY_PORT: "0",
        CLI_ENABLED: "true",
      }, { cwd, term });
      const s = await see(S, "● connected");
      expect(s).toContain("listening on http://127.0.0.1:");
      type(S, "hi serve");
      type(S, SHIFT_ENTER_CSI_U);
      type(S, "two lines");
      keys(S, "Enter");
      await reply(S, "Assistant: You said: hi serve");
      expect(lastUserMessage()).toBe("hi serve\ntwo lines");
      keys(S, "C-c");
      expect(await exited(S)).toBe(0);
      expect(screen(S)).toContain("stopped");
      const log = readFileSync(join(home, "logs", "service.log"), "utf8");
      expect(log).toContain("listening on http://127.0.0.1:");
      expect(log).toContain(`terminal: TERM=${term}`);
    }, 30_000);
  }
});
