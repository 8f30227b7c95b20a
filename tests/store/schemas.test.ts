// The two schemas are one: every table of schema.ts has its twin in schema-pg.ts with the same
// columns (name, type, null, default, key), indexes and foreign keys, and rows of the same
// shape, so that the repositories written once run on either database.
import { describe, expect, test } from "bun:test";
import { getTableConfig as pgConfig, type PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { is, SQL } from "drizzle-orm";
import * as pg from "../../src/store/schema-pg";
import * as sqlite from "../../src/store/schema";

/** Each SQLite column type and the PostgreSQL type that stands for it. */
const TYPES: Record<string, string> = {
  SQLiteText: "PgText",
  SQLiteInteger: "PgBigInt53",
  SQLiteBoolean: "PgBoolean",
  SQLiteTextJson: "PgJson",
};

// rows read from either database have the same TypeScript type, table by table (a mismatch fails `bun run typecheck`)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Tables = keyof typeof sqlite & keyof typeof pg;
const sameRows: { [K in Tables]: Same<(typeof sqlite)[K]["$inferSelect"], (typeof pg)[K]["$inferSelect"]> & Same<(typeof sqlite)[K]["$inferInsert"], (typeof pg)[K]["$inferInsert"]> } = {
  users: true,
  tokens: true,
  threads: true,
  responses: true,
  items: true,
  gates: true,
  toolPolicies: true,
  jobs: true,
  routines: true,
  routineRuns: true,
  turnUsage: true,
  rateEvents: true,
  memoryDocuments: true,
  agentFiles: true,
  egressLog: true,
  memoryChunks: true,
  memoryOwners: true,
  extensionCredentials: true,
  oauthStates: true,
  ssoSessions: true,
  ssoIdentities: true,
  branchItems: true,
  forks: true,
};

const defaultOf = (d: unknown) => (is(d, SQL) ? "sql" : d);

function describeSqlite(t: SQLiteTable) {
  const c = sqliteConfig(t);
  return {
    name: c.name,
    columns: c.columns.map((col) => ({
      name: col.name,
      type: TYPES[col.columnType] ?? `unmapped ${col.columnType}`,
      notNull: col.notNull,
      primary: col.primary,
      default: defaultOf(col.default),
      enum: col.enumValues ?? null,
      generated: col.name === "id" || col.name === "seq" ? (col as unknown as { autoIncrement?: boolean }).autoIncrement === true : false,
    })),
    primaryKeys: c.primaryKeys.map((k) => k.columns.map((col) => col.name)),
    indexes: c.indexes.map((i) => ({ name: i.config.name, unique: i.config.unique, on: i.config.columns.map((col) => (col as { name: string }).name) })).sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: c.foreignKeys.map((f) => {
      const r = f.reference();
      return { columns: r.columns.map((col) => col.name), table: sqliteConfig(r.foreignTable).name, to: r.foreignColumns.map((col) => col.name), onDelete: f.onDelete ?? null };
    }),
  };
}

function describePg(t: PgTable) {
  const c = pgConfig(t);
  return {
    name: c.name,
    columns: c.columns.map((col) => ({
      name: col.name,
      type: col.columnType,
      notNull: col.notNull,
      primary: col.primary,
      default: defaultOf(col.default),
      enum: col.enumValues?.length ? col.enumValues : null,
      generated: col.generatedIdentity !== undefined,
    })),
    primaryKeys: c.primaryKeys.map((k) => k.columns.map((col) => col.name)),
    indexes: c.indexes.map((i) => ({ name: i.config.name!, unique: i.config.unique, on: i.config.columns.map((col) => (col as { name: string }).name) })).sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: c.foreignKeys.map((f) => {
      const r = f.reference();
      return { columns: r.columns.map((col) => col.name), table: pgConfig(r.foreignTable).name, to: r.foreignColumns.map((col) => col.name), onDelete: f.onDelete ?? null };
    }),
  };
}

describe("the SQLite and PostgreSQL schemas", () => {
  test("name the same tables", () => {
    expect(Object.keys(pg).sort()).toEqual(Object.keys(sqlite).sort());
    expect(Object.keys(sameRows).sort()).toEqual(Object.keys(sqlite).sort());
  });

  const pgTables: Record<string, unknown> = { ...pg };
  for (const [name, table] of Object.entries(sqlite)) {
    test(`${name}: the same columns, keys, indexes and foreign keys`, () => {
      const a = describeSqlite(table as SQLiteTable);
      const b = describePg(pgTables[name] as PgTable);
      expect(b).toEqual(a);
      expect(a.columns.every((c) => !c.type.startsWith("unmapped"))).toBe(true);
    });
  }
});
