// Running it day to day, through the compiled binary as an operator does: `serve` with JSON
// logs, `status`, `users` (over the running service, and on the database when it is not
// running), `doctor`, a port in use, `serve | head -1`, a typo in config.json, onboarding twice.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, type Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ensureBinary, serveUntil } from "../support/binary";
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { until } from "../support/until";
const LLM_KEY = "llm-key-for-the-operations-test-0123";

let llm: ScriptedLLM;
let dir: string;
let home: string;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: dir, SERVICE_HOME: home, CLI_ENABLED: "false", GATEWAY_PORT: "0", ...extra };
}

/** Runs a command of the binary to its end. */
async function run(args: string[], extra: Record<string, string> = {}) {
  const p = spawn([BIN, ...args], { cwd: dir, env: env(extra), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, stdout, stderr };
}

interface Serving {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  lines: () => string[];
}

/** Starts `serve` with JSON logs; ready once its "listening" record is out. */
async function serveJson(extra: Record<string, string> = {}): Promise<Serving> {
  const listening = (out: string) => out.split("\n").find((l) => l.includes('"msg":"listening"'));
  const s = await serveUntil(["serve"], { cwd: dir, env: env({ LOG_FORMAT: "json", ...extra }) }, listening);
  return { proc: s.proc, url: JSON.parse(s.ready).url, lines: () => s.output().split("\n").filter(Boolean) };
}

beforeAll(async () => {
  ensureBinary();
  llm = await startScriptedLLM({ apiKey: LLM_KEY });
  dir = mkdtempSync(join(tmpdir(), "service-ops-"));
  home = join(dir, "home");
});

afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an onboarded home, served", () => {
  let s: Serving;
  let instanceToken: string;
  const api = (path: string, token: string, init: RequestInit = {}) =>
    fetch(s.url + path, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });

  test("status says it is not running (exit 1) before serve", async () => {
    const r = await run(["status"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("not running");
  });

  test("onboarding twice: the second run applies its flags and says what changed", async () => {
    const first = await run(["onboard", "--non-interactive", "--llm-base-url", llm.url, "--llm-api-key", LLM_KEY, "--llm-model", "first-model"]);
    expect(first.code).toBe(0);
    const second = await run(["onboard", "--non-interactive", "--llm-model", "scripted-model"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("llm.model: first-model → scripted-model");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).llm.model).toBe("scripted-model");
    instanceToken = readFileSync(join(home, "webui-token"), "utf8").trim();
  });

  test("serve starts; status reports it (exit 0) with its address and pid", async () => {
    s = await serveJson();
    const r = await run(["status"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`is running at ${s.url}`);
    expect(r.stdout).toContain(`pid ${s.proc.pid}`);
    expect(r.stdout).toContain("LLM: scripted-model");
    const json = JSON.parse((await run(["status", "--json"])).stdout);
    expect(json).toMatchObject({ running: true, url: s.url, pid: s.proc.pid, status: { llm: { configured: true, model: "scripted-model" } } });
  });

  test("users: create, token, suspend, activate, delete go through the running service and apply at once", async () => {
    const made = await run(["users", "create", "--role", "member", "--email", "ada@example.com", "--name", "Ada"]);
    expect(made.code).toBe(0);
    const token = /token, shown only now: (svc_[0-9a-f]{64})/.exec(made.stdout)![1]!;
    expect((await api("/api/status", token)).status).toBe(200);

    const list = await run(["users", "list"]);
    expect(list.stdout).toMatch(/owner\s+owner\s+active/);
    expect(list.stdout).toMatch(/member\s+active\s+ada@example\.com\s+Ada\s+token\s/);
    expect(list.stdout).toMatch(/owner\s+owner\s+active\s+-\s+Owner\s+instance_token\s/);

    const rotated = await run(["users", "token", "ada@example.com"]);
    expect(rotated.code).toBe(0);
    const fresh = /shown only now: (svc_[0-9a-f]{64})/.exec(rotated.stdout)![1]!;
    const old = await api("/api/status", token);
    expect(old.status).toBe(401);
    expect(await old.text()).toBe("Invalid or missing auth token");
    expect((await api("/api/status", fresh)).status).toBe(200);

    expect((await run(["users", "suspend", "ada@example.com"])).code).toBe(0);
    expect((await api("/api/status", fresh)).status).toBe(401);
    expect((await run(["users", "activate", "ada@example.com"])).code).toBe(0);
    expect((await api("/api/status", fresh)).status).toBe(200);

    const owner = await run(["users", "suspend", "owner"]);
    expect(owner.code).toBe(1);
    expect(owner.stderr).toContain("cannot be suspended");

    const unconfirmed = await run(["users", "delete", "ada@example.com"]);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain("--yes");
    expect((await api("/api/status", fresh)).status).toBe(200);
    const deleted = await run(["users", "delete", "ada@example.com", "--yes"]);
    expect(deleted.code).toBe(0);
    expect((await api("/api/status", fresh)).status).toBe(401);
    expect((await run(["users", "list"])).stdout).not.toContain("ada@example.com");
    expect((await run(["users", "suspend", "nobody@example.com"])).code).toBe(1);
  });

  test("JSON logs: one object per line with ts, level, msg; one line per turn with its fields; no secret anywhere", async () => {
    llm.enqueue({ text: "Hello." }, { error: { status: 400, message: "the model refused" } });
    const ok = (await (await api("/api/v1/responses", instanceToken, { method: "POST", body: JSON.stringify({ model: "m", input: "hi" }) })).json()) as any;
    const bad = (await (await api("/api/v1/responses", instanceToken, { method: "POST", body: JSON.stringify({ model: "m", input: "fail" }) })).json()) as any;
    expect(bad.status).toBe("failed");
    await until("two turn lines", () => s.lines().filter((l) => l.includes('"msg":"turn"')).length >= 2, { timeoutMs: 5_000 });
    const records = s.lines().map((l) => JSON.parse(l));
    for (const r of records) {
      expect(typeof r.ts).toBe("string");
      expect(new Date(r.ts).toISOString()).toBe(r.ts);
      expect(["debug", "info", "warn", "error"]).toContain(r.level);
      expect(typeof r.msg).toBe("string");
    }
    const turns = records.filter((r) => r.msg === "turn");
    const good = turns.find((r) => r.response_id === ok.id);
    expect(good).toMatchObject({ level: "info", user_id: "owner", channel: "responses", status: "completed", thread_id: expect.any(String) });
    expect(typeof good.duration_ms).toBe("number");
    expect(typeof good.input_tokens).toBe("number");
    expect(turns.find((r) => r.response_id === bad.id)).toMatchObject({ level: "warn", status: "failed", error_code: "llm_error" });
    const everything = s.lines().join("\n");
    for (const secret of [instanceToken, LLM_KEY]) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/svc_[0-9a-f]{64}/);
    expect(everything).not.toMatch(/Bearer /i);
  });

  test("doctor checks home, config, database, LLM, ports and the systemd unit, one line each (exit 0)", async () => {
    const port = new URL(s.url).port;
    const unitDir = join(dir, ".config", "systemd", "user");
    mkdirSync(unitDir, { recursive: true });
    writeFileSync(join(unitDir, "service.service"), `[Service]\nExecStart=${BIN} serve\nEnvironment=SERVICE_HOME=${home}\n`);
    const r = await run(["doctor"], { GATEWAY_PORT: port });
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").map((l) => l.split(/\s{2,}/).slice(0, 2).join(" "))).toEqual([
      "ok home",
      "ok config",
      "ok database",
      "ok llm",
      "warn context", // the scripted LLM does not say its window: 32768, and set LLM_CONTEXT_WINDOW
      "ok gateway port",
      "skip webhook port",
      "ok systemd",
    ]);
    expect(r.stdout).toContain(`in use by this service (pid ${s.proc.pid})`);
    // a unit whose binary is gone is a failure
    writeFileSync(join(unitDir, "service.service"), `[Service]\nExecStart=%h/nowhere/service serve\n`);
    const broken = await run(["doctor"], { GATEWAY_PORT: port });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^fail\s+systemd\s+.*nowhere\/service, which does not exist/m);
    rmSync(join(unitDir, "service.service"));
  });

  test("a port in use: one clear line, exit 1, no stack trace", async () => {
    const port = new URL(s.url).port;
    const r = await run(["serve"], { GATEWAY_PORT: port });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining(`cannot listen on 127.0.0.1:${port}: the port is in use`)]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // the running one is unharmed, and still the one status reports
    expect((await run(["status"])).stdout).toContain(`pid ${s.proc.pid}`);
  });

  test("SIGTERM stops it; status says it is not running again", async () => {
    s.proc.kill("SIGTERM");
    expect(await s.proc.exited).toBe(0);
    expect(existsSync(join(home, "serve.json"))).toBe(false);
    const r = await run(["status"]);
    expect(r.code).toBe(1);
  });

  test("users work on the database when nothing is running", async () => {
    const made = await run(["users", "create", "--role", "admin", "--email", "offline@example.com", "--json"]);
    expect(made.code).toBe(0);
    const body = JSON.parse(made.stdout);
    expect(body.user).toMatchObject({ role: "admin", email: "offline@example.com", status: "active" });
    expect((await run(["users", "list", "--json"])).stdout).toContain("offline@example.com");
    // and the token works once the service is up
    s = await serveJson();
    try {
      expect((await api("/api/status", body.api_token)).status).toBe(200);
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  });
});

describe("warnings and pipes", () => {
  test("a typo in config.json is named at start-up, with the nearest known key", async () => {
    const h = join(dir, "typo-home");
    mkdirSync(h, { recursive: true, mode: 0o700 });
    writeFileSync(join(h, "config.json"), JSON.stringify({ gatway: { port: 1 }, gateway: { prot: 2 }, llm: { modle: "x" } }));
    const s = await serveJson({ SERVICE_HOME: h });
    try {
      const warnings = s.lines().map((l) => JSON.parse(l)).filter((r) => r.level === "warn").map((r) => r.msg);
      expect(warnings).toContainEqual(expect.stringContaining('unknown key "gatway" is ignored (did you mean "gateway"?)'));
      expect(warnings).toContainEqual(expect.stringContaining('unknown key "gateway.prot" is ignored (did you mean "gateway.port"?)'));
      expect(warnings).toContainEqual(expect.stringContaining('unknown key "llm.modle" is ignored (did you mean "llm.model"?)'));
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
    const doctor = await run(["doctor"], { SERVICE_HOME: h });
    expect(doctor.stdout).toMatch(/^warn\s+config\s+.*"gatway" \(did you mean "gateway"\?\)/m);
    // an unconfigured LLM is something wrong: exit 1
    expect(doctor.stdout).toMatch(/^fail\s+llm\s+no LLM configured/m);
    expect(doctor.code).toBe(1);
    const shortSecret = await run(["doctor"], { SERVICE_HOME: h, HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: "short" });
    expect(shortSecret.stdout).toMatch(/^fail\s+config\s+.*HTTP_WEBHOOK_SECRET is 5 characters long: the webhook channel needs a secret of at least 16 characters/m);
    const badCidr = await run(["doctor"], { SERVICE_HOME: h, HTTP_CALLBACK_ALLOW_HOSTS: "10.0.0.0/40" });
    expect(badCidr.stdout).toMatch(/^fail\s+config\s+.*HTTP_CALLBACK_ALLOW_HOSTS: '10\.0\.0\.0\/40' is not a CIDR/m);
    writeFileSync(join(h, "config.json"), "{ not json");
    const broken = await run(["doctor"], { SERVICE_HOME: h });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^fail\s+config\s+.*not valid JSON/m);
  });

  test("`service serve | head -1` prints the first line; serve neither dies of EPIPE nor spins", async () => {
    const h = join(dir, "pipe-home");
    const sh = spawn(["sh", "-c", `"${BIN}" serve | head -1`], { cwd: dir, env: env({ SERVICE_HOME: h }), stdout: "pipe", stderr: "pipe" });
    const reader = sh.stdout.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+|no LLM is configured/);
    // head has exited; serve's next writes hit a closed pipe. It names itself in serve.json.
    // written whole once it is there: read until it parses
    const record = await until("serve.json", () => {
      try {
        return JSON.parse(readFileSync(join(h, "serve.json"), "utf8"));
      } catch {
        return undefined;
      }
    });
    const cpu = () => readFileSync(`/proc/${record.pid}/stat`, "utf8").split(") ")[1]!.split(" ").slice(11, 13).reduce((a, b) => a + Number(b), 0);
    // make it write: a request that logs, then check it is alive, answering and idle
    await fetch(`${record.url}/health`);
    const before = cpu();
    await Bun.sleep(1_000);
    const ticks = cpu() - before;
    expect((await fetch(`${record.url}/health`)).status).toBe(200);
    expect(ticks).toBeLessThan(30); // clock ticks (1/100 s): a spinning process burns ~100 a second
    process.kill(record.pid, "SIGTERM");
    expect(await sh.exited).toBe(0);
  });
});

describe("onboarding names the binary that was installed", () => {
  test("`service` when that name runs this binary, its full path when `service` is another program (Debian's /usr/sbin/service)", async () => {
    const installed = join(dir, "installed");
    const other = join(dir, "other");
    mkdirSync(installed);
    mkdirSync(other);
    symlinkSync(BIN, join(installed, "service"));
    writeFileSync(join(other, "service"), "#!/bin/sh\necho 'not this one'\n", { mode: 0o755 });
    const onboard = (PATH: string) =>
      run(["onboard", "--non-interactive", "--force", "--skip-check", "--llm-base-url", llm.url, "--llm-model", "m"], { SERVICE_HOME: join(dir, "named-home"), PATH });
    const first = await onboard(`${other}:${installed}:/usr/bin:/bin`);
    expect(first.stdout).toContain(`Start it with: ${BIN} serve --home ${join(dir, "named-home")}`);
    const viaInstalled = spawn([join(installed, "service"), "onboard", "--non-interactive", "--force", "--skip-check", "--llm-base-url", llm.url, "--llm-model", "m"], {
      cwd: dir,
      env: env({ SERVICE_HOME: join(dir, "named-home"), PATH: `${installed}:${other}:/usr/bin:/bin` }),
      stdout: "pipe",
    });
    const out = await new Response(viaInstalled.stdout).text();
    expect(out).toContain(`Start it with: service serve --home ${join(dir, "named-home")}`);
  });
});
