// `bun run bench/webhook.ts`: the webhook channel of the compiled binary against the scripted
// LLM, each in its own process on loopback. Figures:
//  - jobs accepted per second: POST /webhook → 202, 8 concurrent keep-alive clients, 2,000 jobs;
//  - the worker's drain of that burst: from the first POST until the last job is completed
//    (jobs run one at a time, in order, so the last one completing means all have), read by
//    polling GET /jobs/{id} of the last job every 10 ms;
//  - POST → completed per job inside the burst: the record's completed_at minus the client's
//    clock at the POST (same machine, millisecond resolution); mostly time spent queued;
//  - POST → completed with an empty queue: one job at a time, timed by polling GET /jobs/{id}
//    every millisecond until it is completed (resolution about 1 ms), on 200 jobs;
//  - jobs accepted per second with an Idempotency-Key and a Standard Webhooks signature on
//    every request (signed by the standardwebhooks package before the clock starts), 2,000 jobs;
//  - 50 routines due in the same second (`at` the same time): how long after that time the
//    last of their runs was recorded and the last of their jobs started.
// The channel allows 60 requests a minute per client IP, so the clients spread over source
// addresses of 127.0.0.0/8 (every one is loopback on Linux), at most 50 requests each.
import { spawn } from "bun";
import http from "node:http";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { firstMatch, pct, rssMb, scratch, scriptedLlmProcess, serveEnv, TOKEN } from "./support";

const root = resolve(import.meta.dir, "..");
const BIN = process.env.SERVICE_BIN ?? join(root, "dist/service");
const SECRET = "bench-webhook-secret-0123456789";
const JOBS = Number(process.env.BENCH_WEBHOOK_JOBS ?? 2000);
const CONCURRENCY = 8;
const SEQUENTIAL = Number(process.env.BENCH_WEBHOOK_SEQUENTIAL ?? 200);
const PER_IP = 50;
/** The memory figure: peak RSS while this many clients post a burst of JOBS and it drains. */
const PEAK_CLIENTS = 32;
/** A message the scripted LLM answers after HOLD_MS, as a model at work would: it holds its lane while a burst is accepted. */
const HOLD = "hold the lane";
const HOLD_MS = 3_000;
/** Routines due in the same second. */
const ROUTINES = 50;

const { tmp, children } = scratch("service-bench-webhook-");
let stopping = false;


const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Source addresses 127.1.0.1, 127.1.0.2, ... (never one twice): a fresh one for every PER_IP requests. */
let ipCounter = 0;
const nextIp = () => {
  const n = ipCounter++;
  if (n >= 254 * 256) throw new Error("out of source addresses");
  return `127.1.${Math.floor(n / 254)}.${(n % 254) + 1}`;
};

/** One HTTP client with a keep-alive connection, moving to a new source address every PER_IP requests. */
class Client {
  #agent: http.Agent | undefined;
  #ip = "";
  #used = 0;

  constructor(private readonly base: URL) {}

  request(method: string, path: string, body?: string, extra: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    if (!this.#agent || this.#used >= PER_IP) {
      this.#agent?.destroy();
      this.#ip = nextIp();
      this.#agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: this.#ip } as http.AgentOptions);
      this.#used = 0;
    }
    this.#used++;
    const headers: Record<string, string> = "webhook-signature" in extra ? { ...extra } : { "x-webhook-secret": SECRET, ...extra };
    if (body !== undefined) headers["content-type"] = "application/json";
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: this.base.hostname, port: this.base.port, path, method, agent: this.#agent, localAddress: this.#ip, headers },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  close() {
    this.#agent?.destroy();
  }
}

async function main() {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first`);

  const { proc: llmProc, url: llmUrl } = await scriptedLlmProcess("Done: the webhook was handled.", "--slow", `${HOLD}=${HOLD_MS}`);
  children.push(llmProc);

  const svc = spawn([BIN, "serve"], {
    env: serveEnv(tmp, TOKEN, llmUrl, { HTTP_ENABLED: "true", HTTP_HOST: "127.0.0.1", HTTP_PORT: "0", HTTP_WEBHOOK_SECRET: SECRET, HTTP_JOB_CONCURRENCY: process.env.HTTP_JOB_CONCURRENCY ?? "4" }),
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(svc);
  // serve prints the gateway's URL and then the webhook channel's
  const started0 = await firstMatch(svc, /listening on (http:\/\/\S+)[\s\S]*webhook channel: (http:\/\/\S+)\/webhook/);
  const gatewayUrl = started0[1]!;
  const base = new URL(started0[2]!);
  void svc.exited.then((code) => {
    if (!stopping) {
      console.error(`the service exited during the benchmark (code ${code})`);
      process.exit(1);
    }
  });

  const post = async (c: Client, message: string) => {
    const r = await c.request("POST", "/webhook", JSON.stringify({ user_id: "bench", message, metadata: { n: message } }));
    if (r.status !== 202) throw new Error(`POST /webhook: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.job_id as string;
  };
  const get = async (c: Client, id: string) => {
    const r = await c.request("GET", `/jobs/${id}`);
    if (r.status !== 200) throw new Error(`GET /jobs: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { status: string; completed_at?: string; error?: unknown };
  };
  const untilDone = async (c: Client, id: string, pollMs: number) => {
    for (;;) {
      const job = await get(c, id);
      if (job.status === "completed") return job;
      if (job.status === "failed") throw new Error(`job failed: ${JSON.stringify(job)}`);
      await Bun.sleep(pollMs);
    }
  };

  // RSS, sampled every 5 ms for the whole run: the peak is whichever burst drives it
  let rssPeak = rssMb(svc.pid);
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(svc.pid))), 5);

  // warm-up: the first turns load code paths and the LLM connection
  const warm = new Client(base);
  for (let i = 0; i < 50; i++) await untilDone(warm, await post(warm, `warm-up ${i}`), 1);

  // 1. A burst of JOBS from 8 concurrent clients: acceptance, then the drain.
  const clients = Array.from({ length: CONCURRENCY }, () => new Client(base));
  const sent: { id: string; at: number }[] = [];
  const postLatency: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const wall0 = Date.now();
  await Promise.all(
    clients.map(async (c) => {
      while (next < JOBS) {
        const n = next++;
        const at = Date.now();
        const start = performance.now();
        const id = await post(c, `burst job ${n}`);
        postLatency.push(performance.now() - start);
        sent[n] = { id, at };
      }
    }),
  );
  const acceptSeconds = (performance.now() - t0) / 1000;
  await untilDone(clients[0]!, sent.at(-1)!.id, 10);
  const drainSeconds = (performance.now() - t0) / 1000;
  const drainWallMs = Date.now() - wall0;

  // every job completed; POST → completed_at as the service recorded it
  const burstLatency: number[] = [];
  const reader = new Client(base);
  for (const s of sent) {
    const job = await get(reader, s.id);
    if (job.status !== "completed") throw new Error(`job ${s.id} is ${job.status}`);
    burstLatency.push(Date.parse(job.completed_at!) - s.at);
  }

  // 2. One job at a time on an empty queue, polled until completed.
  const single = new Client(base);
  const singleLatency: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const start = performance.now();
    await untilDone(single, await post(single, `single job ${i}`), 1);
    singleLatency.push(performance.now() - start);
  }

  // 3. Memory: a burst of JOBS from PEAK_CLIENTS clients, on top of all of the above.
  const rssBefore = rssMb(svc.pid);
  const many = Array.from({ length: PEAK_CLIENTS }, () => new Client(base));
  let last = "";
  let k = 0;
  await Promise.all(
    many.map(async (c) => {
      while (k < JOBS) {
        const n = k++;
        const id = await post(c, `peak job ${n}`);
        if (n === JOBS - 1) last = id;
      }
    }),
  );
  await untilDone(many[0]!, last, 10);
  clearInterval(sampler);

  // 4. Acceptance with an Idempotency-Key and a Standard Webhooks signature on every request,
  // into one conversation whose first job waits on the model meanwhile (as it would on a real
  // one): the burst is accepted while nothing else runs, then drains in order.
  const holder = new Client(base);
  const held = (await holder.request("POST", "/webhook", JSON.stringify({ user_id: "bench", message: HOLD, conversation_id: "signed-burst" }))).body.job_id as string;
  while ((await get(holder, held)).status !== "running") await Bun.sleep(5);
  const signer = new Webhook(`whsec_${Buffer.from(SECRET).toString("base64")}`);
  const signed = Array.from({ length: JOBS }, (_, n) => {
    const body = JSON.stringify({ user_id: "bench", message: `signed job ${n}`, conversation_id: "signed-burst" });
    const id = `bench-signed-${n}`;
    const at = new Date();
    return { body, headers: { "idempotency-key": id, "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signer.sign(id, at, body) } };
  });
  const signedClients = Array.from({ length: CONCURRENCY }, () => new Client(base));
  let s = 0;
  let lastSigned = "";
  const ts = performance.now();
  await Promise.all(
    signedClients.map(async (c) => {
      while (s < JOBS) {
        const n = s++;
        const r = await c.request("POST", "/webhook", signed[n]!.body, signed[n]!.headers);
        if (r.status !== 202) throw new Error(`signed POST /webhook: ${r.status} ${JSON.stringify(r.body)}`);
        if (n === JOBS - 1) lastSigned = r.body.job_id;
      }
    }),
  );
  const signedPerS = Math.round(JOBS / ((performance.now() - ts) / 1000));
  if ((await get(holder, held)).status !== "running") console.warn(`the lane's first job ended before the burst was accepted: raise HOLD_MS`);
  await untilDone(signedClients[0]!, lastSigned, 10);

  // 5. 50 routines due in the same second: created ahead with `at` that second, then read back.
  const gateway = gatewayUrl.replace(/\/$/, "");
  const api = async (method: string, path: string, json?: unknown) => {
    const res = await fetch(gateway + path, { method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: json === undefined ? undefined : JSON.stringify(json) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const due = Math.ceil((Date.now() + 3_000) / 1000) * 1000;
  const ids: string[] = [];
  for (let i = 0; i < ROUTINES; i++) ids.push((await api("POST", "/api/routines", { name: `bench ${i}`, schedule: `at ${new Date(due).toISOString()}`, prompt: `routine ${i}` })).id);
  const started = new Map<string, number>();
  for (;;) {
    const jobs = (await api("GET", "/api/jobs")).jobs as any[];
    for (const j of jobs) if (j.source === "routine" && j.started_at) started.set(j.user_id, Date.parse(j.started_at));
    if (ids.every((id) => started.has(id))) break;
    if (Date.now() > due + 30_000) throw new Error(`only ${started.size} of ${ROUTINES} routines started`);
    await Bun.sleep(50);
  }
  const recordedMs = Math.max(...(await Promise.all(ids.map(async (id) => Date.parse((await api("GET", `/api/routines/${id}/runs`)).runs[0].started_at) - due))));
  const startedMs = Math.max(...ids.map((id) => started.get(id)! - due));
  await Bun.sleep(2_000);
  const rssRest = rssMb(svc.pid);

  const result = {
    rss_mb: { peak: rssPeak, before_c32_burst: rssBefore, at_rest_after: rssRest },
    jobs: JOBS,
    clients: CONCURRENCY,
    accepted_per_s: Math.round(JOBS / acceptSeconds),
    post_ms: { p50: round(pct(postLatency, 50)), p99: round(pct(postLatency, 99)) },
    drain_s: round(drainSeconds),
    drain_wall_ms: drainWallMs,
    completed_per_s: Math.round(JOBS / drainSeconds),
    burst_post_to_completed_ms: { p50: pct(burstLatency, 50), p99: pct(burstLatency, 99) },
    single_post_to_completed_ms: { p50: round(pct(singleLatency, 50)), p99: round(pct(singleLatency, 99)), jobs: SEQUENTIAL },
    idempotent_signed_accepted_per_s: signedPerS,
    routines_due_together: { routines: ROUTINES, last_run_recorded_ms: recordedMs, last_job_started_ms: startedMs },
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`
| webhook figure | value |
|---|---|
| jobs accepted per second (POST → 202, ${CONCURRENCY} clients, ${JOBS} jobs) | ${result.accepted_per_s} |
| POST → 202, p50 / p99 | ${result.post_ms.p50} / ${result.post_ms.p99} ms |
| jobs completed per second (the burst drained one at a time) | ${result.completed_per_s} |
| POST → completed inside the burst, p50 / p99 (queueing included) | ${result.burst_post_to_completed_ms.p50} / ${result.burst_post_to_completed_ms.p99} ms |
| POST → completed, empty queue, p50 / p99 (${SEQUENTIAL} jobs, polled) | ${result.single_post_to_completed_ms.p50} / ${result.single_post_to_completed_ms.p99} ms |
| RSS peak over the whole run, ${PEAK_CLIENTS}-client burst included (target < 150 MB) | ${rssPeak} MB |
| RSS before the ${PEAK_CLIENTS}-client burst / at rest 2 s after it | ${rssBefore} / ${rssRest} MB |
| jobs accepted per second, Idempotency-Key and Standard Webhooks signature on each (target ≥ 1,000) | ${signedPerS} |
| ${ROUTINES} routines due in the same second: last run recorded / last job started, after that second (target < 1,000 ms) | ${recordedMs} / ${startedMs} ms |`);

  for (const c of [warm, reader, single, ...clients, ...many, ...signedClients, holder]) c.close();
  stopping = true;
  svc.kill("SIGTERM");
  await svc.exited;
  llmProc.kill("SIGTERM");
  await llmProc.exited;
}

await main();
