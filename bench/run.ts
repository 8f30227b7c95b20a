// `bun run bench`: measures the compiled binary against the scripted LLM, both as their own
// processes on loopback. Figures: service overhead per non-streaming turn (the LLM's own
// latency, measured in the same run, subtracted), turns/s with 8 concurrent clients, time
// from process start to the first 200, RSS idle and after 10,000 turns, and what the idle
// service costs (CPU, and how often its event loop wakes). Beside the
// service's latency and throughput, the same run measures the floor (bench/floor.ts: the
// service's own model request and commit, nothing else) right after it: what this
// machine and its disk leave of each target. BENCH_FLOOR=0 leaves it out.
import { spawn } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cpuMs, freePort, healthy, interleaved, pct, rssMb, scratch, scriptedLlmProcess, TOKEN } from "./support";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const CONCURRENCY = 8;
const TOTAL_TURNS = Number(process.env.BENCH_TURNS ?? 10_000);
const STARTUP_RUNS = 5;
const STREAMED = Number(process.env.BENCH_STREAMED ?? 500);
const FLOOR = process.env.BENCH_FLOOR !== "0" && !BIN.endsWith("floor.ts");
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);

const { tmp, children } = scratch("service-bench-");


const ms = (x: number) => Math.round(x * 1000) / 1000;

/** How often a process's main thread (the event loop) has gone to sleep and been woken since it started. */
const wakeups = (pid: number) => Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);

function startService(port: number, llmUrl: string, home: string, bin = BIN) {
  const proc = spawn(bin.endsWith(".ts") ? ["bun", bin, "serve"] : [bin, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: tmp,
      SERVICE_HOME: home,
      SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
      LLM_BASE_URL: llmUrl,
      LLM_API_KEY: "bench",
      LLM_MODEL: "scripted-model",
      GATEWAY_PORT: String(port),
      RESPONSES_RATE_LIMIT: "0",
      CLI_ENABLED: "false",
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  children.push(proc);
  return proc;
}

async function main() {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);

  const { proc: llmProc, url: llmUrl } = await scriptedLlmProcess();
  children.push(llmProc);

  // 1. Time from process start to the first 200, on a fresh home each time.
  const startups: number[] = [];
  for (let i = 0; i < STARTUP_RUNS; i++) {
    const port = await freePort();
    const t0 = performance.now();
    const proc = startService(port, llmUrl, join(tmp, `startup-${i}`));
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      await Bun.sleep(1);
    }
    startups.push(performance.now() - t0);
    proc.kill("SIGTERM");
    await proc.exited;
  }

  // 2. The service under test, then the floor beside it.
  const port = await freePort();
  const svc = startService(port, llmUrl, join(tmp, "home"));
  const base = `http://127.0.0.1:${port}`;
  await healthy(base);
  await Bun.sleep(500);
  const rssStarted = rssMb(svc.pid);
  // idle: after the memory steward's first quiet second
  await Bun.sleep(1_500);
  const rssIdle = rssMb(svc.pid);
  const floorPort = FLOOR ? await freePort() : undefined;
  const floorProc = floorPort ? startService(floorPort, llmUrl, join(tmp, "floor"), join(root, "bench/floor.ts")) : undefined;
  const floorBase = floorPort ? `http://127.0.0.1:${floorPort}` : undefined;
  if (floorBase) await healthy(floorBase);

  const turnBody = JSON.stringify({ model: "bench", input: "Say hello." });
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const turn = async (at = base) => {
    const res = await fetch(`${at}/api/v1/responses`, { method: "POST", headers, body: turnBody });
    const body = (await res.json()) as { status: string };
    if (res.status !== 200 || body.status !== "completed") throw new Error(`turn failed: ${res.status} ${JSON.stringify(body)}`);
  };
  // What the service itself sends the LLM for such a turn: a streamed chat completion.
  const llmBody = JSON.stringify({
    model: "scripted-model",
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "Say hello." },
    ],
  });
  const llmCall = async () => {
    const res = await fetch(`${llmUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer bench" }, body: llmBody });
    await res.text();
  };

  for (let i = 0; i < 300; i++) await turn();
  if (floorBase) for (let i = 0; i < 300; i++) await turn(floorBase);
  for (let i = 0; i < 300; i++) await llmCall();

  // 3. Overhead per non-streaming turn: interleaved with the LLM's own so both see the same machine state.
  const sequential = (at: string) => interleaved(SEQUENTIAL, llmCall, () => turn(at));
  const { lat: svcLat, llm: llmLat } = await sequential(base);

  // 4. Time to the first streamed text delta, beside the LLM's own time to its first chunk.
  const firstDelta = async (url: string, init: RequestInit, marker: string) => {
    const t = performance.now();
    const res = await fetch(url, init);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    let at = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
      if (!at && seen.includes(marker)) at = performance.now() - t;
    }
    if (!at) throw new Error(`no ${marker} in the stream`);
    return at;
  };
  const streamBody = JSON.stringify({ model: "bench", input: "Say hello.", stream: true });
  const streamed = async (at: string) => {
    const first: number[] = [];
    const llm: number[] = [];
    for (let i = 0; i < STREAMED; i++) {
      llm.push(await firstDelta(`${llmUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer bench" }, body: llmBody }, '"content":"Hello'));
      first.push(await firstDelta(`${at}/api/v1/responses`, { method: "POST", headers, body: streamBody }, "response.output_text.delta"));
    }
    return { first, llm };
  };
  const { first: svcFirst, llm: llmFirst } = await streamed(base);

  // 5. Throughput with 8 concurrent clients, up to 10,000 turns in all.
  const concurrent = async (at: string) => {
    let done = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (done < TOTAL_TURNS) {
          done++;
          await turn(at);
        }
      }),
    );
    return { done, seconds: (performance.now() - t0) / 1000 };
  };
  const cpu0 = { svc: cpuMs(svc.pid), llm: cpuMs(llmProc.pid) };
  const { done, seconds } = await concurrent(base);
  const cpuPerTurn = { svc: (cpuMs(svc.pid) - cpu0.svc) / done, llm: (cpuMs(llmProc.pid) - cpu0.llm) / done };
  const totalTurns = 300 + SEQUENTIAL + done;
  // read at rest: after the service's once-a-second memory housekeeping has run
  await Bun.sleep(2_000);
  const rssAfter = rssMb(svc.pid);
  // idle: nothing asked of it for IDLE_S seconds
  const idle0 = { cpu: cpuMs(svc.pid), wakeups: wakeups(svc.pid) };
  await Bun.sleep(IDLE_S * 1000);
  const idle = { cpu_ms_per_s: ms((cpuMs(svc.pid) - idle0.cpu) / IDLE_S), wakeups_per_s: ms((wakeups(svc.pid) - idle0.wakeups) / IDLE_S) };

  // 6. The floor, phase by phase as the service, right after it (turn by turn beside the
  // service's, the three processes taking turns made both slower than either alone).
  const floor = floorBase ? await floorFigures(floorBase) : undefined;
  async function floorFigures(at: string) {
    const seq = await sequential(at);
    const str = await streamed(at);
    const run = await concurrent(at);
    return {
      overhead_ms: { p50: ms(pct(seq.lat, 50) - pct(seq.llm, 50)), p99: ms(pct(seq.lat, 99) - pct(seq.llm, 99)) },
      first_delta_over_llm_p50: ms(pct(str.first, 50) - pct(str.llm, 50)),
      turns_per_s_c8: Math.round(run.done / run.seconds),
    };
  }
  const result = {
    startup_ms_p50: ms(pct(startups, 50)),
    startup_ms_all: startups.map(ms),
    llm_direct_ms: { p50: ms(pct(llmLat, 50)), p99: ms(pct(llmLat, 99)) },
    turn_ms: { p50: ms(pct(svcLat, 50)), p99: ms(pct(svcLat, 99)) },
    overhead_ms: { p50: ms(pct(svcLat, 50) - pct(llmLat, 50)), p99: ms(pct(svcLat, 99) - pct(llmLat, 99)) },
    first_delta_ms: { service_p50: ms(pct(svcFirst, 50)), llm_p50: ms(pct(llmFirst, 50)), over_llm_p50: ms(pct(svcFirst, 50) - pct(llmFirst, 50)) },
    turns_per_s_c8: Math.round(done / seconds),
    cpu_ms_per_turn_c8: { service: ms(cpuPerTurn.svc), llm: ms(cpuPerTurn.llm) },
    rss_mb: { started: rssStarted, idle: rssIdle, after_turns: rssAfter, turns: totalTurns },
    idle,
    floor,
  };
  const f = (x: number | undefined, unit = "") => (x === undefined ? "" : `${x}${unit}`);
  console.log(JSON.stringify(result, null, 2));
  console.log(`
| figure | value | the floor, same run | target |
|---|---|---|---|
| LLM's own latency per completion, p50 / p99 (same run) | ${result.llm_direct_ms.p50} / ${result.llm_direct_ms.p99} ms | | |
| overhead per non-streaming turn, p50 | ${result.overhead_ms.p50} ms | ${f(floor?.overhead_ms.p50, " ms")} | ≤ 0.5 ms |
| overhead per non-streaming turn, p99 | ${result.overhead_ms.p99} ms | ${f(floor?.overhead_ms.p99, " ms")} | ≤ 2 ms |
| first text delta, p50: service / LLM's own first chunk | ${result.first_delta_ms.service_p50} / ${result.first_delta_ms.llm_p50} ms | | |
| first text delta over the LLM's, p50 | ${result.first_delta_ms.over_llm_p50} ms | ${f(floor?.first_delta_over_llm_p50, " ms")} | ≤ 0.5 ms |
| turns/s, 8 concurrent clients | ${result.turns_per_s_c8} | ${f(floor?.turns_per_s_c8)} | ≥ 2,000 |
| CPU per turn at 8 clients: service / scripted LLM | ${result.cpu_ms_per_turn_c8.service} / ${result.cpu_ms_per_turn_c8.llm} ms | | |
| the service's CPU per turn over the LLM's (the LLM's work is the same in every run) | ${(result.cpu_ms_per_turn_c8.service / result.cpu_ms_per_turn_c8.llm).toFixed(2)} | | |
| process start → first 200 (p50 of ${STARTUP_RUNS}) | ${result.startup_ms_p50} ms | | ≤ 150 ms |
| RSS 0.5 s after start / idle (2 s after) | ${rssStarted} / ${rssIdle} MB | | |
| RSS after ${totalTurns} turns | ${rssAfter} MB | | < 100 MB |
| idle for ${IDLE_S} s after them: CPU / event loop woken | ${idle.cpu_ms_per_s} ms/s / ${idle.wakeups_per_s} times/s | | |
${floor ? "\nThe floor (bench/floor.ts) sends the service's own model request and stores the turn with the service's own commit,\nnothing else: what this machine and its disk leave of each target. It ran right after the service, phase by phase.\n" : ""}`);

  svc.kill("SIGTERM");
  floorProc?.kill("SIGTERM");
  await svc.exited;
  llmProc.kill("SIGTERM");
}

await main();
