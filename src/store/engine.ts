// What differs between the two databases in the SQL the repositories write: the few
// functions SQLite and PostgreSQL spell differently, and how several writes make one
// transaction. Each open database carries its engine (`db.engine`); nothing outside
// src/store/ sees it.
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Table } from "drizzle-orm";
import type { LibSQLDatabase } from "drizzle-orm/libsql";
import type * as schema from "./schema";

/**
 * The query builder the repositories are written against. It is typed as SQLite's; on
 * PostgreSQL it is drizzle's PostgreSQL database over `schema-pg.ts`, whose tables match
 * these column for column (tests/store/schemas.test.ts), so the same calls build the same
 * queries. Builder calls only SQLite has (`.get()`, `.all()`, `.run()`, `db.batch`) are not
 * used: `engine.batch` and `engine.exec` stand for them.
 */
export type Orm = LibSQLDatabase<typeof schema>;

/** One statement of a transaction. */
export type StoreWrite = BatchItem<"sqlite">;

export interface Engine {
  name: "sqlite" | "postgres";
  /**
   * Whether several processes may share the database (PostgreSQL replicas): then a running
   * job is another's until its lease runs out. A SQLite file has one process.
   */
  shared: boolean;
  /** Runs the writes `build` makes in one transaction, in order; their results in the same order. */
  batch(db: Orm, build: (q: Orm) => StoreWrite[]): Promise<unknown[]>;
  /** A statement of raw SQL, to run alone or in a batch. */
  exec(q: Orm, statement: SQL): StoreWrite;
  /** Rows of raw SQL. */
  rows<T>(q: Orm, query: SQL): Promise<T[]>;
  /** A string field of a JSON column, by its path: `data.approval.call_id`. */
  jsonText(column: SQLWrapper, ...path: string[]): SQL;
  /** Whether `haystack` holds `needle` (both as given; lower-case them first for case-insensitive). */
  contains(haystack: SQLWrapper, needle: string): SQL;
  /** What a `SELECT … LIMIT 1` that picks a row to claim ends with: lock it, skipping rows another transaction holds. */
  skipLocked(alias: string): SQL;
  /**
   * A tie-breaker after a timestamp in seconds: the order rows were inserted in (SQLite's
   * rowid), or last written in (PostgreSQL's xmin, the transaction that wrote the row).
   */
  insertionOrder(table: Table): SQL;
  /** The database's clock as the statement runs, as an ISO 8601 string in UTC with milliseconds (as `Date#toISOString`). */
  isoNow(): SQL;
}

export const sqliteEngine: Engine = {
  name: "sqlite",
  shared: false,
  batch: (db, build) => {
    const writes = build(db);
    return writes.length ? db.batch(writes as [StoreWrite, ...StoreWrite[]]) : Promise.resolve([]);
  },
  exec: (q, statement) => q.run(statement),
  rows: async <T>(q: Orm, query: SQL) => (await q.all(query)) as T[],
  jsonText: (column, ...path) => sql`json_extract(${column}, ${`$.${path.join(".")}`})`,
  contains: (haystack, needle) => sql`instr(${haystack}, ${needle}) > 0`,
  insertionOrder: (table) => sql`${table}.rowid`,
  // one connection writes: there is nobody to skip
  skipLocked: () => sql``,
  isoNow: () => sql`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
};

/** The PostgreSQL builder, seen through the SQLite-typed `Orm` (see there). */
interface PgOrm {
  transaction<T>(fn: (tx: Orm) => Promise<T>): Promise<T>;
  execute(query: SQL): Promise<unknown[]>;
}
const pg = (q: Orm) => q as unknown as PgOrm;

export const postgresEngine: Engine = {
  name: "postgres",
  shared: true,
  // the statements go out together on the transaction's connection (postgres.js pipelines
  // them, in order), rather than one round trip each
  batch: (db, build) => pg(db).transaction((tx) => Promise.all(build(tx))),
  exec: (q, statement) => pg(q).execute(statement) as unknown as StoreWrite,
  rows: async <T>(q: Orm, query: SQL) => [...(await pg(q).execute(query))] as T[],
  jsonText: (column, ...path) => sql`(${column} #>> ${`{${path.join(",")}}`})`,
  contains: (haystack, needle) => sql`strpos(${haystack}, ${needle}) > 0`,
  insertionOrder: (table) => sql`${table}.xmin::text::bigint`,
  skipLocked: (alias) => sql.raw(`FOR UPDATE OF ${alias} SKIP LOCKED`),
  isoNow: () => sql.raw(`to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`),
};
