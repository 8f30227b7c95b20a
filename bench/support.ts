// What the benchmarks share: reading a child's stdout for a line, and percentiles.
import { spawn, type Subprocess } from "bun";
import { join } from "node:path";

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
