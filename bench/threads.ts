// `bun run bench` (part 4): the cost of a turn as its thread grows. The compiled binary with its
// default context settings (a 32,768-token window, 4,096 kept for the answer, memory notes on)
// and the scripted LLM echoing each message back, in their own processes on loopback. At thread
// lengths 1, 10, 100 and 1,000 turns: the size of the request the service sends the LLM, and the
// service's own time per turn: the turn's latency less the LLM's time for that same request,
// replayed to it directly right after (its time grows with the request's size).
import { spawn, type Subprocess } from "bun";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { firstMatch, pct, serveEnv } from "./support";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const TOKEN = "bench-token-0123456789abcdef0123456789abcdef";
/** Turns measured at each length. */
const SAMPLES = 40;
const LENGTHS = [1, 10, 100, 1000];

const tmp = mkdtempSync(join(tmpdir(), "service-bench-threads-"));
const children: Subprocess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill();
});

/** A homelab chat message of a realistic length (about 190 characters). */
const message = (i: number) =>
  `Message ${i}: the garden needs water on dry days, the tomatoes want support before they grow tall, and the shed roof leaks near the door again.`;

async function main() {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);
  const llmProc = spawn(["bun", join(root, "tests/support/scripted-llm.ts"), "--port", "0", "--no-record"], { stdout: "pipe", stderr: "inherit" });
  children.push(llmProc);
  const llmUrl = (await firstMatch(llmProc, /listening on (\S+)/))[1]!;
  const svc = spawn([BIN, "serve"], {
    env: serveEnv(tmp, TOKEN, llmUrl, { RESPONSES_RATE_LIMIT: "0" }),
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(svc);
  const base = (await firstMatch(svc, /listening on (http:\/\/\S+)/))[1]!;
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

  const turn = async (input: string, previous?: string) => {
    const t = performance.now();
    const res = await fetch(`${base}/api/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "bench", input, previous_response_id: previous }) });
    const body = (await res.json()) as { id: string; status: string };
    const ms = performance.now() - t;
    if (res.status !== 200 || body.status !== "completed") throw new Error(`turn failed: ${res.status} ${JSON.stringify(body)}`);
    return { id: body.id, ms };
  };
  /** The request the service just sent, and the LLM's own time for it. */
  const replayLast = async () => {
    const body = await (await fetch(`${llmUrl}/_last_chat`)).text();
    const t = performance.now();
    await (await fetch(`${llmUrl}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body })).text();
    return { ms: performance.now() - t, bytes: body.length, messages: (JSON.parse(body) as { messages: unknown[] }).messages.length };
  };

  // warm up both processes (JIT, connection pools, the database file)
  let warm: string | undefined;
  for (let i = 0; i < 300; i++) warm = (await turn(message(i), warm)).id;

  type Sample = { turnMs: number; llmMs: number; bytes: number; messages: number };
  const rows: { length: number; samples: Sample[] }[] = [];
  const measure = async (input: string, previous?: string): Promise<{ id: string; s: Sample }> => {
    const t = await turn(input, previous);
    const r = await replayLast();
    return { id: t.id, s: { turnMs: t.ms, llmMs: r.ms, bytes: r.bytes, messages: r.messages } };
  };

  // length 1: the first turn of fresh threads
  const first: Sample[] = [];
  for (let i = 0; i < SAMPLES; i++) first.push((await measure(message(i))).s);
  rows.push({ length: 1, samples: first });

  // one thread grown to 1,000 turns and beyond, measured as it passes each length
  let prev: string | undefined;
  let n = 0;
  const started = performance.now();
  for (const length of LENGTHS.slice(1)) {
    while (n < length - 1) prev = (await turn(message(n++), prev)).id;
    const samples: Sample[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const m = await measure(message(n++), prev);
      prev = m.id;
      samples.push(m.s);
    }
    rows.push({ length, samples });
  }
  const growSeconds = (performance.now() - started) / 1000;
  const threadId = prev!.slice(37).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
  const history = (await (await fetch(`${base}/api/chat/history?thread_id=${threadId}`, { headers })).json()) as { items: { type: string }[] };
  const compactions = history.items.filter((i) => i.type === "compaction").length;

  const fmt = (x: number) => (Math.round(x * 100) / 100).toFixed(2);
  const result = rows.map(({ length, samples }) => {
    const over = samples.map((s) => s.turnMs - s.llmMs);
    return {
      length,
      request_kib_p50: Math.round(pct(samples.map((s) => s.bytes), 50) / 102.4) / 10,
      request_kib_max: Math.round(Math.max(...samples.map((s) => s.bytes)) / 102.4) / 10,
      messages_p50: pct(samples.map((s) => s.messages), 50),
      turn_ms_p50: pct(samples.map((s) => s.turnMs), 50),
      llm_ms_p50: pct(samples.map((s) => s.llmMs), 50),
      overhead_ms_p50: pct(over, 50),
      overhead_ms_p90: pct(over, 90),
    };
  });
  console.log(JSON.stringify({ samples_per_length: SAMPLES, compactions_in_thread: compactions, thread_turns: n, seconds_to_grow: Math.round(growSeconds) }, null, 2));
  console.log(`
| thread length | LLM request, p50 (max) | messages, p50 | scripted LLM's own time, p50 | service's overhead per turn, p50 / p90 |
|---|---|---|---|---|
${result.map((r) => `| ${r.length.toLocaleString("en")} turn${r.length === 1 ? "" : "s"} | ${r.request_kib_p50} KiB (${r.request_kib_max}) | ${r.messages_p50} | ${fmt(r.llm_ms_p50)} ms | ${fmt(r.overhead_ms_p50)} / ${fmt(r.overhead_ms_p90)} ms |`).join("\n")}

The thread of ${n} turns was compacted ${compactions} times (target: the overhead at 1,000 turns within twice that at 10).`);

  svc.kill("SIGTERM");
  await svc.exited;
  llmProc.kill("SIGTERM");
  rmSync(tmp, { recursive: true, force: true });
}

await main();
