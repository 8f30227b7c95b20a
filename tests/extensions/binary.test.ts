// The compiled binary, run from an empty directory: it installs an extension and runs its
// WebAssembly tool in the sandbox process it starts from itself (`service __wasm-sandbox`),
// refuses an allow list that reaches too far, and stops a looping module at its CPU limit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, type Subprocess } from "bun";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { tempDir, writeWasmExtension } from "./support";

const root = resolve(import.meta.dir, "../..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const TOKEN = "binary-test-token-0123456789abcdef";

let llm: ScriptedLLM;
let tmp: ReturnType<typeof tempDir>;
let cwd: string;
let home: string;
let server: Subprocess<"ignore", "pipe", "pipe"> | undefined;

function run(args: string[]) {
  return spawn([BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: cwd, SERVICE_HOME: home, GATEWAY_PORT: "0", CLI_ENABLED: "false", SERVICE_REBORN_WEBUI_TOKEN: TOKEN, LLM_BASE_URL: llm.url, LLM_API_KEY: "k", LLM_MODEL: "m" },
    stdout: "pipe",
    stderr: "pipe",
  });
}

beforeAll(async () => {
  if (!existsSync(BIN)) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build failed");
  }
  llm = await startScriptedLLM();
  tmp = tempDir("ext-binary-");
  cwd = join(tmp.dir, "empty");
  mkdirSync(cwd);
  home = join(tmp.dir, "home");
}, 120_000);

afterAll(async () => {
  server?.kill("SIGKILL");
  await server?.exited;
  await llm.close();
  tmp.cleanup();
});

/** One turn of the model calling `tool`; the tool's output as the model got it. */
async function turn(url: string, tool: string, args: unknown = {}): Promise<string> {
  llm.enqueue({ toolCalls: [{ name: tool, arguments: args }] }, { text: "Done." });
  const res = await fetch(`${url}/api/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", input: `run ${tool}` }),
  });
  const body = (await res.json()) as any;
  expect(body.status).toBe("completed");
  return llm.lastChat().messages.find((m: any) => m.role === "tool").content;
}

describe("the compiled binary", () => {
  test("refuses to install an extension whose allow list reaches every .com host, saying which entry", async () => {
    const source = writeWasmExtension(tmp.dir, { name: "wide", allow: ["api.example.com", "*.com"] });
    const install = run(["extension", "install", source]);
    expect(await install.exited).toBe(1);
    expect(await new Response(install.stderr).text()).toBe(
      `service: cannot install ${source}: ${source}/extension.json: runtime.network.allow: "*.com" is a wildcard over the public suffix com, whose names anyone can register: list the domains under it instead\n`,
    );
    expect(existsSync(join(home, "extensions", "wide"))).toBe(false);
  }, 30_000);

  test("installs a WebAssembly extension and runs its tool through the agent; a looping one stops at its CPU limit", async () => {
    const source = writeWasmExtension(tmp.dir);
    const install = run(["extension", "install", source]);
    expect(await install.exited).toBe(0);
    expect(await new Response(install.stdout).text()).toContain("installed wasmtest 1.2.3");
    const looper = writeWasmExtension(tmp.dir, { name: "looper", limits: { timeoutMs: 120_000, cpuMs: 1_000 } });
    expect(await run(["extension", "install", looper]).exited).toBe(0);
    const list = run(["extension", "list"]);
    expect(await new Response(list.stdout).text()).toMatch(/wasmtest\s+1\.2\.3\s+enabled\s+wasm/);

    server = run(["serve"]) as Subprocess<"ignore", "pipe", "pipe">;
    const reader = server.stdout.getReader();
    let out = "";
    let url: string | undefined;
    while (!url) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve exited: ${out}${await new Response(server.stderr).text()}`);
      out += new TextDecoder().decode(value);
      url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    }
    void (async () => {
      while (!(await reader.read()).done);
    })();

    expect(await turn(url, "ext__wasmtest__echo", { text: "from the binary" })).toContain('{"text":"from the binary"}');

    const started = performance.now();
    expect(await turn(url, "ext__looper__spin")).toContain("Error: ext__looper__spin failed: used its 1 s of CPU time and was stopped");
    expect(performance.now() - started).toBeLessThan(60_000);
    // the service is unharmed: it answers, and runs the next call
    expect((await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect(await turn(url, "ext__looper__echo", { text: "after the loop" })).toContain('{"text":"after the loop"}');
  }, 120_000);
});
