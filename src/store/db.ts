import { createClient, LibsqlError, type Client } from "@libsql/client";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { migrations } from "./migrations";
import * as schema from "./schema";

/** The drizzle database; `$client` is the libSQL client under it, for SQL drizzle cannot express (FTS5, vectors). */
export type Db = LibSQLDatabase<typeof schema> & { $client: Client };

/** One statement of a transaction (`db.batch`), e.g. a channel's writes committed with a turn. */
export type StoreWrite = BatchItem<"sqlite">;

export interface Database {
  db: Db;
  client: Client;
  close(): void;
}

/** How long a statement waits for another connection's lock before it fails with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the database and brings its schema up to date. A local file gets WAL mode, a busy
 * timeout and one connection: libSQL's file driver is synchronous under the hood, so one
 * connection is the fastest, and atomic writes go through `batch` (never an open transaction).
 */
export async function openDatabase(url: string, authToken?: string, busyTimeoutMs = BUSY_TIMEOUT_MS): Promise<Database> {
  const isFile = url.startsWith("file:") || url === ":memory:";
  // `timeout` is the busy timeout of every connection the client opens, a replaced one too
  const opened = createClient({ url, authToken, concurrency: isFile ? 1 : undefined, timeout: isFile ? busyTimeoutMs : undefined });
  const tune = async (c: Client) => {
    if (isFile) {
      await c.execute("PRAGMA journal_mode = WAL");
      await c.execute("PRAGMA synchronous = NORMAL");
    }
    await c.execute("PRAGMA foreign_keys = ON");
  };
  await tune(opened);
  const client = url.startsWith("file:") ? renewedAfterFailure(opened, tune) : opened;
  await migrate(client);
  return { db: drizzle(client, { schema }), client, close: () => client.close() };
}

/** SQLite's answers that say the database cannot be used now (locked, full, read-only, gone), not that a statement is wrong. */
const UNAVAILABLE = new Set(["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_NOMEM"]);

/**
 * Why the database cannot be used, when that is what `e` (or what it wraps: drizzle's query
 * error quotes the statement and its values, so only the cause is told) comes down to:
 * `database is locked (SQLITE_BUSY)`. Undefined for any other error.
 */
export function storeUnavailable(e: unknown): string | undefined {
  for (let cause = e, depth = 0; cause && depth < 5; cause = (cause as Error).cause, depth++) {
    if (!(cause instanceof LibsqlError)) continue;
    if (UNAVAILABLE.has(cause.code) || cause.code === "CLIENT_CLOSED") return `${cause.message.replace(/^([A-Z_]+: )+/, "")} (${cause.code})`;
  }
  return undefined;
}

/**
 * The file client, with its connection replaced after the database could not be used. libSQL's
 * driver never resets a statement that failed: one that met another connection's lock
 * (SQLITE_BUSY) stays active until the garbage collector finalises it, and meanwhile SQLite
 * commits nothing on that connection ("cannot commit transaction - SQL statements in
 * progress"; a lone write seems to succeed but stays in an open transaction). Operations run
 * one at a time, so none is handed the old connection before it is replaced.
 */
function renewedAfterFailure(client: Client, tune: (c: Client) => Promise<void>): Client {
  let queue: Promise<unknown> = Promise.resolve();
  const serialised = <T>(op: () => Promise<T>): Promise<T> => {
    const run = queue.then(async () => {
      try {
        return await op();
      } catch (e) {
        if (storeUnavailable(e) && !client.closed) {
          await client.reconnect();
          await tune(client).catch(() => {});
        }
        throw e;
      }
    });
    queue = run.catch(() => {});
    return run;
  };
  return new Proxy(client, {
    get(target, prop) {
      if (prop === "execute" || prop === "batch") {
        return (...args: unknown[]) => serialised(() => (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args));
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function migrate(client: Client): Promise<void> {
  await client.execute(
    "CREATE TABLE IF NOT EXISTS __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
  );
  const applied = new Set((await client.execute("SELECT tag FROM __migrations")).rows.map((r) => String(r.tag)));
  for (const m of migrations) {
    if (applied.has(m.tag)) continue;
    const statements = m.sql
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean);
    await client.batch(
      [...statements, { sql: "INSERT INTO __migrations (tag, applied_at) VALUES (?, ?)", args: [m.tag, Date.now()] }],
      "write",
    );
  }
}

/** Whether `e` (or what it wraps) is a unique or primary key violation: the row is there already. */
export function uniqueViolation(e: unknown): boolean {
  for (let cause = e, depth = 0; cause && depth < 5; cause = (cause as Error).cause, depth++) {
    if (!(cause instanceof LibsqlError)) continue;
    const code = (cause as LibsqlError & { extendedCode?: string }).extendedCode ?? cause.code;
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || (code === "SQLITE_CONSTRAINT" && /UNIQUE|PRIMARY KEY/.test(cause.message));
  }
  return false;
}
