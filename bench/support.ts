// What the benchmarks share: a scratch directory and the processes started in it, the scripted
// LLM, a turn, reading a child's stdout for a line, a process's memory and CPU time, and percentiles.
import { spawn, type Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The instance token of every benchmarked `serve`. */
export const TOKEN = "bench-token-0123456789abcdef0123456789abcdef";

/** A temporary directory, and the processes started for the bench: all stopped, and the directory removed, when the bench exits. */
export function scratch(prefix: string): { tmp: string; children: Subprocess[] } {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const children: Subprocess[] = [];
  process.on("exit", () => {
    for (const c of children) c.kill();
    rmSync(tmp, { recursive: true, force: true });
  });
  return { tmp, children };
}

/** Resolves once `base` answers `/health`. */
export async function healthy(base: string): Promise<void> {
  while (!(await fetch(`${base}/health`).then((r) => r.ok, () => false))) await Bun.sleep(5);
}

const TURN = { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ model: "bench", input: "Say hello." }) };

/** One non-streaming turn of `base` ("Say hello."), read to its end; throws unless it was answered 200. */
export async function sayHello(base: string): Promise<void> {
  const res = await fetch(`${base}/api/v1/responses`, TURN);
  await res.text();
  if (res.status !== 200) throw new Error(`turn failed: ${res.status}`);
}

/** Resolves with the first match of `pattern` on the child's stdout, then keeps draining it. */
export async function firstMatch(proc: Subprocess<"ignore", "pipe", "inherit">, pattern: RegExp): Promise<RegExpMatchArray> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process ended before printing ${pattern}: ${buf}`);
    buf += decoder.decode(value);
    const m = buf.match(pattern);
    if (m) {
      // keep draining so the process never blocks on a full pipe
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return m;
    }
  }
}

/** The scripted LLM (tests/support/scripted-llm.ts) as a process of its own, answering every request with `answer`; resolves with its URL once it listens. */
export async function scriptedLlmProcess(answer = "Hello from the scripted model.", ...flags: string[]): Promise<{ proc: Subprocess<"ignore", "pipe", "inherit">; url: string }> {
  const proc = spawn(["bun", join(import.meta.dir, "../tests/support/scripted-llm.ts"), "--port", "0", "--no-record", "--answer", answer, ...flags], { stdout: "pipe", stderr: "inherit" });
  return { proc, url: (await firstMatch(proc, /listening on (\S+)/))[1]! };
}

/** A process's resident memory now, in MB to one decimal. */
export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

/** CPU time (user + system) a process has used, in ms (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A port free on this machine now (taken and let go). */
export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** The p-th percentile (nearest rank) of the samples. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** The environment of a benchmarked `serve`: a fresh home under `tmp`, the scripted LLM, no TUI. */
export function serveEnv(tmp: string, token: string, llmUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: tmp,
    SERVICE_HOME: `${tmp}/home`,
    SERVICE_REBORN_WEBUI_TOKEN: token,
    LLM_BASE_URL: llmUrl,
    LLM_API_KEY: "bench",
    LLM_MODEL: "scripted-model",
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: "0",
    CLI_ENABLED: "false",
    ...extra,
  };
}

/** `n` rounds of the LLM called alone, then the call measured, each timed: both see the same machine. */
export async function interleaved(n: number, llmCall: () => Promise<unknown>, call: () => Promise<unknown>): Promise<{ lat: number[]; llm: number[] }> {
  const lat: number[] = [];
  const llm: number[] = [];
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    await llmCall();
    llm.push(performance.now() - t);
    t = performance.now();
    await call();
    lat.push(performance.now() - t);
  }
  return { lat, llm };
}
