#!/usr/bin/env bun
// `bun run bench:phases`: where a non-streaming turn's time goes on the service's own thread,
// beside the floor's (bench/floor.ts), on the kernel's clock. The client's timing mixes the
// service's work with the wake-ups of three processes; the kernel's timestamps of the service's
// own syscalls split a turn where its thread sleeps and wakes, and runs a few minutes apart
// moved their medians by 5–10 µs (docs/performance.md, "A turn by steps, on the kernel's clock").
//
// It traces the main thread's `recvfrom`, `sendto` and `epoll_pwait2` through the syscall
// tracepoints (/sys/kernel/tracing: Linux, root), over BENCH_PHASE_TURNS sequential turns
// after 1,000 to warm up, BENCH_PHASE_ROUNDS rounds of the service and the floor in turns.
// Each phase runs from one syscall of the thread to the next:
//   before the model: woken by the request → the model's request sent
//   the model:        the model's request sent → woken by its answer (the LLM's time in it)
//   after the answer: woken by the answer → the response sent (the commit in it)
//   after the response: the response sent → asleep again
import { spawn, type Subprocess } from "bun";
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort, healthy, sayHello, scratch, scriptedLlmProcess, serveEnv, TOKEN } from "./support";
import { PHASES, phases, type Phase } from "./trace-phases";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const TURNS = Number(process.env.BENCH_PHASE_TURNS ?? 2000);
const ROUNDS = Number(process.env.BENCH_PHASE_ROUNDS ?? 2);
const TRACING = "/sys/kernel/tracing";
const EVENTS = ["sys_enter_sendto", "sys_enter_recvfrom", "sys_enter_epoll_pwait2", "sys_exit_epoll_pwait2"];

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);
try {
  accessSync(`${TRACING}/tracing_on`, constants.W_OK);
  for (const e of EVENTS) accessSync(`${TRACING}/events/syscalls/${e}/enable`, constants.W_OK);
} catch {
  console.log(`bench:phases needs Linux's syscall tracepoints, writable (${TRACING}, as root): skipped.`);
  process.exit(0);
}

const put = (path: string, value: string) => writeFileSync(`${TRACING}/${path}`, value);
const traceOff = () => {
  put("tracing_on", "0");
  for (const e of EVENTS) (put(`events/syscalls/${e}/enable`, "0"), put(`events/syscalls/${e}/filter`, "0"));
};
// room for every event of the turns (about 10 a turn), the buffer's own size given back after
// (a buffer not yet allocated reads "7 (expanded: 1408)": its size is the first number)
const bufferKb = /^\d+/.exec(readFileSync(`${TRACING}/buffer_size_kb`, "utf8"))?.[0];
put("buffer_size_kb", String(Math.max(Number(bufferKb) || 0, 8192)));
// (registered before the scratch's own: the trace is off before its processes stop)
process.on("exit", () => {
  traceOff();
  if (bufferKb) put("buffer_size_kb", bufferKb);
});
const { tmp, children } = scratch("service-phases-");

/** Starts `serve` (or the floor) and waits for its port; its pid is its event loop's thread. */
async function start(kind: "service" | "floor", llmUrl: string, round: number): Promise<{ proc: Subprocess; base: string }> {
  const port = await freePort();
  const env = serveEnv(join(tmp, `${kind}-${round}`), TOKEN, llmUrl, { RESPONSES_RATE_LIMIT: "0", GATEWAY_PORT: String(port) });
  const cmd = kind === "service" ? [BIN, "serve"] : ["bun", join(root, "bench/floor.ts")];
  const proc = spawn(cmd, { env, stdout: "ignore", stderr: "inherit" });
  children.push(proc);
  const base = `http://127.0.0.1:${port}`;
  await healthy(base);
  return { proc, base };
}

async function turns(base: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await sayHello(base);
}

/** The median of each phase over `n` turns, from the syscalls of thread `pid`. */
async function traced(pid: number, base: string, n: number): Promise<Record<Phase, number>> {
  put("tracing_on", "0");
  put("trace", "");
  for (const e of EVENTS) (put(`events/syscalls/${e}/filter`, `common_pid == ${pid}`), put(`events/syscalls/${e}/enable`, "1"));
  put("tracing_on", "1");
  await turns(base, n);
  traceOff();
  return phases(readFileSync(`${TRACING}/trace`, "utf8"));
}

const { proc: llm, url: llmUrl } = await scriptedLlmProcess();
children.push(llm);
const seen: Record<"service" | "floor", Record<Phase, number>[]> = { service: [], floor: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of ["floor", "service"] as const) {
    const { proc, base } = await start(kind, llmUrl, round);
    await turns(base, 1000);
    seen[kind].push(await traced(proc.pid, base, TURNS));
    proc.kill();
  }
}
const range = (xs: number[]) => {
  const lo = Math.round(Math.min(...xs));
  const hi = Math.round(Math.max(...xs));
  return lo === hi ? `${lo} µs` : `${lo}–${hi} µs`;
};
console.log(`\nA turn's phases on the event loop's thread, p50 of ${TURNS} sequential turns, ${ROUNDS} rounds\n`);
console.log("| phase | the floor | the service |\n|---|---|---|");
for (const p of PHASES) console.log(`| ${p} | ${range(seen.floor.map((r) => r[p]))} | ${range(seen.service.map((r) => r[p]))} |`);
const own = (r: Record<Phase, number>) => r["before the model"] + r["after the answer"] + r["after the response"];
console.log(`| the thread's own, in all | ${range(seen.floor.map(own))} | ${range(seen.service.map(own))} |`);
process.exit(0);
