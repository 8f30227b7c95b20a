// The Codex CLI (`@openai/codex`, a native binary inside the npm package) against the
// compiled binary, with the set-up docs/clients.md gives: a custom provider with
// wire_api = "responses" and the features that add non-function tools turned off. Codex is
// stateless by design (store: false, the whole history each request, always streamed), so
// chaining, conversations and background do not apply to it.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "../../support/binary";
import { startBinary, type RunningBinary } from "./binary";

const CODEX = join(root, "node_modules/.bin/codex");

let s: RunningBinary;
let home: string;
let work: string;
beforeAll(async () => {
  s = await startBinary();
  const dir = mkdtempSync(join(tmpdir(), "codex-client-"));
  home = join(dir, "codex-home");
  work = join(dir, "work");
  mkdirSync(home);
  mkdirSync(work);
  // the config of docs/clients.md, with this service's URL
  writeFileSync(
    join(home, "config.toml"),
    `model = "gpt-4o-mini"
model_provider = "service"
web_search = "disabled"

[features]
multi_agent = false
goals = false

[model_providers.service]
name = "service"
base_url = "${s.url}/api/v1"
env_key = "SERVICE_TOKEN"
wire_api = "responses"
`,
  );
  writeFileSync(join(work, "note.txt"), "the secret word is marmalade\n");
});
afterAll(async () => {
  await s.stop();
  rmSync(join(home, ".."), { recursive: true, force: true });
});
beforeEach(() => s.llm.reset());

async function codexExec(prompt: string, extra: string[] = []) {
  const proc = Bun.spawn([CODEX, "exec", "--skip-git-repo-check", "-C", work, ...extra, prompt], {
    env: { PATH: process.env.PATH ?? "", HOME: home, CODEX_HOME: home, SERVICE_TOKEN: s.token },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const requests = () => s.llm.chatRequests().map((r) => r.body);

describe("Codex CLI (codex exec)", () => {
  test("the trimmed tool list is accepted: only function tools, under 16 KiB", async () => {
    s.llm.enqueue({ text: "Hello from the service." });
    const r = await codexExec("say hello");
    expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({ code: 0, stdout: "Hello from the service." });
    const tools = requests()[0].tools.map((t: any) => t.function.name);
    expect(tools).toContain("exec_command");
    // Codex's instructions are developer messages: they reach the model as instruction blocks
    expect(requests()[0].messages.at(-1).content).toContain("<instructions>");
    expect(requests()[0].messages.at(-1).content).toEndWith("say hello");
  });

  test("a tool loop over several steps: Codex runs the command and replays everything", async () => {
    s.llm.enqueue(
      { text: "Let me read it.", toolCalls: [{ name: "exec_command", arguments: { cmd: "cat note.txt" } }] },
      { toolCalls: [{ name: "exec_command", arguments: { cmd: "wc -c note.txt" } }] },
      { text: "The secret word is marmalade." },
    );
    const r = await codexExec("What is the secret word in note.txt?");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("The secret word is marmalade.");
    const [, second, third] = requests();
    const toolOutputs = (body: any) => body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
    expect(toolOutputs(second).join("\n")).toContain("the secret word is marmalade");
    expect(toolOutputs(third)).toHaveLength(2);
    expect(toolOutputs(third)[1]).toContain("29 note.txt");
  });

  test("structured output with --output-schema", async () => {
    const schema = join(work, "..", "schema.json");
    writeFileSync(schema, JSON.stringify({ type: "object", properties: { word: { type: "string" } }, required: ["word"], additionalProperties: false }));
    s.llm.enqueue({ text: '{"word":"marmalade"}' });
    const r = await codexExec("Give the word as JSON", ["--output-schema", schema]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toEqual({ word: "marmalade" });
    expect(requests()[0].response_format).toMatchObject({ type: "json_schema", json_schema: { schema: { required: ["word"] } } });
  });

  test("a failed turn: Codex retries a response.failed, then prints the service's message and exits non-zero", async () => {
    s.llm.respondWith(() => ({ error: { status: 400, message: "the prompt is too long" } }));
    // Codex retries a failed stream (5 times by default, with backoff); one retry shows it
    const r = await codexExec("anything", ["-c", "model_providers.service.stream_max_retries=1"]);
    s.llm.respondWith(null);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("the prompt is too long");
    expect(requests()).toHaveLength(2);
  }, 30_000);
});
