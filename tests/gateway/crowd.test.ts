// The bus scales with its audience: 500 open web UIs (50 of them never reading) do not
// stretch concurrent turns nor hold /api/status, because each event is serialised once and
// deltas are gathered over 50 ms. Measured side by side with no audience, in the same run.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "bun";
import { startTestService, TOKEN, type TestService } from "../support/harness";

const TURNS = 20;
/** A 1 s answer in 80 chunks: many deltas, as a model streams them. */
const STEP = { text: "word ".repeat(80), chunks: 80, chunkDelayMs: 12 };

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ turnTimeoutMs: 60_000 });
  t.llm.respondWith(() => STEP);
});
afterAll(() => t.stop());

/** Runs TURNS turns at once; their durations (ms) and the slowest /api/status meanwhile. */
async function load(): Promise<{ p50: number; max: number; status: number }> {
  let running = true;
  let status = 0;
  const poll = (async () => {
    while (running) {
      const t0 = performance.now();
      await (await t.api("/api/status")).json();
      status = Math.max(status, performance.now() - t0);
      await Bun.sleep(20);
    }
  })();
  const times = await Promise.all(
    Array.from({ length: TURNS }, async (_, i) => {
      const t0 = performance.now();
      const r = await t.api("/api/chat", { method: "POST", json: { message: `turn ${i}` } });
      expect(((await r.json()) as any).status).toBe("completed");
      return performance.now() - t0;
    }),
  );
  running = false;
  await poll;
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, max: times.at(-1)!, status };
}

test("500 open event streams, 50 of them stalled: turns and /api/status as fast as with none", async () => {
  let cpu = process.cpuUsage();
  const alone = await load();
  const aloneCpu = process.cpuUsage(cpu);
  const crowd = spawn(["bun", `${import.meta.dir}/../support/sse-crowd.ts`, t.url, TOKEN, "500", "50"], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    // Bun's fetch holds at most 256 requests open at once by default
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "1024" },
  });
  const lines = crowd.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const line = async () => {
    while (!out.includes("\n")) out += (await lines.read()).value ?? "";
    const [first, ...rest] = out.split("\n");
    out = rest.join("\n");
    return first!;
  };
  try {
    expect(await line()).toBe("ready");
    cpu = process.cpuUsage();
    const watched = await load();
    const watchedCpu = process.cpuUsage(cpu);
    crowd.stdin.write("\n");
    crowd.stdin.flush();
    const received = Number(await line());
    const ms = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
    console.log(
      `turns p50 ${alone.p50.toFixed(0)} → ${watched.p50.toFixed(0)} ms, max ${alone.max.toFixed(0)} → ${watched.max.toFixed(0)} ms; /api/status at most ${alone.status.toFixed(0)} → ${watched.status.toFixed(0)} ms; the service's CPU ${ms(aloneCpu).toFixed(0)} → ${ms(watchedCpu).toFixed(0)} ms; ${received} bytes to 450 readers`,
    );
    // the readers did see the turns: at least the 20 answers' text each
    expect(received).toBeGreaterThan(450 * TURNS * STEP.text.length);
    // serialised for each reader, the deltas alone would take seconds of CPU (5.6 µs × 500 × 1,600)
    expect(ms(watchedCpu)).toBeLessThan(ms(aloneCpu) * 3 + 300);
    // the crowd's own process shares the machine's cores: some slowing is its reading, not the service's
    expect(watched.p50).toBeLessThan(alone.p50 * 2 + 500);
    expect(watched.status).toBeLessThan(1_000);
  } finally {
    crowd.kill();
    await crowd.exited;
  }
}, 120_000);
