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
import { spawn, type Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, pct, scriptedLlmProcess, serveEnv } from "./support";
import { backfilled, causes, EngineLog } from "./tail-causes";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const TURNS = Number(process.env.BENCH_TAIL_TURNS ?? 4000);
const WARMUP = Number(process.env.BENCH_TAIL_WARMUP ?? 500);
const OVER_MS = Number(process.env.BENCH_TAIL_OVER ?? 2);
const TOKEN = "bench-token-0123456789abcdef0123456789abcdef";

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);
const tmp = mkdtempSync(join(tmpdir(), "service-tail-"));
const children: Subprocess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill();
  rmSync(tmp, { recursive: true, force: true });
});

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
while (!(await fetch(`${base}/health`).then((r) => r.ok, () => false))) await Bun.sleep(5);
const init = { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ model: "bench", input: "Say hello." }) };
const turn = async () => {
  const res = await fetch(`${base}/api/v1/responses`, init);
  await res.text();
  if (res.status !== 200) throw new Error(`turn failed: ${res.status}`);
};
const shm = join(tmp, "home", "service.db-shm");
const copied = () => (existsSync(shm) ? backfilled(readFileSync(shm).subarray(0, 104)) : 0);

for (let i = 0; i < WARMUP; i++) await turn();
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
