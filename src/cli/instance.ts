// The running instance of a service home, as `status`, `users` and `doctor` find it. `serve`
// writes `$SERVICE_HOME/serve.json` (its pid and the address it really listens on, which a
// port of 0 or a --port flag make different from the configuration) and removes it when it
// stops; a stale file (a killed process) is recognised by its pid and a dead address.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Paths } from "../config/load";
import type { Config } from "../config/schema";

export interface RunRecord {
  pid: number;
  /** The gateway's address, or null when the gateway is off. */
  url: string | null;
  webhook_url: string | null;
  version: string;
  started_at: string;
}

/** The host to connect to for a listen address: a wildcard address is reached on loopback. */
export function connectHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

const runFile = (paths: Paths) => join(paths.home, "serve.json");

export function writeRunRecord(paths: Paths, record: RunRecord): void {
  writeFileSync(runFile(paths), JSON.stringify(record, null, 2) + "\n", { mode: 0o600 });
}

/** Removes the record if it is this process's own (a second serve of the same home may have replaced it). */
export function removeRunRecord(paths: Paths, pid = process.pid): void {
  if (readRunRecord(paths)?.pid === pid) rmSync(runFile(paths), { force: true });
}

export function readRunRecord(paths: Paths): RunRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(runFile(paths), "utf8")) as RunRecord;
    return typeof r.pid === "number" ? r : undefined;
  } catch {
    return undefined;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The gateway address the configuration names (port 0 names none). */
export function configuredUrl(config: Config): string | undefined {
  return config.gateway.port ? `http://${connectHost(config.gateway.host)}:${config.gateway.port}` : undefined;
}

/** True when a service answers GET /health at `url`. */
export async function answersHealth(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok && ((await res.json()) as { status?: string }).status === "ok";
  } catch {
    return false;
  }
}

export interface Instance {
  /** Where it answers; null when it runs with the gateway off. */
  url: string | null;
  record?: RunRecord;
}

/** The running service of this home: the one its run record names, else one at the configured address. */
export async function findInstance(paths: Paths, config: Config): Promise<Instance | undefined> {
  const record = readRunRecord(paths);
  if (record && pidAlive(record.pid)) {
    if (record.url === null) return { url: null, record };
    if (await answersHealth(record.url)) return { url: record.url, record };
  }
  const url = configuredUrl(config);
  if (url && (await answersHealth(url))) return { url };
  return undefined;
}

