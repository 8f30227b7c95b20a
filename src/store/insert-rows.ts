import { getTableColumns, getTableName, is, Param, SQL, StringChunk, type Column, type Table } from "drizzle-orm";
import type { Engine, Orm, StoreWrite } from "./engine";

/**
 * An insert of many rows as one statement of flat SQL: the same statement drizzle's insert
 * builder writes (its columns, its encoders, its defaults for a value left out), made with a
 * fraction of the work. The builder spent about a microsecond a value, most of a turn's
 * commit outside SQLite (docs/performance.md). For the tables a turn writes: a column's
 * default must be a plain value, not SQL.
 */
export function insertRows(q: Orm, engine: Engine, table: Table, rows: Record<string, unknown>[]): StoreWrite {
  const { head, columns } = shapeOf(table);
  const chunks: (StringChunk | Param)[] = [head];
  for (const [r, row] of rows.entries()) {
    chunks.push(r ? NEXT_ROW : FIRST_ROW);
    for (const [c, [key, column]] of columns.entries()) {
      if (c) chunks.push(COMMA);
      const value = row[key];
      chunks.push(new Param(value === undefined ? defaultOf(column) : value, column));
    }
    chunks.push(END_ROW);
  }
  return engine.exec(q, new SQL(chunks));
}

const FIRST_ROW = new StringChunk("(");
const NEXT_ROW = new StringChunk(", (");
const COMMA = new StringChunk(", ");
const END_ROW = new StringChunk(")");

const shapes = new WeakMap<Table, { head: StringChunk; columns: [string, Column][] }>();

function shapeOf(table: Table) {
  let shape = shapes.get(table);
  if (!shape) {
    const columns = Object.entries(getTableColumns(table)).filter(([, c]) => !(c as { shouldDisableInsert?: () => boolean }).shouldDisableInsert?.()) as [string, Column][];
    for (const [, c] of columns) if (is(c.default, SQL)) throw new Error(`insertRows: ${getTableName(table)}.${c.name} has an SQL default`);
    const names = columns.map(([, c]) => `"${c.name}"`).join(", ");
    shape = { head: new StringChunk(`insert into "${getTableName(table)}" (${names}) values `), columns };
    shapes.set(table, shape);
  }
  return shape;
}

/** What drizzle's builder writes for a value left out: the column's default, its default function's, or null. */
function defaultOf(c: Column): unknown {
  if (c.default !== undefined && c.default !== null) return c.default;
  if (c.defaultFn) return c.defaultFn();
  if (c.onUpdateFn) return c.onUpdateFn();
  return null;
}
