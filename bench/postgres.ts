// `bun run bench` (after run.ts): the compiled binary on PostgreSQL beside the libSQL file.
// Figures, each over BENCH_PG_ROUNDS rounds (shown as a range: the machine is shared):
// overhead per non-streaming turn, p50 (the LLM's own latency in the same round subtracted),
// on libSQL and on PostgreSQL; turns/s with 8 concurrent clients on libSQL, on PostgreSQL
// with one replica, and with two replicas on one database (the clients split between them).
// PostgreSQL is a throwaway cluster from Debian's `postgresql` package (as the tests use).
import { spawn, type Subprocess } from "bun";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { freshPostgres, pgInstalled } from "../tests/support/postgres";
import { firstMatch, interleaved, pct, scratch, scriptedLlmProcess, serveEnv, TOKEN } from "./support";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 3);
const SEQUENTIAL = Number(process.env.BENCH_PG_SEQUENTIAL ?? 500);
const TURNS = Number(process.env.BENCH_PG_TURNS ?? 2000);
const CONCURRENCY = 8;

if (!pgInstalled) {
  console.log("PostgreSQL is not installed (Debian's `postgresql` package): no PostgreSQL figures");
  process.exit(0);
}
if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);

const { tmp, children } = scratch("service-bench-pg-");

const { proc: llmProc, url: llmUrl } = await scriptedLlmProcess();
children.push(llmProc);

let homes = 0;
/** A replica on `databaseUrl` (undefined: a libSQL file in its home); resolves with its URL once it answers. */
async function serve(databaseUrl?: string): Promise<{ url: string; proc: Subprocess }> {
  const env = serveEnv(join(tmp, `h${++homes}`), TOKEN, llmUrl, { RESPONSES_RATE_LIMIT: "0", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const proc = spawn([BIN, "serve"], { env, stdout: "pipe", stderr: "inherit" });
  children.push(proc);
  const url = (await firstMatch(proc, /listening on (http:\/\/\S+)/))[1]!;
  return { url, proc };
}

const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const turnBody = JSON.stringify({ model: "bench", input: "Say hello." });
async function turn(base: string): Promise<void> {
  const res = await fetch(`${base}/api/v1/responses`, { method: "POST", headers, body: turnBody });
  const body = (await res.json()) as { status: string };
  if (res.status !== 200 || body.status !== "completed") throw new Error(`turn failed: ${res.status} ${JSON.stringify(body)}`);
}
const llmBody = JSON.stringify({ model: "scripted-model", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "Say hello." }] });
async function llmCall(): Promise<void> {
  await (await fetch(`${llmUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer bench" }, body: llmBody })).text();
}

/** Overhead per turn, p50: turns and direct LLM calls interleaved, so that both see the same machine. */
async function overhead(base: string): Promise<number> {
  for (let i = 0; i < 100; i++) await turn(base);
  const { lat, llm } = await interleaved(SEQUENTIAL, llmCall, () => turn(base));
  return pct(lat, 50) - pct(llm, 50);
}

/** Turns per second with 8 clients, spread over the replicas. */
async function throughput(bases: string[]): Promise<number> {
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      while (done < TURNS) {
        done++;
        await turn(bases[i % bases.length]!);
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

async function stop(...ps: { proc: Subprocess }[]): Promise<void> {
  for (const p of ps) p.proc.kill("SIGTERM");
  await Promise.all(ps.map((p) => p.proc.exited));
}

const figures = { libsqlOverhead: [] as number[], pgOverhead: [] as number[], libsqlC8: [] as number[], pgC8: [] as number[], pgC8Two: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  const file = await serve();
  figures.libsqlOverhead.push(await overhead(file.url));
  figures.libsqlC8.push(await throughput([file.url]));
  await stop(file);

  const one = await serve(await freshPostgres());
  figures.pgOverhead.push(await overhead(one.url));
  figures.pgC8.push(await throughput([one.url]));
  await stop(one);

  const db = await freshPostgres();
  const [x, y] = await Promise.all([serve(db), serve(db)]);
  for (let i = 0; i < 100; i++) await turn(i % 2 ? x.url : y.url);
  figures.pgC8Two.push(await throughput([x.url, y.url]));
  await stop(x, y);
}

const range = (xs: number[], digits: number) => {
  const f = (n: number) => n.toFixed(digits);
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo.toFixed(digits) === hi.toFixed(digits) ? f(lo) : `${f(lo)}–${f(hi)}`;
};
console.log(JSON.stringify({ rounds: ROUNDS, ...figures }, (_, v) => (typeof v === "number" ? Math.round(v * 1000) / 1000 : v), 2));
console.log(`
| figure (${ROUNDS} rounds, lowest–highest) | libSQL file | PostgreSQL, 1 replica | PostgreSQL, 2 replicas |
|---|---|---|---|
| overhead per non-streaming turn, p50 | ${range(figures.libsqlOverhead, 2)} ms | ${range(figures.pgOverhead, 2)} ms | |
| turns/s, 8 concurrent clients | ${range(figures.libsqlC8, 0)} | ${range(figures.pgC8, 0)} | ${range(figures.pgC8Two, 0)} |`);
llmProc.kill("SIGTERM");
process.exit(0);
