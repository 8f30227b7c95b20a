// The compiled binary hands back the pages of its embedded files once it is quiet: the 9 MB
// of libSQL's addon, which Bun copies out at start, and bytecode decoded already
// (src/embedded-pages.ts, called by the memory steward).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bunSection, mappingOf } from "../../src/embedded-pages";
import { BIN, ensureBinary, listeningUrl, serveUntil } from "../support/binary";
import { until } from "../support/until";

let dir: string;

beforeAll(() => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "service-e2e-memory-"));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Resident kB of the mapping that holds the binary's `.bun` section in process `pid`. */
function embeddedResidentKb(pid: number): number {
  const exe = realpathSync(BIN);
  const section = bunSection(exe)!;
  const mapping = mappingOf(readFileSync(`/proc/${pid}/maps`, "utf8"), exe, section.offset)!;
  const smaps = readFileSync(`/proc/${pid}/smaps`, "utf8");
  const from = smaps.indexOf(`${mapping.start.toString(16).padStart(8, "0")}-`);
  return Number(/\nRss:\s+(\d+) kB/.exec(smaps.slice(from))![1]);
}

test.skipIf(process.platform !== "linux")("once quiet, the binary's embedded files (libSQL's 9 MB addon among them) are no longer resident", async () => {
  const env = { PATH: process.env.PATH ?? "", HOME: dir, SERVICE_HOME: join(dir, "home"), GATEWAY_PORT: "0", CLI_ENABLED: "false", LLM_BASE_URL: "http://127.0.0.1:9/v1", LLM_API_KEY: "k", LLM_MODEL: "m" };
  const { proc, ready: url } = await serveUntil(["serve"], { cwd: dir, env }, listeningUrl);
  try {
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // the section is about 38 MB; the addon alone keeps 9 MB of it resident until handed back
    await until("the embedded section under 4 MB resident", () => embeddedResidentKb(proc.pid) < 4096);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
});
