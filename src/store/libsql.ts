// The default store: a libSQL file (or a remote libSQL server), one process.
import { createClient, type Client } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { KeyedLock } from "../keyed-lock";
import { RateLimiter } from "../rate-limit";
import type { Database, Db } from "./db";
import { sqliteEngine } from "./engine";
import { localBroadcast } from "./broadcast";
import { migrations } from "./migrations";
import * as schema from "./schema";
import { storeUnavailable } from "./errors";
import { keepPreparedStatements } from "./libsql-statements";
import { AUTOCHECKPOINT_PAGES, quietCheckpoints, type Checkpoints } from "./libsql-checkpoints";

/** How long a statement waits for another connection's lock before it fails with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the database and brings its schema up to date. A local file gets WAL mode, a busy
 * timeout and one connection: libSQL's file driver is synchronous under the hood, so one
 * connection is the fastest, and atomic writes go through `batch` (never an open transaction).
 * One process uses it: locks, rate limits and events stay in that process's memory.
 */
/** A libSQL database, with its client (tests read it). */
export type LibsqlDatabase = Database & { client: Client };

export async function openLibsql(url: string, authToken?: string, busyTimeoutMs = BUSY_TIMEOUT_MS): Promise<LibsqlDatabase> {
  const isFile = url.startsWith("file:") || url === ":memory:";
  if (isFile) keepPreparedStatements();
  // `timeout` is the busy timeout of every connection the client opens, a replaced one too
  const opened = createClient({ url, authToken, concurrency: isFile ? 1 : undefined, timeout: isFile ? busyTimeoutMs : undefined });
  const tune = async (c: Client) => {
    if (isFile) {
      await c.execute("PRAGMA journal_mode = WAL");
      await c.execute("PRAGMA synchronous = NORMAL");
      await c.execute(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    }
    await c.execute("PRAGMA foreign_keys = ON");
  };
  await tune(opened);
  const checkpoints = url.startsWith("file:") ? quietCheckpoints(opened) : undefined;
  const client = url.startsWith("file:") ? renewedAfterFailure(opened, tune, checkpoints) : opened;
  await migrate(client);
  const db: Db = Object.assign(drizzle(client, { schema }), { t: schema, engine: sqliteEngine });
  return {
    db,
    client,
    locks: () => new KeyedLock(),
    rateLimiter: (_name, limit, windowMs) => {
      const limiter = new RateLimiter(limit, windowMs);
      return { take: async (key) => limiter.take(key) };
    },
    broadcast: localBroadcast,
    close: async () => (checkpoints?.stop(), client.close()),
  };
}

/**
 * The file client, with its connection replaced after the database could not be used. libSQL's
 * driver never resets a statement that failed: one that met another connection's lock
 * (SQLITE_BUSY) stays active until the garbage collector finalises it, and meanwhile SQLite
 * commits nothing on that connection ("cannot commit transaction - SQL statements in
 * progress"; a lone write seems to succeed but stays in an open transaction). Operations run
 * one at a time, so none is handed the old connection before it is replaced.
 */
function renewedAfterFailure(client: Client, tune: (c: Client) => Promise<void>, checkpoints?: Checkpoints): Client {
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
        checkpoints?.used();
        return (...args: unknown[]) => serialised(() => (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args));
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

export async function libsqlSchemaState(url: string, authToken?: string): Promise<{ applied: number; known: number; users: number } | undefined> {
  const client = createClient({ url, authToken });
  try {
    const tables = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__migrations'");
    if (!tables.rows.length) return undefined;
    const applied = Number((await client.execute("SELECT count(*) AS n FROM __migrations")).rows[0]!.n);
    const users = Number((await client.execute("SELECT count(*) AS n FROM users")).rows[0]!.n);
    return { applied, known: migrations.length, users };
  } finally {
    client.close();
  }
}

async function migrate(client: Client): Promise<void> {
  await client.execute(
    "CREATE TABLE IF NOT EXISTS __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
  );
  const applied = new Set((await client.execute("SELECT tag FROM __migrations")).rows.map((r) => String(r.tag)));
  for (const m of migrations) {
    if (applied.has(m.tag)) continue;
    await client.batch(
      [...statementsOf(m.sql), { sql: "INSERT INTO __migrations (tag, applied_at) VALUES (?, ?)", args: [m.tag, Date.now()] }],
      "write",
    );
  }
}

/** A drizzle-kit migration's statements. */
export const statementsOf = (migration: string) =>
  migration
    .split("--> statement-breakpoint")
    .map((s) => s.trim())
    .filter(Boolean);
