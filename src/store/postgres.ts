// A PostgreSQL server shared by any number of `serve` replicas (`DATABASE_URL=postgres://…`).
import { drizzle } from "drizzle-orm/postgres-js";
import postgres, { type Sql } from "postgres";
import type { Database, Db } from "./db";
import { postgresEngine } from "./engine";
import { statementsOf } from "./libsql";
import { migrations } from "./migrations-pg";
import { PgBroadcast } from "./pg-broadcast";
import { pgRateLimiter } from "./pg-limiter";
import { PgLockSession } from "./pg-locks";
import * as pgSchema from "./schema-pg";
import type * as schema from "./schema";

/** Connections of a replica's pool for queries and transactions (its lock and listening connections come on top). */
const POOL_SIZE = 10;

/** `\u0000` in JSON text, not preceded by an escaped backslash. */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** The advisory lock key under which one replica at a time migrates. */
const MIGRATION_LOCK = 0x5e_71_1ce;

export async function openPostgres(url: string): Promise<Database> {
  const options = {
    onnotice: () => {},
    connection: { application_name: "service" },
    types: {
      // bigint columns hold ms timestamps and counts, well within a JS number
      int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
      // PostgreSQL's text cannot hold NUL (SQLite's can): it is dropped, so that an id with one is
      // simply not found and a message with one is stored without it, rather than a failed statement
      text: { to: 25, from: [25], serialize: (s: string) => String(s).replaceAll("\0", ""), parse: (s: string) => s },
    },
  };
  const sql = postgres(url, { ...options, max: POOL_SIZE });
  const lockConnection = postgres(url, { ...options, max: 1 });
  try {
    await migrate(sql);
  } catch (e) {
    await Promise.all([sql.end({ timeout: 1 }), lockConnection.end({ timeout: 1 })]);
    throw e;
  }
  const broadcast = new PgBroadcast(sql, (e) => console.error(`database events: ${e.message}`));
  await broadcast.start();
  const locks = new PgLockSession(lockConnection);
  // typed as the SQLite builder the repositories are written against (see engine.ts `Orm`)
  const db = Object.assign(drizzle(sql), { t: pgSchema as unknown as typeof schema, engine: postgresEngine }) as unknown as Db;
  // drizzle writes json as the text JSON.stringify made: NUL goes from it as from text (json takes
  // \u0000, but reading a field of it fails)
  sql.options.serializers[114] = (json: string) => json.replace(NUL_ESCAPE, "$1");
  return {
    db,
    locks: (family) => locks.family(family),
    rateLimiter: (name, limit, windowMs) => pgRateLimiter(sql, name, limit, windowMs),
    broadcast,
    async close() {
      await broadcast.stop();
      await locks.close();
      await sql.end({ timeout: 2 });
    },
  };
}

export async function postgresSchemaState(url: string): Promise<{ applied: number; known: number; users: number } | undefined> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const [table] = await sql`select to_regclass('__migrations') as t`;
    if (!table?.t) return undefined;
    const [applied] = await sql`select count(*)::int as n from __migrations`;
    const [users] = await sql`select count(*)::int as n from users`;
    return { applied: applied!.n, known: migrations.length, users: users!.n };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Applies the migrations not yet applied, all in one transaction under an advisory lock: once, whichever replica starts first. */
async function migrate(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists __migrations (tag text primary key, applied_at bigint not null)`;
    const applied = new Set((await tx`select tag from __migrations`).map((r) => String(r.tag)));
    for (const m of migrations) {
      if (applied.has(m.tag)) continue;
      for (const statement of statementsOf(m.sql)) await tx.unsafe(statement);
      await tx`insert into __migrations (tag, applied_at) values (${m.tag}, ${Date.now()})`;
    }
  });
}
