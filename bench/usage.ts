// `bun run bench` (part): what metrics and cost accounting add to a turn, and how fast
// /metrics answers with 10,000 turns recorded. Two services run in this process side by side:
// one with METRICS_ENABLED and priced models, one with both off and no usage kept; their
// agents run turns against the same in-process model (no network between), interleaved in
// rounds so both see the same machine. Reported per round, as a range: the machine is shared.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servicePaths, writeConfigFile } from "../src/config/load";
import { createLogger } from "../src/log";
import type { Llm, LlmEvent } from "../src/llm/types";
import { startService, type RunningService } from "../src/server";
import { jobs } from "../src/store/schema";
import { pct } from "./support";
import { said } from "../src/agent/turn-types";

const ROUNDS = Number(process.env.BENCH_USAGE_ROUNDS ?? 25);
const PER_ROUND = Number(process.env.BENCH_USAGE_TURNS ?? 200);
const METRICS_TURNS = 10_000;
const TOKEN = "bench-usage-token-0123456789abcdef";
const tmp = mkdtempSync(join(tmpdir(), "service-bench-usage-"));

/** A model that answers at once: the answer in 12 pieces, then its usage (cached and reasoning tokens too). */
const instant: Llm = {
  model: "bench-model",
  configured: true,
  embeddingModel: undefined,
  async *stream(): AsyncIterable<LlmEvent> {
    for (const piece of "Hello from the in-process model, answering at once so that only the service is measured.".split(/(?<= )/).slice(0, 12)) {
      yield { type: "text", delta: piece };
    }
    yield { type: "usage", inputTokens: 120, outputTokens: 12, cachedTokens: 64, reasoningTokens: 4, model: "bench-model" };
  },
  proxyChatCompletions: () => Promise.reject(new Error("not in the bench")),
  listModels: async () => ["bench-model"],
  embed: () => Promise.reject(new Error("not in the bench")),
};

async function start(name: string, on: boolean): Promise<RunningService> {
  const env = {
    SERVICE_HOME: join(tmp, name),
    SERVICE_REBORN_WEBUI_TOKEN: TOKEN,
    LLM_BASE_URL: "http://127.0.0.1:9/v1",
    LLM_API_KEY: "bench",
    LLM_MODEL: "bench-model",
    LLM_CONTEXT_WINDOW: "32768",
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: "0",
    RESPONSES_RATE_LIMIT: "0",
    ...(on ? { METRICS_ENABLED: "true" } : {}),
  };
  if (on) writeConfigFile(servicePaths(env), { llm: { prices: { "bench-model": { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3 } } } });
  const s = await startService({ paths: servicePaths(env), env, log: createLogger({ format: "json", level: "error", write: () => {} }) });
  const { deps } = s.services.agent;
  deps.llm = instant;
  if (!on) deps.usage = undefined;
  return s;
}

const turn = (s: RunningService) =>
  s.services.agent.run({ channel: "responses", userId: "owner", input: said({ role: "user", content: "Say hello." }), model: "bench" });

/** ms per turn over `n` turns in a row: wall time, and this process's CPU time (less moved by other load on the machine). */
async function timed(s: RunningService, n: number): Promise<{ wall: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const r = await turn(s);
    if (r.status !== "completed") throw new Error(`turn failed: ${JSON.stringify(r.error)}`);
  }
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / n, cpu: (c.user + c.system) / 1000 / n };
}

const ms = (x: number) => Math.round(x * 10_000) / 10_000;

async function main() {
  const off = await start("off", false);
  const on = await start("on", true);
  try {
    for (const s of [off, on]) await timed(s, 300); // warm up
    await on.services.agent.deps.usage?.ledger.flush();
    // turn by turn in pairs, the order alternating: the median of the pairs' differences is
    // what the features add, little moved by the load of other processes on the machine
    const offMs: number[] = [];
    const onMs: number[] = [];
    const diffs: number[] = [];
    const cpuDiffs: number[] = [];
    const blocks: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const block: number[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const first = (r * PER_ROUND + i) % 2 ? on : off;
        const a = await timed(first, 1);
        const b = await timed(first === on ? off : on, 1);
        const [x, y] = first === on ? [a, b] : [b, a];
        onMs.push(x.wall);
        offMs.push(y.wall);
        diffs.push(x.wall - y.wall);
        cpuDiffs.push(x.cpu - y.cpu);
        block.push(x.wall - y.wall);
      }
      blocks.push(pct(block, 50));
    }
    // /metrics with 10,000 turns counted and 10,000 jobs in the table
    const counted = 300 + ROUNDS * PER_ROUND;
    for (let i = counted; i < METRICS_TURNS; i += 500) await timed(on, Math.min(500, METRICS_TURNS - i));
    const { db } = on.services;
    for (let i = 0; i < METRICS_TURNS; i += 1000) {
      await db.insert(jobs).values(
        Array.from({ length: 1000 }, (_, k) => ({
          id: `bench-job-${i + k}`,
          userId: "owner",
          source: "webhook",
          sender: "bench",
          conversationId: "c",
          message: "m",
          status: (["completed", "failed", "queued"] as const)[k % 3]!,
          createdAt: new Date().toISOString(),
        })),
      );
    }
    const scrape: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const res = await fetch(`${on.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const text = await res.text();
      if (res.status !== 200 || !text.includes("service_turns_total")) throw new Error(`/metrics: ${res.status}`);
      if (i >= 10) scrape.push(performance.now() - t0);
    }
    const turns = Number(/service_turns_total\{channel="responses",status="completed"\} (\d+)/.exec(await (await fetch(`${on.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text())?.[1]);
    const result = {
      turn_ms_off: { p50: ms(pct(offMs, 50)), p99: ms(pct(offMs, 99)) },
      turn_ms_on: { p50: ms(pct(onMs, 50)), p99: ms(pct(onMs, 99)) },
      added_ms_median_per_block: { min: ms(Math.min(...blocks)), max: ms(Math.max(...blocks)) },
      added_ms_per_turn: { min: ms(Math.min(...diffs)), p25: ms(pct(diffs, 25)), p50: ms(pct(diffs, 50)), p75: ms(pct(diffs, 75)), max: ms(Math.max(...diffs)) },
      added_cpu_ms_per_turn: { min: ms(Math.min(...cpuDiffs)), p25: ms(pct(cpuDiffs, 25)), p50: ms(pct(cpuDiffs, 50)), p75: ms(pct(cpuDiffs, 75)), max: ms(Math.max(...cpuDiffs)) },
      rounds: ROUNDS,
      turns_per_round: PER_ROUND,
      metrics_ms: { p50: ms(pct(scrape, 50)), p99: ms(pct(scrape, 99)), turns_counted: turns, jobs: METRICS_TURNS },
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`
| figure | value | target |
|---|---|---|
| turn, metrics and cost accounting off, p50 (${ROUNDS * PER_ROUND} turns) | ${result.turn_ms_off.p50} ms | |
| turn, on, p50 (${ROUNDS * PER_ROUND} turns, paired turn by turn with the above) | ${result.turn_ms_on.p50} ms | |
| added per turn, wall time: median of the pairs (p25 … p75) | ${result.added_ms_per_turn.p50} ms (${result.added_ms_per_turn.p25} … ${result.added_ms_per_turn.p75}) | ≤ 0.05 ms |
| added per turn, wall time: medians of ${ROUNDS} blocks of ${PER_ROUND} pairs, range | ${result.added_ms_median_per_block.min} … ${result.added_ms_median_per_block.max} ms | |
| added per turn, CPU time: median of the pairs (p25 … p75) | ${result.added_cpu_ms_per_turn.p50} ms (${result.added_cpu_ms_per_turn.p25} … ${result.added_cpu_ms_per_turn.p75}) | ≤ 0.05 ms |
| GET /metrics with ${turns} turns and ${METRICS_TURNS} jobs, p50 / p99 | ${result.metrics_ms.p50} / ${result.metrics_ms.p99} ms | < 10 ms |`);
  } finally {
    await on.stop();
    await off.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
