// Interactive onboarding as a person does it: `service onboard` in a terminal (tmux), the
// prompts answered with keys, the endpoint checked on the spot against the scripted LLM.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { until } from "../support/until";

const root = resolve(import.meta.dir, "../..");
const SOCKET = `service-onboard-test-${process.pid}`;
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;

function tmux(...args: string[]): string {
  const r = Bun.spawnSync(["tmux", "-L", SOCKET, "-f", "/dev/null", ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}
const screen = () => tmux("capture-pane", "-p", "-t", "onboard");
const keys = (...k: string[]) => tmux("send-keys", "-t", "onboard", ...k);

/** Polls the screen (bounded) until it shows `text`, at least `times` times. */
function see(text: string, times = 1, timeoutMs = 15_000): Promise<string> {
  let s = "";
  return until(
    () => `"${text}" on:\n${s}`,
    () => {
      s = screen();
      return s.split(text).length - 1 >= times && s;
    },
    { timeoutMs, everyMs: 50 },
  );
}

let llm: ScriptedLLM;
let dir: string;

beforeAll(async () => {
  llm = await startScriptedLLM({ apiKey: "secret-key" });
  dir = mkdtempSync(join(tmpdir(), "service-onboard-"));
});
afterAll(async () => {
  if (hasTmux) Bun.spawnSync(["tmux", "-L", SOCKET, "kill-server"], { stdout: "ignore", stderr: "ignore" });
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

test.skipIf(!hasTmux)(
  "asks for endpoint, key and model, reports a wrong endpoint on the spot, then writes the home",
  async () => {
    const home = join(dir, "home");
    const cmd = `bun ${join(root, "src/main.ts")} onboard; echo "[exited $?]"; sleep 60`;
    tmux("new-session", "-d", "-s", "onboard", "-x", "120", "-y", "40", "-e", `SERVICE_HOME=${home}`, "--", "sh", "-c", cmd);

    // A wrong endpoint first: the check fails right there and offers to enter it again. The
    // offered endpoint is a placeholder: what is typed replaces it, nothing is appended to it.
    await see("OpenAI-compatible endpoint");
    keys("-l", "http://127.0.0.1:9/v1");
    keys("Enter");
    await see("API key");
    keys("-l", "secret-key");
    keys("Enter");
    await see("did not answer");
    await see("Enter the endpoint again?");
    keys("Enter");

    // Now the scripted LLM; it answers GET /models, so the model is chosen from its list.
    await see("OpenAI-compatible endpoint", 2);
    keys("-l", llm.url);
    keys("Enter");
    await see("API key", 2);
    keys("-l", "secret-key");
    keys("Enter");
    await see("scripted-model");
    keys("Enter");
    // the webhook channel: on, for other machines too; a secret is made for it
    await see("Turn on the webhook channel");
    keys("y");
    keys("Enter");
    await see("Where may senders reach it from?");
    keys("Enter");
    const done = await see("[exited 0]");
    expect(done).toContain("/login?token=");
    expect(done).toContain("listens on all interfaces");

    const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    expect(config.llm).toEqual({ baseUrl: llm.url, apiKey: "secret-key", model: "scripted-model" });
    expect(config.http).toEqual({ enabled: true, host: "0.0.0.0", webhookSecret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(done.replace(/\s+/g, "")).toContain(config.http.webhookSecret);
    const token = readFileSync(join(home, "webui-token"), "utf8").trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(home, "webui-token")).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    // the endpoint was really asked, with the key that was typed
    const models = llm.requests.filter((r) => r.path === "/v1/models");
    expect(models.at(-1)?.headers.authorization).toBe("Bearer secret-key");
    expect(existsSync(join(home, "service.db"))).toBe(true);
  },
  60_000,
);

test.skipIf(!hasTmux)("offers a local Ollama as the default endpoint when one answers on 127.0.0.1:11434", async () => {
  let ollama: ScriptedLLM;
  try {
    ollama = await startScriptedLLM({ port: 11434, model: "llama3.2" });
  } catch {
    return; // the port is taken on this machine: nothing to pretend with
  }
  try {
    const home = join(dir, "home-ollama");
    const cmd = `bun ${join(root, "src/main.ts")} onboard; echo "[exited $?]"; sleep 60`;
    tmux("new-session", "-d", "-s", "ollama", "-x", "120", "-y", "40", "-e", `SERVICE_HOME=${home}`, "--", "sh", "-c", cmd);
    const show = () => tmux("capture-pane", "-p", "-t", "ollama");
    const shows = (text: string) => until(() => `"${text}" on:\n${show()}`, () => show().includes(text), { timeoutMs: 15_000, everyMs: 50 });
    await shows("http://127.0.0.1:11434/v1");
    expect(show()).toContain("An Ollama server answers");
    tmux("send-keys", "-t", "ollama", "Enter"); // keep the offered endpoint (Enter takes the placeholder)
    await shows("API key");
    tmux("send-keys", "-t", "ollama", "Enter"); // no key
    await shows("llama3.2");
    tmux("send-keys", "-t", "ollama", "Enter");
    await shows("Turn on the webhook channel");
    tmux("send-keys", "-t", "ollama", "Enter"); // no (the default)
    await shows("[exited 0]");
    const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    expect(config.llm).toEqual({ baseUrl: "http://127.0.0.1:11434/v1", model: "llama3.2" });
    expect(config.http).toBeUndefined();
  } finally {
    await ollama.close();
  }
}, 60_000);
