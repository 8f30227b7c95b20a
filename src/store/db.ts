import type { Client } from "@libsql/client";
import type { Engine, Orm } from "./engine";
import type { Broadcast } from "./broadcast";
import type * as schema from "./schema";
import { libsqlSchemaState, openLibsql } from "./libsql";

export { storeUnavailable, uniqueViolation } from "./errors";
export type { StoreWrite } from "./engine";

/**
 * The open database as the repositories use it: drizzle's query builder, its tables (`t`)
 * and its engine (what differs between SQLite and PostgreSQL). `$client` is the libSQL client under a libSQL database (tests read it).
 */
export type Db = Orm & { $client: Client; readonly t: typeof schema; readonly engine: Engine };

/** One holder at a time per key, in every process that shares the database; released when `fn` settles. */
export interface Locks {
  hold<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

/** At most `limit` events per key in any window, counted wherever the database is shared. */
export interface Limiter {
  /** Counts one event; 0 when allowed, else the seconds until one is. */
  take(key: string): Promise<number>;
}

/**
 * An open database and what the processes sharing it share through it: locks, rate limits
 * and events. A libSQL file has one process, so these stay in its memory; PostgreSQL
 * replicas share them through the server (advisory locks, a table, LISTEN/NOTIFY).
 */
export interface Database {
  db: Db;
  /** A family of locks (`thread`, `memory`…): keys of different families never meet. */
  locks(family: string): Locks;
  /** `name` keeps different limits' keys apart. */
  rateLimiter(name: string, limit: number, windowMs?: number): Limiter;
  broadcast: Broadcast;
  close(): Promise<void>;
}

/** Whether the URL names a PostgreSQL server rather than a libSQL database. */
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

/** The URL as it may be shown (in a log, an error): a PostgreSQL URL's password left out. */
export function shownUrl(url: string): string {
  if (!isPostgresUrl(url)) return url;
  try {
    const shown = new URL(url);
    if (shown.password) shown.password = "***";
    return shown.toString();
  } catch {
    return "the PostgreSQL URL";
  }
}

/** Why the database cannot be used at start, in a sentence that says what to check. */
export function cannotOpen(url: string, reason: string): string {
  const advice = isPostgresUrl(url)
    ? "Check that the PostgreSQL server is up and reachable, and the URL's user, password and database."
    : "Check that its folder is writable and its disk not full.";
  return `the database ${shownUrl(url)} cannot be opened and written: ${reason}. ${advice}`;
}

/** How far the database's schema is, read without changing anything (`service doctor`): undefined when it has none yet. */
export function schemaState(url: string, authToken?: string): Promise<{ applied: number; known: number; users: number } | undefined> {
  return isPostgresUrl(url) ? import("./postgres").then((pg) => pg.postgresSchemaState(url)) : libsqlSchemaState(url, authToken);
}

/**
 * Opens the database the URL names and brings its schema up to date: `postgres://…` a
 * PostgreSQL server (any number of replicas may share it), anything else libSQL (a
 * `file:` by default).
 */
export async function openDatabase(url: string, authToken?: string, busyTimeoutMs?: number): Promise<Database> {
  return isPostgresUrl(url) ? (await import("./postgres")).openPostgres(url) : openLibsql(url, authToken, busyTimeoutMs);
}
