// The binary's JavaScriptCore compiler threads run at idle priority (src/compiler-threads.ts),
// as Linux reports each thread's scheduling policy; SERVICE_JIT_PRIORITY=normal leaves them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, listeningUrl, serveEnv, serveUntil } from "../support/binary";

const SCHED_IDLE = 5;
let dir: string;

beforeAll(() => {
  ensureBinary();
  dir = mkdtempSync(join(tmpdir(), "service-jit-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each thread of `pid` named `name`: its scheduling policy (field 41 of /proc/<pid>/task/<tid>/stat). */
function policies(pid: number, name: string): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    // the name is in brackets and may hold spaces: the fields are counted after it
    if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== name) return [];
    return [Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38])];
  });
}

async function threadsOf(name: string, extra: Record<string, string>) {
  const home = join(dir, name);
  const s = await serveUntil(["serve"], { cwd: dir, env: serveEnv({ dir, home, token: "t".repeat(64), llmUrl: "http://127.0.0.1:9/v1" }, extra) }, listeningUrl);
  try {
    return { compilers: policies(s.proc.pid, "JITWorker"), loop: policies(s.proc.pid, "service") };
  } finally {
    s.proc.kill();
    await s.proc.exited;
  }
}

test.skipIf(process.platform !== "linux")("serve runs JavaScriptCore's compiler threads at SCHED_IDLE, and the event loop as it was", async () => {
  const { compilers, loop } = await threadsOf("idle", {});
  expect(compilers.length).toBeGreaterThan(0);
  expect(compilers.every((p) => p === SCHED_IDLE)).toBe(true);
  expect(loop).toEqual([0]);
});

test.skipIf(process.platform !== "linux")("SERVICE_JIT_PRIORITY=normal leaves them at the normal policy", async () => {
  const { compilers } = await threadsOf("normal", { SERVICE_JIT_PRIORITY: "normal" });
  expect(compilers.length).toBeGreaterThan(0);
  expect(compilers.every((p) => p === 0)).toBe(true);
});
