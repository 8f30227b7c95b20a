// The `service` command line, run as a real process: help and version, usage errors,
// onboarding (files, modes, idempotence, --force, a dead endpoint) and `serve`.
import { afterAll, beforeAll, describe, expect, test as bunTest } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import pkg from "../../package.json" with { type: "json" };
import { startScriptedLLM, type ScriptedLLM } from "../support/scripted-llm";
import { canMountTmpfs, mountTmpfs, type Tmpfs } from "../support/tmpfs";

/** Every test spawns real processes; on a loaded 2-core machine a cold start can take a while. */
const test = (name: string, fn: () => Promise<void>) => bunTest(name, fn, 30_000);

const CWD = join(import.meta.dir, "..", "..");
const MAIN = "src/main.ts";

let root: string;
let llm: ScriptedLLM;
let closedPort: number;
const running = new Set<Subprocess>();
let n = 0;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "cli-test-"));
  llm = await startScriptedLLM();
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  closedPort = s.port!;
  await s.stop(true);
});

afterAll(async () => {
  for (const p of running) {
    p.kill("SIGKILL");
    await p.exited;
  }
  await llm.close();
  rmSync(root, { recursive: true, force: true });
});

/** A service home path that does not exist yet. */
const newHome = () => join(root, `home-${++n}`);

/** A clean environment: nothing of the test runner's LLM or service settings leaks in. */
function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: root,
    TMPDIR: tmpdir(),
    NO_COLOR: "1",
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

function spawn(args: string[], env: Record<string, string | undefined> = {}) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    cwd: CWD,
    env: cleanEnv(env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  return proc;
}

/** Runs the CLI to the end. */
async function run(args: string[], env: Record<string, string | undefined> = {}) {
  const proc = spawn(args, env);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Reads a stream into a growing string and lets callers wait for a pattern in it. */
function watch(stream: ReadableStream<Uint8Array>, exited: Promise<number>) {
  let text = "";
  const waiters: (() => void)[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      for (const w of waiters.splice(0)) w();
    }
    for (const w of waiters.splice(0)) w();
  })();
  return {
    get text() {
      return text;
    },
    done,
    /** Resolves with the match once `re` appears; rejects if the process exits first or after a generous deadline. */
    async waitFor(re: RegExp, deadlineMs = 20_000): Promise<RegExpMatchArray> {
      const deadline = Date.now() + deadlineMs;
      let exitedEarly = false;
      void exited.then(() => {
        exitedEarly = true;
        for (const w of waiters.splice(0)) w();
      });
      for (;;) {
        const m = text.match(re);
        if (m) return m;
        if (exitedEarly) {
          await done;
          const m2 = text.match(re);
          if (m2) return m2;
          throw new Error(`process exited before ${re} appeared; output:\n${text}`);
        }
        if (Date.now() > deadline) throw new Error(`${re} did not appear within ${deadlineMs} ms; output:\n${text}`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        });
        clearTimeout(timer);
      }
    },
  };
}

/** Starts `serve` and waits for its "listening on" line. */
async function startServe(env: Record<string, string | undefined>, args: string[] = []) {
  const proc = spawn(["serve", ...args], { GATEWAY_HOST: "127.0.0.1", GATEWAY_PORT: "0", ...env });
  const out = watch(proc.stdout as ReadableStream<Uint8Array>, proc.exited);
  const err = watch(proc.stderr as ReadableStream<Uint8Array>, proc.exited);
  let url: string;
  try {
    url = (await out.waitFor(/listening on (http:\/\/\S+)/))[1]!;
  } catch (e) {
    await err.done.catch(() => {});
    throw new Error(`${(e as Error).message}\nstderr:\n${err.text}`);
  }
  return { proc, out, err, url };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe("help, version and usage errors", () => {
  test("--help, -h, help and no arguments print the usage and exit 0", async () => {
    for (const r of await Promise.all([["--help"], ["-h"], ["help"], []].map((args) => run(args)))) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage:");
      expect(r.stdout).toContain("service onboard");
      expect(r.stdout).toContain("service serve");
      expect(r.stderr).toBe("");
    }
  });

  test("--version from source prints the package version, the checkout's commit, and that it is no build", async () => {
    const r = await run(["--version"]);
    expect(r.code).toBe(0);
    const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: CWD }).stdout.toString().trim();
    expect(r.stdout.trim()).toMatch(new RegExp(`^service ${pkg.version.replace(/\./g, "\\.")} \\(commit ${head || "unknown"}(-dirty)?, running from source\\)$`));
  });

  test("every command answers --help with exit 0 and touches nothing", async () => {
    const home = newHome();
    const cases = [
      ["onboard", "--help", "Usage: service onboard"],
      ["onboard", "-h", "Usage: service onboard"],
      ["serve", "--help", "Usage: service serve"],
      ["serve", "-h", "Usage: service serve"],
      ["status", "--help", "Usage: service status"],
      ["doctor", "--help", "Usage: service doctor"],
      ["users", "--help", "Usage: service users"],
      ["users list", "--help", "Usage: service users"],
    ];
    const results = await Promise.all(cases.map(([cmd, flag]) => run([...cmd!.split(" "), flag!], { SERVICE_HOME: home })));
    for (const [i, r] of results.entries()) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(cases[i]![2]!);
      expect(r.stdout).toContain("--help");
    }
    expect(existsSync(home)).toBe(false);
  });

  test("an unknown command or top-level flag prints usage on stderr and exits 2", async () => {
    const all = [["frobnicate"], ["--bogus"], ["-x"]];
    const results = await Promise.all(all.map((args) => run(args)));
    for (const [i, r] of results.entries()) {
      const args = all[i]!;
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(args[0]!);
      expect(r.stderr).toContain("Usage:");
      expect(r.stdout).toBe("");
    }
  });

  test("an unknown or malformed flag of a command prints that command's usage on stderr and exits 2", async () => {
    const home = newHome();
    const cases: [string[], string][] = [
      [["serve", "--bogus"], "Usage: service serve"],
      [["serve", "--port", "abc"], "Usage: service serve"],
      [["serve", "--revision", "Z"], "Usage: service serve"],
      [["serve", "extra-positional"], "Usage: service serve"],
      [["onboard", "--bogus"], "Usage: service onboard"],
      [["onboard", "--llm-model"], "Usage: service onboard"],
      [["status", "--bogus"], "Usage: service status"],
      [["doctor", "extra"], "Usage: service doctor"],
      [["users"], "Usage: service users"],
      [["users", "frobnicate"], "Usage: service users"],
      [["users", "suspend"], "Usage: service users"],
      [["users", "list", "extra"], "Usage: service users"],
      [["users", "create", "--role", "root"], "Usage: service users"],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args, { SERVICE_HOME: home })));
    for (const [i, r] of results.entries()) {
      const [args, heading] = cases[i]!;
      if (r.code !== 2) throw new Error(`${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
      expect(r.stderr).toContain(heading);
      expect(r.stdout).toBe("");
    }
    expect(existsSync(home)).toBe(false);
  });
});

describe("onboard --non-interactive", () => {
  let home = "";
  let firstToken = "";
  beforeAll(() => {
    home = newHome();
  });

  const onboard = (extra: string[] = [], model = "m") =>
    run(["onboard", "--non-interactive", "--llm-base-url", llm.url, "--llm-api-key", "k", "--llm-model", model, ...extra], {
      SERVICE_HOME: home,
    });

  test("writes config.json and webui-token (0600) in a 0700 home and prints the login URL", async () => {
    const r = await onboard();
    if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(mode(home)).toBe(0o700);

    const config = join(home, "config.json");
    expect(mode(config)).toBe(0o600);
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ llm: { baseUrl: llm.url, apiKey: "k", model: "m" } });

    const tokenFile = join(home, "webui-token");
    expect(mode(tokenFile)).toBe(0o600);
    firstToken = readFileSync(tokenFile, "utf8").trim();
    expect(firstToken).toMatch(/^[0-9a-f]{64,}$/);

    expect(r.stdout).toMatch(new RegExp(`https?://\\S+/login\\?token=${firstToken}`));
    // the endpoint was really checked
    expect(llm.requests.some((q) => q.method === "GET" && q.path === "/v1/models")).toBe(true);
  });

  test("a second run with the same flags changes nothing and says so", async () => {
    const files = ["config.json", "webui-token"].map((f) => join(home, f));
    const before = files.map((f) => ({ data: readFileSync(f, "utf8"), mtime: statSync(f).mtimeMs }));
    const r = await onboard();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("nothing changed");
    expect(files.map((f) => ({ data: readFileSync(f, "utf8"), mtime: statSync(f).mtimeMs }))).toEqual(before);
  });

  test("a second run with other flags applies them to config.json, says what changed, keeps the token", async () => {
    const token = readFileSync(join(home, "webui-token"), "utf8");
    const r = await run(["onboard", "--non-interactive", "--llm-model", "other-model", "--llm-api-key", "new-key"], { SERVICE_HOME: home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("llm.model: m → other-model");
    expect(r.stdout).toContain("llm.apiKey: changed");
    expect(r.stdout).not.toContain("new-key");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8"))).toEqual({ llm: { baseUrl: llm.url, apiKey: "new-key", model: "other-model" } });
    expect(mode(join(home, "config.json"))).toBe(0o600);
    expect(readFileSync(join(home, "webui-token"), "utf8")).toBe(token);
    // a dead endpoint is refused as on the first run, and config.json stays as it was
    const before = readFileSync(join(home, "config.json"), "utf8");
    const dead = await run(["onboard", "--non-interactive", "--llm-base-url", `http://127.0.0.1:${closedPort}/v1`], { SERVICE_HOME: home });
    expect(dead.code).toBe(1);
    expect(readFileSync(join(home, "config.json"), "utf8")).toBe(before);
    // without flags: nothing to apply
    const bare = await run(["onboard", "--non-interactive"], { SERVICE_HOME: home });
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain("Already onboarded");
    expect(readFileSync(join(home, "config.json"), "utf8")).toBe(before);
  });

  test("--force redoes it and keeps the token", async () => {
    const r = await onboard(["--force"], "m2");
    if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).llm).toEqual({ baseUrl: llm.url, apiKey: "k", model: "m2" });
    expect(readFileSync(join(home, "webui-token"), "utf8").trim()).toBe(firstToken);
    expect(mode(join(home, "config.json"))).toBe(0o600);
    expect(mode(join(home, "webui-token"))).toBe(0o600);
    expect(r.stdout).toContain(`/login?token=${firstToken}`);
  });

  test("--force with a dead endpoint fails with exit 1 and leaves the old files alone", async () => {
    const before = readFileSync(join(home, "config.json"), "utf8");
    const dead = `http://127.0.0.1:${closedPort}/v1`;
    const r = await run(["onboard", "--non-interactive", "--force", "--llm-base-url", dead, "--llm-model", "x"], { SERVICE_HOME: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(dead);
    expect(readFileSync(join(home, "config.json"), "utf8")).toBe(before);
    expect(readFileSync(join(home, "webui-token"), "utf8").trim()).toBe(firstToken);
  });

  test("serve on the onboarded home uses its token file and config, and SIGINT stops it", async () => {
    const s = await startServe({ SERVICE_HOME: home });
    try {
      await s.out.waitFor(/instance token: from .*webui-token/);
      // where the web UI is, and the login link for the token read from the home (issue 13)
      expect(s.out.text).toContain(`open the web UI at ${s.url}/`);
      expect(s.out.text).toContain(`sign in with: ${s.url}/login?token=${firstToken}`);
      expect(s.out.text).toContain("m2");
      const status = await fetch(`${s.url}/api/status`, { headers: { authorization: `Bearer ${firstToken}` } });
      expect(status.status).toBe(200);
      expect(((await status.json()) as any).llm).toMatchObject({ configured: true, model: "m2" });
    } finally {
      s.proc.kill("SIGINT");
    }
    expect(await s.proc.exited).toBe(0);
  });
});

describe("onboard from the environment", () => {
  test("LLM_BASE_URL, LLM_API_KEY and LLM_MODEL stand in for the flags", async () => {
    const home = newHome();
    const r = await run(["onboard", "--non-interactive"], { SERVICE_HOME: home, LLM_BASE_URL: llm.url, LLM_API_KEY: "ek", LLM_MODEL: "em" });
    if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).llm).toEqual({ baseUrl: llm.url, apiKey: "ek", model: "em" });
    expect(readFileSync(join(home, "webui-token"), "utf8").trim()).toMatch(/^[0-9a-f]{64,}$/);
  });
});

describe("onboard: the webhook channel, and how to start it", () => {
  test("--webhook turns the channel on with a secret made for it; the closing lines say how to start this very program", async () => {
    const home = newHome();
    const r = await run(["onboard", "--non-interactive", "--skip-check", "--llm-base-url", llm.url, "--llm-model", "m", "--webhook"], { SERVICE_HOME: home });
    if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    const http = JSON.parse(readFileSync(join(home, "config.json"), "utf8")).http;
    expect(http).toEqual({ enabled: true, host: "0.0.0.0", webhookSecret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(r.stdout).toContain(`Webhook channel: http://127.0.0.1:8080/webhook, header X-Webhook-Secret: ${http.webhookSecret}`);
    expect(r.stdout).toMatch(/Note: the webhook channel listens on all interfaces \(0\.0\.0\.0:8080\)/);
    // from source: bun and the entry file, with the home it was given; never Debian's `service serve`
    expect(r.stdout).toContain(`Start it with: bun ${join(CWD, MAIN)} serve --home ${home}`);
    expect(r.stdout).not.toMatch(/Start it with: service serve/);

    // again on the onboarded home: the secret stays; a host is applied and said
    const again = await run(["onboard", "--non-interactive", "--webhook-host", "127.0.0.1"], { SERVICE_HOME: home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("http.host: 0.0.0.0 → 127.0.0.1");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).http).toEqual({ ...http, host: "127.0.0.1" });
  });

  test("without --webhook the channel stays off, and onboarding says so", async () => {
    const home = newHome();
    const r = await run(["onboard", "--non-interactive", "--skip-check", "--llm-base-url", llm.url, "--llm-model", "m"], { SERVICE_HOME: home });
    expect(r.stdout).toContain("Webhook channel: off");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).http).toBeUndefined();
  });

  test("serve and doctor say when the webhook channel listens on all interfaces, and not when it keeps to loopback", async () => {
    const secret = "0123456789abcdef0123";
    for (const host of ["0.0.0.0", "127.0.0.1"]) {
      const home = newHome();
      const env = { SERVICE_HOME: home, HTTP_ENABLED: "true", HTTP_WEBHOOK_SECRET: secret, HTTP_HOST: host, HTTP_PORT: "0", CLI_ENABLED: "false" };
      const s = await startServe(env);
      try {
        await s.out.waitFor(/instance token/);
        if (host === "0.0.0.0") expect(s.out.text).toMatch(/note: the webhook channel listens on all interfaces \(0\.0\.0\.0:0\)/);
        else expect(s.out.text).not.toContain("all interfaces");
      } finally {
        s.proc.kill("SIGTERM");
      }
      expect(await s.proc.exited).toBe(0);
      const doctor = await run(["doctor"], env);
      if (host === "0.0.0.0") expect(doctor.stdout).toMatch(/^warn\s+webhook host\s+the webhook channel listens on all interfaces/m);
      else expect(doctor.stdout).not.toContain("webhook host");
    }
  });
});

describe("onboard with a wrong endpoint", () => {
  test("exit 1 with a clear message; nothing is written", async () => {
    const home = newHome();
    const dead = `http://127.0.0.1:${closedPort}/v1`;
    const r = await run(["onboard", "--non-interactive", "--llm-base-url", dead, "--llm-api-key", "k", "--llm-model", "m"], {
      SERVICE_HOME: home,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(dead);
    expect(r.stderr).toMatch(/did not answer|unreachable|connect/i);
    expect(r.stderr).not.toContain("    at "); // a message, not a stack trace
    expect(existsSync(join(home, "config.json"))).toBe(false);
    expect(existsSync(join(home, "webui-token"))).toBe(false);
  });
});

describe("serve", () => {
  test("on a never-onboarded home: starts, /health 200, prints the generated token, SIGTERM exits 0", async () => {
    const home = newHome();
    const s = await startServe({ SERVICE_HOME: home, CLI_ENABLED: "true" });
    let stopped = false;
    try {
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(Number(new URL(s.url).port)).toBeGreaterThan(0);
      const token = (await s.out.waitFor(/generated for this run, not saved\): ([0-9a-f]{64})/))[1]!;

      const health = await fetch(`${s.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });

      // the printed token is the instance token
      const status = await fetch(`${s.url}/api/status`, { headers: { authorization: `Bearer ${token}` } });
      expect(status.status).toBe(200);
      const body = (await status.json()) as any;
      expect(body.llm.configured).toBe(false);
      expect((await fetch(`${s.url}/api/status`)).status).toBe(401);

      // no LLM: the service still runs and a turn fails, naming what to set
      const turn = await fetch(`${s.url}/api/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "hi" }),
      });
      expect(turn.status).toBe(200);
      const failed = (await turn.json()) as any;
      expect(failed.status).toBe("failed");
      expect(failed.error.code).toBe("llm_not_configured");
      expect(failed.error.message).toContain("LLM_BASE_URL");

      // created what it needs, but never persisted the generated token
      expect(mode(home)).toBe(0o700);
      expect(existsSync(join(home, "webui-token"))).toBe(false);

      const signalled = performance.now();
      s.proc.kill("SIGTERM");
      stopped = true;
      expect(await s.proc.exited).toBe(0);
      // idle: nothing to wait for, so no lingering grace period (it is 5 s when turns are running)
      expect(performance.now() - signalled).toBeLessThan(4_000);
      await s.out.done;
      expect(s.out.text).toContain("stopped");
      await expect(fetch(`${s.url}/health`)).rejects.toThrow();
    } finally {
      if (!stopped) s.proc.kill("SIGKILL");
    }
  });

  test("SIGTERM the moment the first line is out stops it cleanly (exit 0), not by the signal's default", async () => {
    for (let i = 0; i < 3; i++) {
      const proc = spawn(["serve"], { SERVICE_HOME: newHome(), GATEWAY_PORT: "0" });
      await watch(proc.stdout as ReadableStream<Uint8Array>, proc.exited).waitFor(/listening on/);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
  });

  test("--port and --host flags win over the environment", async () => {
    const s = await startServe({ SERVICE_HOME: newHome(), GATEWAY_PORT: "1" }, ["--port", "0", "--host", "127.0.0.1"]);
    try {
      expect(Number(new URL(s.url).port)).toBeGreaterThan(1);
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
    } finally {
      s.proc.kill("SIGTERM");
    }
    expect(await s.proc.exited).toBe(0);
  });

  test("HTTP_ENABLED=true without HTTP_WEBHOOK_SECRET exits 78 (EX_CONFIG) and says why", async () => {
    const r = await run(["serve"], { SERVICE_HOME: newHome(), GATEWAY_PORT: "0", HTTP_ENABLED: "true" });
    expect(r.code).toBe(78); // EX_CONFIG: the systemd unit does not restart on it
    expect(r.stderr).toContain("HTTP_WEBHOOK_SECRET");
    expect(r.stdout).not.toContain("listening on");
  });

  test("a config.json section of the wrong type exits 78 (EX_CONFIG) naming it", async () => {
    const home = newHome();
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "config.json"), '{"gateway": "x"}');
    const r = await run(["serve"], { SERVICE_HOME: home, GATEWAY_PORT: "0" });
    expect(r.code).toBe(78); // EX_CONFIG: the systemd unit does not restart on it
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining("gateway")]);
    expect(r.stdout).not.toContain("listening on");
  });

  bunTest.skipIf(!canMountTmpfs("serve on a read-only home"))("on a home it cannot write (a read-only file system): one line, exit 1, no stack", async () => {
    const readOnly = mountTmpfs("4m");
    try {
      await readOnlyHome(readOnly);
    } finally {
      readOnly.unmount();
    }
  }, 30_000);

  /** A home served once, and a home still to be made, on a file system turned read-only. */
  async function readOnlyHome(readOnly: Tmpfs) {
    const served = join(readOnly.dir, "home");
    const s = await startServe({ SERVICE_HOME: served });
    s.proc.kill("SIGTERM");
    expect(await s.proc.exited).toBe(0);
    readOnly.remount("ro");
    for (const home of [served, join(readOnly.dir, "new")]) {
      const r = await run(["serve"], { SERVICE_HOME: home, GATEWAY_PORT: "0", CLI_ENABLED: "false" });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining(`the service home ${home} cannot be written (EROFS)`)]);
      expect(r.stdout).not.toContain("listening on");
    }
    // a database elsewhere (DATABASE_URL) that cannot be opened for writing says so too
    const r = await run(["serve"], { SERVICE_HOME: newHome(), DATABASE_URL: `file:${join(served, "service.db")}`, GATEWAY_PORT: "0", CLI_ENABLED: "false" });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/the database file:.* cannot be opened and written: .*\(SQLITE_(CANTOPEN|READONLY)\)/)]);
  }

  test("invalid configuration exits 78 (EX_CONFIG) naming the problem", async () => {
    const r = await run(["serve"], { SERVICE_HOME: newHome(), GATEWAY_PORT: "abc" });
    expect(r.code).toBe(78); // EX_CONFIG: the systemd unit does not restart on it
    expect(r.stderr).toContain("GATEWAY_PORT");
    expect(r.stderr).not.toContain("    at ");
    expect(r.stdout).not.toContain("listening on");
  });
});
