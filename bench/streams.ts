// `bun run bench` (part): many streamed turns at once. The compiled binary and the scripted
// LLM run as their own processes on loopback; the LLM streams 20 tokens a second (a chunk
// every 50 ms), 200 tokens an answer. First the LLM alone: N streamed completions posted at
// once, timed to their first content chunk. Then the service: N streamed turns posted at
// once, timed to their first `response.output_text.delta`, while its RSS is sampled every
// 10 ms. The longest event-loop pause comes from `/api/status` (the service's timer-drift
// sampler, src/observability/loop-pauses.ts, over its last 5 s): read once all first deltas
// are in (the burst of N posts) and 5.2 s later (the N streams running, the burst out of the
// window). The service's CPU time is read from /proc.
// Beside the burst, in the same run, the floor (bench/floor.ts, a bare proxy that relays the
// model's stream and does nothing else) under the same N posted at once: what any server in
// front of the LLM takes of the target on this machine.
// Then the same N arriving evenly over a second (`BENCH_STREAMS_RAMP_MS`), as turns come
// when a thousand streams are open because users keep starting them: the LLM alone first
// (its streams kept to the end, as the service's are), then the service. Last, the N posted
// at once again, to a service whose code is compiled by then.
import { spawn } from "bun";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { cpuMs, firstMatch, freePort, healthy, pct, rssMb, scratch, scriptedLlmProcess, serveEnv, TOKEN } from "./support";

// this process opens N streams at once: Bun's fetch allows 256 unless told at start
if (process.env.BUN_CONFIG_MAX_HTTP_REQUESTS === undefined) {
  process.execve?.(process.execPath, [process.execPath, ...process.argv.slice(1)], { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "65535" });
}

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const N = Number(process.env.BENCH_STREAMS ?? 1000);
const RAMP_MS = Number(process.env.BENCH_STREAMS_RAMP_MS ?? 1000);
const TOKENS = 200; // words in the answer: ten seconds of streaming at 20 tokens a second
const answer = Array.from({ length: TOKENS }, (_, i) => `word${i}`).join(" ");

const { tmp, children } = scratch("service-bench-streams-");

/** The most a 10 ms timer of this process fired late over `forMs`: what other processes and the machine cost any process here. */
async function timerLateness(forMs: number): Promise<number> {
  const end = performance.now() + forMs;
  let worst = 0;
  while (performance.now() < end) {
    const due = performance.now() + 10;
    await Bun.sleep(10);
    worst = Math.max(worst, performance.now() - due);
  }
  return worst;
}


/**
 * Posts N requests, at once or evenly over `overMs`; resolves once each has shown `marker` in
 * its body, with each one's time to it (ms, from its own post) and the promise of the bodies'
 * ends (`keep`: read them to the end, else cancel them there).
 */
async function burst(n: number, url: string, init: () => RequestInit, marker: string, keep: boolean, overMs = 0): Promise<{ first: number[]; ended: Promise<unknown> }> {
  const ends: Promise<unknown>[] = [];
  const one = async () => {
    const t = performance.now();
    const res = await fetch(url, init());
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`no ${marker} in the stream: ${seen.slice(0, 300)}`);
      seen += decoder.decode(value, { stream: true });
      if (seen.includes(marker)) break;
    }
    const at = performance.now() - t;
    ends.push(keep ? (async () => { while (!(await reader.read()).done); })() : reader.cancel());
    return at;
  };
  const t0 = performance.now();
  const when = (i: number) => Bun.sleep(Math.max(0, t0 + (i * overMs) / n - performance.now()));
  const first = await Promise.all(Array.from({ length: n }, (_, i) => (overMs ? when(i).then(one) : one())));
  return { first, ended: Promise.all(ends) };
}

async function main() {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);
  const { proc: llmProc, url: llmUrl } = await scriptedLlmProcess(answer, "--chunk-delay", "50");
  children.push(llmProc);

  const svc = spawn([BIN, "serve"], { env: serveEnv(tmp, TOKEN, llmUrl, { RESPONSES_RATE_LIMIT: "0" }), stdout: "pipe", stderr: "inherit" });
  children.push(svc);
  const base = (await firstMatch(svc, /listening on (http:\/\/\S+)/))[1]!;
  const floorPort = await freePort();
  const floor = spawn(["bun", join(root, "bench/floor.ts")], { env: { ...serveEnv(tmp, TOKEN, llmUrl), SERVICE_HOME: join(tmp, "floor"), GATEWAY_PORT: String(floorPort) }, stdout: "ignore", stderr: "inherit" });
  children.push(floor);
  const floorBase = `http://127.0.0.1:${floorPort}`;
  await healthy(floorBase);
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const turn = () => ({ method: "POST", headers, body: JSON.stringify({ model: "bench", input: "Say hello.", stream: true }) });
  const completion = () => ({
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body: JSON.stringify({ model: "scripted-model", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Say hello." }] }),
  });

  // warm both up, then the LLM alone under the same burst
  for (const at of [base, floorBase, floorBase]) await (await burst(20, `${at}/api/v1/responses`, turn, "response.output_text.delta", true)).ended;
  const { first: llmFirst } = await burst(N, `${llmUrl}/chat/completions`, completion, '"content":"word0', false);
  await Bun.sleep(1_000);
  const floorCpuBefore = cpuMs(floor.pid);
  // the floor relays each of the model's chunks as a delta, the first (its role, no text) too: timed to the first text
  const floorBurst = await burst(N, `${floorBase}/api/v1/responses`, turn, "word0", true);
  const floorStartCpu = cpuMs(floor.pid) - floorCpuBefore;
  await floorBurst.ended;
  floor.kill("SIGTERM");
  const settled = performance.now();
  // the service's pause figure covers 5 s: let the warm-up's quiet-time collection fall out of
  // it. Meanwhile, the machine's own noise: how late a 10 ms timer of this process fires (the
  // idle service's sampler looks only once a second: src/observability/loop-pauses.ts).
  await Bun.sleep(Math.max(0, 2_000 - (performance.now() - settled)));
  const machineLate = await timerLateness(5_000);

  type Pauses = { max_pause_ms_5s: number; max_held_ms_5s: number };
  const status = async () => ((await (await fetch(`${base}/api/status`, { headers })).json()) as { event_loop: Pauses }).event_loop;
  const rssBefore = rssMb(svc.pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => void (rssPeak = Math.max(rssPeak, rssMb(svc.pid))), 10);
  const cpuBefore = cpuMs(svc.pid);
  const t0 = performance.now();
  const { first: svcFirst, ended } = await burst(N, `${base}/api/v1/responses`, turn, "response.output_text.delta", true);
  const startCpu = cpuMs(svc.pid) - cpuBefore;
  const burstPause = await status();
  await Bun.sleep(5_200);
  const streamingPause = await status();
  await ended;
  const wall = performance.now() - t0;
  const cpu = cpuMs(svc.pid) - cpuBefore;
  clearInterval(sampler);
  // the first quiet second collects fully: the pause it costs, with nothing in flight (the streams out of the window)
  await Bun.sleep(5_500);
  const quietPause = await status();
  const rssRest = rssMb(svc.pid);

  // the same N arriving evenly over RAMP_MS, the LLM alone and then the service
  const llmRamp = await burst(N, `${llmUrl}/chat/completions`, completion, '"content":"word0', true, RAMP_MS);
  await llmRamp.ended;
  let rampPeak = rssMb(svc.pid);
  const rampSampler = setInterval(() => void (rampPeak = Math.max(rampPeak, rssMb(svc.pid))), 10);
  const svcRamp = await burst(N, `${base}/api/v1/responses`, turn, "response.output_text.delta", true, RAMP_MS);
  const rampPause = await status();
  await svcRamp.ended;
  clearInterval(rampSampler);

  // the same N posted at once again, a few seconds after the arrivals' streams ended: the
  // service has run 2N turns by then, so its code is compiled (the first burst's ran after a
  // warm-up of 20 turns, as after a start)
  await Bun.sleep(3_000);
  const againCpuBefore = cpuMs(svc.pid);
  const again = await burst(N, `${base}/api/v1/responses`, turn, "response.output_text.delta", true);
  const againStartCpu = cpuMs(svc.pid) - againCpuBefore;
  await again.ended;

  const ms = (x: number) => `${Math.round(x)} ms`;
  const pause = (p: Pauses) => `${ms(p.max_held_ms_5s)} (${ms(p.max_pause_ms_5s)})`;
  const mb = (x: number) => `${Math.round(x)} MB`;
  console.log(`
${N} streamed turns at once, the scripted LLM streaming ${TOKENS} tokens at 20 a second (all ${N} done in ${(wall / 1000).toFixed(1)} s):

Event-loop pauses: the part the service's own thread spent working, then in brackets the
timer's whole lateness (which includes waiting for a CPU that other processes held).

| figure | service | the scripted LLM's own, same run | a bare proxy (bench/floor.ts), same run | target |
|---|---|---|---|---|
| first text delta, p50 | ${ms(pct(svcFirst, 50))} | ${ms(pct(llmFirst, 50))} | ${ms(pct(floorBurst.first, 50))} | |
| first text delta, p99 | ${ms(pct(svcFirst, 99))} | ${ms(pct(llmFirst, 99))} | ${ms(pct(floorBurst.first, 99))} | ≤ 250 ms |
| CPU time per turn until the last first delta | ${(startCpu / N).toFixed(2)} ms | | ${(floorStartCpu / N).toFixed(2)} ms | |
| longest event-loop pause, ${N} streams running (5 s after the burst) | ${pause(streamingPause)} | | | ≤ 20 ms |
| longest event-loop pause, the burst of ${N} posts included | ${pause(burstPause)} | | | |
| the machine's own noise: this process's 10 ms timer, latest in the 5 s before | ${ms(machineLate)} | | | |
| RSS at the peak (before the burst) | ${mb(rssPeak)} (${mb(rssBefore)}) | | | < 300 MB |
| service CPU time per turn (${TOKENS} deltas) | ${(cpu / N).toFixed(2)} ms | | | |
| after them: longest pause of the quiet seconds (one full collection); RSS at rest | ${pause(quietPause)}; ${mb(rssRest)} | | | |

The same ${N} streamed turns arriving evenly over ${RAMP_MS} ms, each kept to its end (all ${N} open at once):

| figure | service | the scripted LLM's own, same run | target |
|---|---|---|---|
| first text delta, p50 | ${ms(pct(svcRamp.first, 50))} | ${ms(pct(llmRamp.first, 50))} | |
| first text delta, p99 | ${ms(pct(svcRamp.first, 99))} | ${ms(pct(llmRamp.first, 99))} | ≤ 250 ms |
| longest event-loop pause, the arrivals included | ${pause(rampPause)} | | ≤ 20 ms |
| RSS at the peak | ${mb(rampPeak)} | | < 300 MB |

The same ${N} posted at once again, 3 s after the arrivals' streams ended (the service's code compiled by then):

| figure | service | the scripted LLM's own (the first burst) | target |
|---|---|---|---|
| first text delta, p50 | ${ms(pct(again.first, 50))} | ${ms(pct(llmFirst, 50))} | |
| first text delta, p99 | ${ms(pct(again.first, 99))} | ${ms(pct(llmFirst, 99))} | ≤ 250 ms |
| CPU time per turn until the last first delta | ${(againStartCpu / N).toFixed(2)} ms | | |`);

  svc.kill("SIGTERM");
  await svc.exited;
  llmProc.kill("SIGTERM");
}

await main();
