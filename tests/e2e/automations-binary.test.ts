// Automations on the compiled binary, as a homelab drives them: the same POST twice makes one
// job; a Standard Webhooks request replayed is the same job and a stale one is refused; a slow
// job does not hold up a quick one of another conversation; a routine ticking every 2 s
// survives a kill -9 and a restart with no tick twice and its missed ticks recorded by its
// policy (the binary's clock is the real one; the test only waits); `service routines`
// drives it; and Node-RED, started headless from npm, posts, long-polls and takes the
// signed callback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { BIN as DEFAULT_BIN, listeningUrl, root, serveUntil, serveEnv, webhookUrl } from "../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { until } from "../support/until";
import { receiver, standardHeaders, whsec } from "../channels/webhook/support";

let BIN = DEFAULT_BIN;
const TOKEN = "automations-token-0123456789abcdef01234567";
const SECRET = "automations-secret-0123456789";

let llm: ScriptedLLM;
let dir: string;

function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n))));
}

beforeAll(async () => {
  llm = await startScriptedLLM();
  dir = mkdtempSync(join(tmpdir(), "service-automations-"));
  if (!existsSync(BIN)) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build failed");
  } else if (!process.env.SERVICE_BIN && newest(join(root, "src")) > statSync(BIN).mtimeMs) {
    // dist/service is older than the source: test the source, in a binary of our own
    BIN = join(dir, "service");
    const build = Bun.spawnSync(["bun", "run", "build.ts", "--outfile", BIN, "--no-sourcemap"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bun run build.ts failed");
  }
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (home: string, extra: Record<string, string> = {}) => serveEnv({ dir, home, token: TOKEN, llmUrl: llm.url, webhookSecret: SECRET }, extra);

async function serve(home: string, extra: Record<string, string> = {}) {
  const s = await serveUntil(["serve"], { cwd: dir, env: env(home, extra), bin: BIN }, (out) => {
    const url = listeningUrl(out);
    const webhook = webhookUrl(out);
    return url && webhook ? { url, webhook } : undefined;
  });
  return { proc: s.proc, ...s.ready, output: s.output };
}
type Served = Awaited<ReturnType<typeof serve>>;

async function post(s: Served, body: unknown, headers: Record<string, string> = {}, raw?: string) {
  const res = await fetch(`${s.webhook}/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", ...("webhook-signature" in headers ? {} : { "x-webhook-secret": SECRET }), ...headers },
    body: raw ?? JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const waitFor = async (s: Served, id: string, seconds = 30) =>
  (await (await fetch(`${s.webhook}/jobs/${id}?wait=${seconds}`, { headers: { "x-webhook-secret": SECRET } })).json()) as any;

const jobsOf = async (s: Served) => ((await (await fetch(`${s.url}/api/jobs`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as any).jobs as any[];

/** Runs `service routines …` of the binary against the home; returns its output. */
function cli(home: string, ...args: string[]) {
  const r = Bun.spawnSync([BIN, "routines", ...args, "--home", home], { cwd: dir, env: env(home) });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const messageOf = (body: any) => String(body.messages.at(-1).content).split("\n\n").at(-1)!;

describe("webhooks on the binary", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(join(dir, "webhook-home"), { HTTP_JOB_CONCURRENCY: "4" });
  });
  afterAll(async () => {
    s.proc.kill("SIGTERM");
    await s.proc.exited;
  });

  test("the same POST twice with an Idempotency-Key: one job; the second answer is 200, replayed", async () => {
    llm.reset();
    const body = { user_id: "ha", message: "switch the heater on", conversation_id: "heater" };
    const a = await post(s, body, { "idempotency-key": "heater-2026-11-27T07:00" });
    const b = await post(s, body, { "idempotency-key": "heater-2026-11-27T07:00" });
    expect(a.status).toBe(202);
    expect(b.status).toBe(200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.body.job_id).toBe(a.body.job_id);
    expect((await waitFor(s, a.body.job_id)).status).toBe("completed");
    expect((await jobsOf(s)).filter((j) => j.conversation_id === "heater")).toHaveLength(1);
    expect(llm.chatRequests().filter((r) => messageOf(r.body) === "switch the heater on")).toHaveLength(1);
    const other = await post(s, { ...body, message: "switch it off" }, { "idempotency-key": "heater-2026-11-27T07:00" });
    expect(other.status).toBe(422);
  });

  test("a Standard Webhooks request replayed is the same job; one five minutes stale is 401", async () => {
    const raw = JSON.stringify({ user_id: "n8n", message: "signed once" });
    const headers = standardHeaders(raw, { secret: SECRET });
    const first = await post(s, undefined, headers, raw);
    expect(first.status).toBe(202);
    const replay = await post(s, undefined, headers, raw);
    expect(replay.status).toBe(200);
    expect(replay.body.job_id).toBe(first.body.job_id);
    const stale = await post(s, undefined, standardHeaders(raw, { secret: SECRET, at: new Date(Date.now() - 5 * 60_000 - 2_000) }), raw);
    expect(stale.status).toBe(401);
    expect((await jobsOf(s)).filter((j) => j.user_id === "n8n")).toHaveLength(1);
  });

  test("a slow job and a quick one in two conversations: the quick one is done while the slow one runs", async () => {
    llm.reset();
    llm.respondWith((body) => (messageOf(body) === "write the weekly report" ? { text: "report", delayMs: 3_000 } : { text: "the garage is closed" }));
    const slow = await post(s, { user_id: "cron", message: "write the weekly report", conversation_id: "reports" });
    await llm.waitForRequests(1);
    const started = Date.now();
    const quick = await post(s, { user_id: "ha", message: "is the garage open?", conversation_id: "garage" });
    const done = await waitFor(s, quick.body.job_id);
    expect(done).toMatchObject({ status: "completed", response: "the garage is closed" });
    expect(Date.now() - started).toBeLessThan(2_000);
    const report = await waitFor(s, slow.body.job_id);
    expect(report.status).toBe("completed");
    expect(Date.parse(report.completed_at)).toBeGreaterThan(Date.parse(done.completed_at));
    llm.respondWith(null);
  });
});

describe("a routine every 2 s on the binary", () => {
  test("across a kill -9 and a restart: no tick twice, each tick recorded, the missed ones by policy; driven by `service routines`", async () => {
    llm.reset();
    llm.respondWith(() => ({ text: "checked" }));
    const home = join(dir, "routine-home");
    const first = await serve(home);
    const added = cli(home, "add", "--schedule", "every 2s", "--prompt", "Check the freezer.", "--name", "Freezer", "--catch-up", "skip", "--json");
    expect(added.code).toBe(0);
    const skip = JSON.parse(added.stdout);
    expect(skip).toMatchObject({ name: "Freezer", schedule: "every 2s", description: "every 2 seconds", catch_up: "skip" });
    const one = JSON.parse(cli(home, "add", "--schedule", "every 2s", "--prompt", "Check the fridge.", "--catch-up", "one", "--json").stdout);
    const listed = cli(home, "list");
    expect(listed.stdout).toContain(skip.id);
    expect(listed.stdout).toContain("every 2s");

    const runsOf = (id: string) => JSON.parse(cli(home, "runs", id, "--limit", "100", "--json").stdout).runs as any[];
    // each check runs the binary: not too often
    const runsUntil = (what: string, ok: () => boolean) => until(what, ok, { timeoutMs: 20_000, everyMs: 100 });
    await runsUntil("two runs of each", () => runsOf(skip.id).filter((r) => r.status === "completed").length >= 2 && runsOf(one.id).length >= 2);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const killedAt = Date.now();
    // down for a little over three ticks
    await Bun.sleep(6_500);
    const second = await serve(home);
    const restartedAt = Date.now();
    try {
      await runsUntil("runs after the restart", () => runsOf(skip.id).some((r) => Date.parse(r.scheduled_for) > restartedAt) && runsOf(one.id).some((r) => Date.parse(r.scheduled_for) > restartedAt));
      for (const [routine, policy] of [[skip, "skip"], [one, "one"]] as const) {
        const runs = runsOf(routine.id).reverse();
        const ticks = runs.map((r) => Date.parse(r.scheduled_for));
        // every tick once: anchor + 2 s × k, no gap and no duplicate
        const anchor = Date.parse(routine.created_at);
        expect(ticks.every((t) => (t - anchor) % 2_000 === 0)).toBe(true);
        for (let i = 1; i < ticks.length; i++) expect({ policy, gap: ticks[i]! - ticks[i - 1]! }).toEqual({ policy, gap: 2_000 });
        // the ticks missed while it was down, as the restart recorded them in one go (its log says how many)
        const caught = new RegExp(`routine caught up.*routine_id=${routine.id} missed=(\\d+) ran=(\\d+)`).exec(second.output());
        expect(caught).not.toBeNull();
        const [count, ran] = [Number(caught![1]), Number(caught![2])];
        expect(count).toBeGreaterThanOrEqual(2);
        const first = runs.findIndex((r) => Date.parse(r.scheduled_for) > killedAt);
        const missed = runs.slice(first, first + count);
        expect(Date.parse(missed.at(-1)!.scheduled_for)).toBeLessThan(restartedAt);
        const outcomes = missed.map((r) => (r.outcome === "ran" ? "ran" : r.reason));
        if (policy === "skip") {
          expect(outcomes.every((o) => o === "missed")).toBe(true);
          expect(ran).toBe(0);
        } else {
          expect(outcomes.slice(0, -1).every((o) => o === "missed")).toBe(true);
          // the one catch-up run, unless the run the kill cut short was still being run again then (overlap)
          expect(["ran", "overlap"]).toContain(outcomes.at(-1)!);
          expect(ran).toBe(outcomes.at(-1) === "ran" ? 1 : 0);
        }
        // after the restart it ticks on
        expect(runs.filter((r) => Date.parse(r.scheduled_for) > restartedAt).every((r) => r.outcome === "ran" || r.reason === "overlap")).toBe(true);
        // one job per run that ran, none for the skipped
        const jobs = (await jobsOf(second)).filter((j) => j.user_id === routine.id);
        expect(jobs.length).toBe(runs.filter((r) => r.outcome === "ran").length);
        expect(new Set(runs.filter((r) => r.job_id).map((r) => r.job_id)).size).toBe(jobs.length);
      }
      // the rest of the CLI: show, pause (no more records), run now, resume, delete
      expect(cli(home, "show", skip.id).stdout).toContain("every 2s: every 2 seconds");
      expect(cli(home, "pause", skip.id).stdout).toContain("paused Freezer");
      const pausedCount = runsOf(skip.id).length;
      const now = JSON.parse(cli(home, "run", skip.id, "--json").stdout).run;
      expect(now).toMatchObject({ trigger: "manual", outcome: "ran" });
      await runsUntil("the manual run to complete", () => runsOf(skip.id).find((r) => r.id === now.id)?.status === "completed");
      // two ticks' time later, only the run asked for was added
      await Bun.sleep(4_100);
      expect(runsOf(skip.id).length).toBe(pausedCount + 1);
      expect(cli(home, "resume", skip.id).stdout).toContain("resumed Freezer; next run");
      expect(cli(home, "delete", one.id).code).toBe(0);
      const gone = cli(home, "show", one.id);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain("No routine found");
      expect(cli(home, "add", "--schedule", "every fortnight", "--prompt", "x").stderr).toContain("is not understood");
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  }, 90_000);
});

describe("Node-RED drives the channel", () => {
  const nodeRed = join(root, "node_modules/node-red/red.js");
  const node = Bun.which("node");
  test.skipIf(!existsSync(nodeRed) || !node)("a flow posts a job, long-polls it to the end and receives the signed callback", async () => {
    llm.reset();
    llm.respondWith(() => ({ text: "The garage door is closed." }));
    const s = await serve(join(dir, "nodered-home"), { HTTP_CALLBACK_ALLOW_HOSTS: "127.0.0.1" });
    const report = receiver();
    const userDir = join(dir, "node-red");
    mkdirSync(userDir, { recursive: true });
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    writeFileSync(join(userDir, "settings.js"), `module.exports = { uiHost: "127.0.0.1", flowFile: "flows.json", credentialSecret: false };\n`);
    writeFileSync(join(userDir, "flows.json"), JSON.stringify(flow()));
    const red = Bun.spawn([node!, nodeRed, "-u", userDir, "-p", String(port), "flows.json"], {
      cwd: userDir,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: userDir,
        WEBHOOK_URL: s.webhook,
        SECRET,
        CALLBACK_URL: `http://127.0.0.1:${port}/callback`,
        REPORT_URL: report.url.replace(/\/hook$/, ""),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    let redOutput = "";
    void (async () => {
      for await (const chunk of red.stdout) redOutput += new TextDecoder().decode(chunk);
    })();
    try {
      // the flow reports the long poll's answer, then forwards the callback it received
      await report.waitFor(2, 60_000).catch((e) => {
        throw new Error(`${(e as Error).message}; Node-RED said:\n${redOutput}`);
      });
      const byPath = (p: string) => report.got.map((g) => JSON.parse(g.body)).find((b) => b.kind === p);
      const polled = byPath("longpoll");
      expect(polled).toMatchObject({ status: 200, record: { status: "completed", response: "The garage door is closed.", user_id: "node-red", conversation_id: "garage" } });
      const callback = byPath("callback");
      const body = JSON.stringify(callback.body);
      const verified = new Webhook(whsec(SECRET)).verify(body, callback.headers);
      expect(verified).toMatchObject({ id: polled.record.id, status: "completed", response: "The garage door is closed." });
      expect(callback.headers["x-webhook-signature"]).toMatch(/^sha256=/);
    } finally {
      red.kill("SIGTERM");
      await red.exited;
      report.stop();
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  }, 90_000);
});

/** The Node-RED flow: inject → POST /webhook → GET /jobs/{id}?wait=30 → report; and http in /callback → report. */
function flow() {
  const fn = (id: string, func: string, wires: string[]) => ({ id, type: "function", z: "tab", name: id, func, outputs: 1, noerr: 0, wires: [wires] });
  const request = (id: string, wires: string[]) => ({
    id,
    type: "http request",
    z: "tab",
    name: id,
    method: "use",
    ret: "obj",
    paytoqs: "ignore",
    url: "",
    tls: "",
    persist: false,
    proxy: "",
    insecureHTTPParser: false,
    authType: "",
    senderr: false,
    headers: [],
    wires: [wires],
  });
  const report = (kind: string) =>
    `msg.url = env.get('REPORT_URL') + '/${kind}'; msg.method = 'POST'; msg.headers = { 'content-type': 'application/json' };`;
  // nodes of a flow have a place on the canvas (without one Node-RED takes them for config nodes)
  return [
    { id: "tab", type: "tab", label: "automation" },
    { id: "start", type: "inject", z: "tab", name: "start", props: [{ p: "payload" }], repeat: "", crontab: "", once: true, onceDelay: "0.5", topic: "", payload: "", payloadType: "date", wires: [["prepare"]] },
    fn(
      "prepare",
      "msg.url = env.get('WEBHOOK_URL') + '/webhook'; msg.method = 'POST';\n" +
        "msg.headers = { 'content-type': 'application/json', 'X-Webhook-Secret': env.get('SECRET'), 'Idempotency-Key': 'node-red-garage-1' };\n" +
        "msg.payload = { user_id: 'node-red', message: 'Is the garage door open?', conversation_id: 'garage', callback_url: env.get('CALLBACK_URL') };\nreturn msg;",
      ["post"],
    ),
    request("post", ["poll"]),
    fn(
      "poll",
      "msg.url = env.get('WEBHOOK_URL') + '/jobs/' + msg.payload.job_id + '?wait=30'; msg.method = 'GET';\n" +
        "msg.headers = { 'X-Webhook-Secret': env.get('SECRET') }; delete msg.payload;\nreturn msg;",
      ["polled"],
    ),
    request("polled", ["reportPoll"]),
    fn("reportPoll", `const record = msg.payload; ${report("longpoll")} msg.payload = { kind: 'longpoll', status: msg.statusCode, record };\nreturn msg;`, ["sendPoll"]),
    request("sendPoll", []),
    { id: "callback", type: "http in", z: "tab", name: "callback", url: "/callback", method: "post", upload: false, swaggerDoc: "", wires: [["ack", "reportCallback"]] },
    { id: "ack", type: "http response", z: "tab", name: "ack", statusCode: "200", headers: {}, wires: [] },
    fn(
      "reportCallback",
      `const headers = msg.req.headers; const body = msg.payload; delete msg.req; delete msg.res; ${report("callback")} msg.payload = { kind: 'callback', headers, body };\nreturn msg;`,
      ["sendCallback"],
    ),
    request("sendCallback", []),
  ].map((n, i) => (n.type === "tab" ? n : { ...n, x: 100 + 150 * i, y: 100 }));
}
