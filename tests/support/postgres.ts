// A throwaway PostgreSQL cluster from Debian's `postgresql` package, for the tests that run
// on PostgreSQL: `initdb` and `pg_ctl` in a temporary directory, trust auth on loopback, one
// cluster per test process, and a new empty database for each caller. The cluster starts on
// first use and stops after the last test (`bun test` runs no `exit` handler: the preload
// tests/support/after-all-tests.ts stops it), or when a script using it exits. Where
// PostgreSQL is not installed, `pgInstalled` is false and the tests that need it skip with
// one line.
import { spawnSync } from "bun";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

/** Where Debian puts the server's programs: the newest installed version. */
function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

const BIN = binDir();
export const pgInstalled = BIN !== undefined;

/** Whether this process's tests run on PostgreSQL (`TEST_DATABASE=postgres`, `bun run test:pg`). */
export const onPostgres = process.env.TEST_DATABASE === "postgres";

/** Says once why a PostgreSQL test does not run here. */
export function skipWithoutPostgres(): boolean {
  if (pgInstalled) return false;
  if (!warned) console.log("PostgreSQL is not installed (Debian's `postgresql` package): its tests are skipped");
  warned = true;
  return true;
}
let warned = false;

interface Cluster {
  dir: string;
  port: number;
  admin: ReturnType<typeof postgres>;
  /** Stops the server and removes its directory. */
  stop(): void;
}
let cluster: Promise<Cluster> | undefined;
let databases = 0;

/** initdb refuses to run as root: the cluster belongs to the `postgres` user then. */
const asOwner = (cmd: string[]) => (process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function run(cmd: string[]): void {
  const r = spawnSync(asOwner(cmd), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr.toString()}${r.stdout.toString()}`);
}

async function startCluster(): Promise<Cluster> {
  if (!BIN) throw new Error("PostgreSQL is not installed");
  const dir = mkdtempSync(join(tmpdir(), "pg-test-"));
  if (process.getuid?.() === 0) {
    const ids = spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
    const gid = spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const data = join(dir, "data");
  run([join(BIN, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C"]);
  const port = await freePort();
  const options = [`-p ${port}`, `-k ${dir}`, "-c listen_addresses=127.0.0.1", "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=1000"];
  run([join(BIN, "pg_ctl"), "-D", data, "-o", options.join(" "), "-l", join(dir, "log"), "-w", "start"]);
  const stop = () => {
    spawnSync(asOwner([join(BIN, "pg_ctl"), "-D", data, "-m", "immediate", "stop"]));
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stop);
  const admin = postgres({ host: "127.0.0.1", port, user: "postgres", database: "postgres", max: 1, onnotice: () => {} });
  return { dir, port, admin, stop };
}

/** Stops this process's cluster, if it started one: its databases go with it. */
export async function stopPostgres(): Promise<void> {
  const running = cluster;
  cluster = undefined;
  byHome.clear();
  const c = await running?.catch(() => undefined);
  if (!c) return;
  await c.admin.end({ timeout: 0 }).catch(() => {});
  c.stop();
}

/** The database of a service home (TEST_DATABASE=postgres): a service started again on the home finds its data. */
const byHome = new Map<string, string>();
export async function postgresOf(home: string): Promise<string> {
  let url = byHome.get(home);
  if (!url) byHome.set(home, (url = await freshPostgres()));
  return url;
}

/** A new empty database on the process's throwaway cluster: its URL. */
export async function freshPostgres(): Promise<string> {
  cluster ??= startCluster();
  const c = await cluster;
  const name = `t${process.pid}_${++databases}`;
  await c.admin.unsafe(`CREATE DATABASE ${name}`);
  return `postgres://postgres@127.0.0.1:${c.port}/${name}`;
}
