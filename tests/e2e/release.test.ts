// The release binaries (bun run build:release): each has its checksum file, and the linux-arm64
// one, run under Debian's qemu-user-static, starts, answers `status`, runs one turn against
// the scripted LLM, and stops cleanly. Skipped, with one line, where qemu or the arm64 C
// library is missing (.ci/run installs both).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRelease } from "../../scripts/build-release";
import { listeningUrl, root, serveUntil, type Served } from "../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";

const QEMU = Bun.which("qemu-aarch64-static");
const ARM64_LIBC = "/lib/ld-linux-aarch64.so.1";
const canRun = QEMU !== null && existsSync(ARM64_LIBC);
if (!canRun) console.log("skipped: the linux-arm64 smoke test needs qemu-aarch64-static and the arm64 C library (apt-get install qemu-user-static libc6:arm64)");

const BINARY = join(root, "dist/release/service-linux-arm64");

async function sha256(file: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(file).stream()) hash.update(chunk);
  return hash.digest("hex");
}

describe.skipIf(!canRun)("the linux-arm64 binary under qemu", () => {
  let llm: ScriptedLLM;
  let dir: string;
  let served: Served<string>;
  const token = "arm64-smoke-token-0123456789abcdef";
  let env: Record<string, string>;
  const arm64 = (...args: string[]) => [QEMU!, "-L", "/", BINARY, ...args];

  beforeAll(async () => {
    // built by `bun run build:release` (CI does), or here
    if (!existsSync(BINARY) || !existsSync(`${BINARY}.sha256`)) await buildRelease("linux-arm64");
    llm = await startScriptedLLM();
    dir = mkdtempSync(join(tmpdir(), "service-arm64-"));
    env = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      SERVICE_HOME: join(dir, "home"),
      SERVICE_REBORN_WEBUI_TOKEN: token,
      LLM_BASE_URL: llm.url,
      LLM_API_KEY: "k",
      LLM_MODEL: "scripted-model",
      GATEWAY_PORT: "0",
      CLI_ENABLED: "false",
    };
    served = await serveUntil(arm64("serve").slice(1), { cwd: dir, env, bin: QEMU! }, listeningUrl).catch((e) => {
      throw new Error(`the arm64 binary did not start under qemu: ${e.message}`);
    });
  }, 120_000);

  afterAll(async () => {
    if (served && served.proc.exitCode === null) served.proc.kill("SIGKILL");
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("it is an arm64 executable, and its checksum file matches it", async () => {
    const header = new Uint8Array(await Bun.file(BINARY).slice(0, 20).arrayBuffer());
    expect([...header.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]); // ELF
    expect(header[18] | (header[19]! << 8)).toBe(183); // e_machine: EM_AARCH64
    const [hex, name] = readFileSync(`${BINARY}.sha256`, "utf8").trim().split(/\s+/);
    expect(name).toBe("service-linux-arm64");
    expect(hex).toBe(await sha256(BINARY));
  });

  test("status, one turn, and a clean stop", async () => {
    const status = Bun.spawnSync(arm64("status"), { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    expect(status.stdout.toString()).toContain("is running at");
    expect(status.exitCode).toBe(0);

    llm.enqueue({ text: "Hello from an arm64 box." });
    const res = await fetch(`${served.ready}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "Hello" }),
    });
    const body = (await res.json()) as any;
    expect(body.status).toBe("completed");
    expect(body.output[0].content[0].text).toBe("Hello from an arm64 box.");

    served.proc.kill("SIGTERM");
    expect(await served.proc.exited).toBe(0);
    const after = Bun.spawnSync(arm64("status"), { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    expect(after.exitCode).toBe(1);
  }, 60_000);
});
