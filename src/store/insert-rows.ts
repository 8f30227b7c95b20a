import { getTableColumns, getTableName, is, SQL, type BuildQueryConfig, type Column, type QueryWithTypings, type Table } from "drizzle-orm";
import type { Engine, Orm, StoreWrite } from "./engine";

/**
 * An insert of many rows as one statement of flat SQL: the same statement drizzle's insert
 * builder writes (its columns, its encoders, its defaults for a value left out), made with a
 * fraction of the work. The builder, and drizzle's SQL template after it, spent about a
 * microsecond a value (a tenth of a turn's CPU under load: docs/performance.md); here the
 * statement's text is the table's once and its values go to the driver as they are encoded.
 * For the tables a turn writes: a column's default must be a plain value, not SQL; a key the
 * database assigns (an identity column, an autoincrementing integer) is left to it. No rows,
 * no statement.
 */
export function insertRows(q: Orm, engine: Engine, table: Table, rows: Record<string, unknown>[]): StoreWrite[] {
  const shape = shapeOf(table);
  const perStatement = Math.floor(MAX_PARAMETERS / shape.columns.length);
  const writes: StoreWrite[] = [];
  for (let i = 0; i < rows.length; i += perStatement) writes.push(engine.exec(q, new RowsStatement(shape, valuesOf(table, shape, rows.slice(i, i + perStatement)))));
  return writes;
}

/** SQLite's most parameters in one statement (PostgreSQL takes more): more rows make more statements. */
const MAX_PARAMETERS = 32_766;

/** The rows' values, column by column, as the driver takes them. */
function valuesOf(table: Table, shape: Shape, rows: Record<string, unknown>[]): unknown[] {
  const params: unknown[] = [];
  for (const row of rows) {
    for (const key of shape.assigned) if (row[key] !== undefined) throw new Error(`insertRows: ${getTableName(table)}.${key} is assigned by the database`);
    for (const [key, column] of shape.columns) {
      const value = row[key] === undefined ? defaultOf(column) : row[key];
      const encoded = value === null ? null : column.mapToDriverValue(value);
      if (encoded instanceof SQL) throw new Error(`insertRows: ${getTableName(table)}.${column.name} encodes its value as SQL`);
      params.push(encoded);
    }
  }
  return params;
}

interface Shape {
  head: string;
  columns: [string, Column][];
  /** The keys of the columns the database assigns (left out). */
  assigned: string[];
}

/** The insert as drizzle's dialects ask for it: each value's placeholder is theirs (`?` in SQLite, `$n` in PostgreSQL). */
class RowsStatement extends SQL {
  constructor(
    private readonly shape: Shape,
    private readonly params: unknown[],
  ) {
    super([]);
  }

  override toQuery({ escapeParam, prepareTyping }: BuildQueryConfig): QueryWithTypings {
    const width = this.shape.columns.length;
    const columnTypings = prepareTyping && this.shape.columns.map(([, c]) => prepareTyping(c));
    const typings: QueryWithTypings["typings"] = columnTypings ? [] : undefined;
    let sql = this.shape.head;
    for (let i = 0; i < this.params.length; i++) {
      const column = i % width;
      sql += column ? ", " : i ? "), (" : "(";
      sql += escapeParam(i, this.params[i]);
      typings?.push(columnTypings![column]!);
    }
    return { sql: `${sql})`, params: this.params, ...(typings ? { typings } : {}) };
  }
}

const shapes = new WeakMap<Table, Shape>();

function shapeOf(table: Table): Shape {
  let shape = shapes.get(table);
  if (!shape) {
    const all = Object.entries(getTableColumns(table)) as [string, Column][];
    const columns = all.filter(([, c]) => !(c as { shouldDisableInsert?: () => boolean }).shouldDisableInsert?.() && !assignedByDatabase(c));
    for (const [, c] of columns) if (is(c.default, SQL)) throw new Error(`insertRows: ${getTableName(table)}.${c.name} has an SQL default`);
    const names = columns.map(([, c]) => `"${c.name}"`).join(", ");
    const assigned = all.flatMap(([key, c]) => (assignedByDatabase(c) ? [key] : []));
    shape = { head: `insert into "${getTableName(table)}" (${names}) values `, columns, assigned };
    shapes.set(table, shape);
  }
  return shape;
}

/** A key the database makes: PostgreSQL's identity column, SQLite's autoincrementing integer key. */
const assignedByDatabase = (c: Column) => c.generatedIdentity !== undefined || (c as { autoIncrement?: boolean }).autoIncrement === true;

/** What drizzle's builder writes for a value left out: the column's default, its default function's, or null. */
function defaultOf(c: Column): unknown {
  if (c.default !== undefined && c.default !== null) return c.default;
  if (c.defaultFn) return c.defaultFn();
  if (c.onUpdateFn) return c.onUpdateFn();
  return null;
}
