// Which build runs, as the compiled binary says it: two builds of the source a commit apart
// (one adds a migration) never name themselves alike; `--version`, serve's start-up lines and
// GET /api/status give the version, the commit and the build date. The source is copied
// from this checkout (tracked and new files) into a scratch git repository of its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { listeningUrl, root, serveUntil } from "../support/binary";

const TOKEN = "build-identity-test-token-0123456789";
const checkout = Bun.spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root });
const describeIfGit = checkout.exitCode === 0 ? describe : describe.skip;
if (checkout.exitCode !== 0) console.log("build identity: not a git checkout, skipped");

let dir: string;
let src: string;

function sh(args: string[], cwd = src): string {
  const r = Bun.spawnSync(args, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
  if (r.exitCode !== 0) throw new Error(`${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

/** Builds the scratch source into `<dir>/<name>/service`; returns its path. */
function build(name: string): string {
  const out = join(dir, name, "service");
  sh([process.execPath, "run", "build.ts", "--outfile", out, "--no-sourcemap"]);
  return out;
}

const version = (bin: string) => sh([bin, "--version"], dir);

beforeAll(() => {
  if (checkout.exitCode !== 0) return;
  dir = mkdtempSync(join(tmpdir(), "build-identity-"));
  src = join(dir, "src");
  for (const file of checkout.stdout.toString().split("\0").filter(Boolean)) {
    try {
      mkdirSync(dirname(join(src, file)), { recursive: true });
      cpSync(join(root, file), join(src, file));
    } catch {
      // deleted in the working tree but not yet in the index
    }
  }
  symlinkSync(join(root, "node_modules"), join(src, "node_modules"));
  sh(["git", "init", "-q"]);
  sh(["git", "add", "-A"]);
  sh(["git", "commit", "-qm", "one"]);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describeIfGit("the binary names its build", () => {
  let first: string;
  let firstCommit: string;

  test("--version: the version, the commit built and when", () => {
    const before = Date.now();
    first = build("first");
    firstCommit = sh(["git", "rev-parse", "--short=12", "HEAD"]);
    const m = /^service (\S+) \(commit ([0-9a-f]{12}), built (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)$/.exec(version(first));
    expect(m).not.toBeNull();
    expect(m![1]).toBe(pkg.version);
    expect(m![2]).toBe(firstCommit);
    const built = Date.parse(m![3]!);
    expect(built).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(built).toBeLessThanOrEqual(Date.now());
  }, 120_000);

  test("a build a migration later does not print the same; one from a changed tree says so", () => {
    mkdirSync(join(src, "src/store/migrations"), { recursive: true });
    writeFileSync(join(src, "src/store/migrations/9999_build_identity_test.sql"), "CREATE TABLE build_identity_test (id integer);\n");
    sh(["git", "add", "-A"]);
    sh(["git", "commit", "-qm", "a migration"]);
    const second = build("second");
    const secondCommit = sh(["git", "rev-parse", "--short=12", "HEAD"]);
    expect(secondCommit).not.toBe(firstCommit);
    expect(version(second)).toContain(`commit ${secondCommit}, built `);
    expect(version(second)).not.toBe(version(first));

    writeFileSync(join(src, "README.md"), "changed, not committed\n");
    expect(version(build("dirty"))).toContain(`commit ${secondCommit}-dirty, built `);
  }, 120_000);

  test("serve's start-up lines and GET /api/status name the same build", async () => {
    const home = join(dir, "home");
    const env = { PATH: process.env.PATH ?? "", HOME: dir, SERVICE_HOME: home, SERVICE_REBORN_WEBUI_TOKEN: TOKEN, CLI_ENABLED: "false", GATEWAY_PORT: "0" };
    const said = version(first).replace(/^service /, "");
    const s = await serveUntil(["serve"], { cwd: dir, env, bin: first }, listeningUrl);
    try {
      expect(s.output()).toContain(`\n  build: ${said}\n`);
      const status = (await (await fetch(`${s.ready}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as any;
      expect(status.version).toBe(pkg.version);
      expect(status.build).toEqual({ version: pkg.version, commit: firstCommit, date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
      expect(said).toBe(`${pkg.version} (commit ${status.build.commit}, built ${status.build.date})`);
    } finally {
      s.proc.kill("SIGTERM");
      await s.proc.exited;
    }
  }, 60_000);
});
