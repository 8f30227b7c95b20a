// The compiled binary, run from an empty directory: it installs an extension and runs its
// WebAssembly tool in the sandbox process it starts from itself (`service __wasm-sandbox`).
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

describe("the compiled binary", () => {
  test("installs a WebAssembly extension and runs its tool through the agent", async () => {
    const source = writeWasmExtension(tmp.dir);
    const install = run(["extension", "install", source]);
    expect(await install.exited).toBe(0);
    expect(await new Response(install.stdout).text()).toContain("installed wasmtest 1.2.3");
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

    llm.enqueue({ toolCalls: [{ name: "ext__wasmtest__echo", arguments: { text: "from the binary" } }] }, { text: "Echoed." });
    const res = await fetch(`${url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "echo it" }),
    });
    const body = (await res.json()) as any;
    expect(body.status).toBe("completed");
    const tool = llm.lastChat().messages.find((m: any) => m.role === "tool");
    expect(tool.content).toContain('{"text":"from the binary"}');
  }, 60_000);
});
