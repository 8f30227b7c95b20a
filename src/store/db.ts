import { createClient, type Client } from "@libsql/client";
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

/**
 * Opens the database and brings its schema up to date. A local file gets WAL mode, a busy
 * timeout and one connection: libSQL's file driver is synchronous under the hood, so one
 * connection is the fastest, and atomic writes go through `batch` (never an open transaction).
 */
export async function openDatabase(url: string, authToken?: string): Promise<Database> {
  const isFile = url.startsWith("file:") || url === ":memory:";
  const client = createClient({ url, authToken, concurrency: isFile ? 1 : undefined });
  if (isFile) {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA busy_timeout = 5000");
    await client.execute("PRAGMA synchronous = NORMAL");
  }
  await client.execute("PRAGMA foreign_keys = ON");
  await migrate(client);
  return { db: drizzle(client, { schema }), client, close: () => client.close() };
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
