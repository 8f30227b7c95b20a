#!/usr/bin/env bun
// `bun run bench:tail`: what the slowest sequential turns of the binary have in common. The p99
// of a turn is set by the few turns that took several times the others; this runs
// BENCH_TAIL_TURNS of them (after BENCH_TAIL_WARMUP) and tells, for each one over
// BENCH_TAIL_OVER ms, what happened in it: SQLite's checkpoint (its copy of the log grew, read
// from the -shm file), one of JavaScriptCore's collections or optimising compiles (the
// engine's own reports on the service's stderr, `BUN_JSC_logGC` and
// `BUN_JSC_reportDFGCompileTimes`), or none of these (docs/performance.md, "the slowest turns,
// told apart"). The reports cost the service little, but the latencies here are not the
// bench's figures: `bun run bench` measures those without them.
import { spawn } from "bun";
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort, healthy, pct, sayHello, scratch, scriptedLlmProcess, serveEnv, TOKEN } from "./support";
import { backfilled, causes, EngineLog } from "./tail-causes";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const TURNS = Number(process.env.BENCH_TAIL_TURNS ?? 4000);
const WARMUP = Number(process.env.BENCH_TAIL_WARMUP ?? 500);
const OVER_MS = Number(process.env.BENCH_TAIL_OVER ?? 2);

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);
const { tmp, children } = scratch("service-tail-");

const { proc: llm, url: llmUrl } = await scriptedLlmProcess();
children.push(llm);

const port = await freePort();
const env = serveEnv(tmp, TOKEN, llmUrl, { RESPONSES_RATE_LIMIT: "0", GATEWAY_PORT: String(port), BUN_JSC_logGC: "1", BUN_JSC_reportDFGCompileTimes: "1", ...(process.env.SERVICE_JIT_PRIORITY ? { SERVICE_JIT_PRIORITY: process.env.SERVICE_JIT_PRIORITY } : {}) });
const svc = spawn([BIN, "serve"], { env, stdout: "ignore", stderr: "pipe" });
children.push(svc);
const engine = new EngineLog();
void (async () => {
  const decoder = new TextDecoder();
  for await (const bytes of svc.stderr) engine.feed(decoder.decode(bytes, { stream: true }), performance.now());
})();

const base = `http://127.0.0.1:${port}`;
await healthy(base);
const turn = () => sayHello(base);

// at least one: the -shm file is there once the database has been written to
for (let i = 0; i < Math.max(WARMUP, 1); i++) await turn();
// its header, read after each turn
const shm = openSync(join(tmp, "home", "service.db-shm"), "r");
const header = new Uint8Array(104);
const copied = () => (readSync(shm, header, 0, header.byteLength, 0), backfilled(header));
const from = engine.events.length;
const turns: { start: number; ms: number; checkpoint: boolean }[] = [];
let before = copied();
for (let i = 0; i < TURNS; i++) {
  const start = performance.now();
  await turn();
  const ms = performance.now() - start;
  const now = copied();
  turns.push({ start, ms, checkpoint: now > before });
  before = now;
}
closeSync(shm);
await Bun.sleep(100); // the last reports
const events = engine.events.slice(from);

const all = turns.map((t) => t.ms);
const slow = all.filter((ms) => ms > OVER_MS).length;
const share = (n: number) => `${((100 * n) / TURNS).toFixed(2)} %`;
const fmt = (ms: number) => ms.toFixed(1);
console.log(`\n${TURNS} sequential turns after ${WARMUP}, the LLM's time included: p50 ${fmt(pct(all, 50))} ms, p99 ${fmt(pct(all, 99))} ms; ${slow} over ${OVER_MS} ms (${share(slow)})\n`);
console.log(`| what happened in a turn over ${OVER_MS} ms | turns | of all turns | their median |\n|---|---|---|---|`);
for (const [cause, ms] of causes(turns, events, OVER_MS)) console.log(`| ${cause} | ${ms.length} | ${share(ms.length)} | ${ms.length ? `${fmt(pct(ms, 50))} ms` : ""} |`);
const count = (kind: string, a = 0, b = Infinity) => events.filter((e) => e.kind === kind && e.at >= a && e.at < b).length;
const half = turns[Math.floor(TURNS / 2)]!.start;
const checkpoints = turns.flatMap((t, i) => (t.checkpoint ? [i] : []));
const every = checkpoints.length > 1 ? Math.round((checkpoints.at(-1)! - checkpoints[0]!) / (checkpoints.length - 1)) : undefined;
console.log(`
In all: ${count("eden")} young and ${count("full")} full collections; ${count("compile")} optimising compiles, ${count("compile", 0, half)} of them in the first half;
${checkpoints.length} checkpoints${every ? `, one every ${every} turns` : ""}.`);
process.exit(0);
