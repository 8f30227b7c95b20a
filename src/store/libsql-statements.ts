import Database from "libsql";

/**
 * Prepared statements kept per connection, by their SQL. `@libsql/client` prepares every
 * statement it runs anew, and SQLite's parser and planner took a fifth of a turn's commit
 * (docs/performance.md). Drizzle writes the same SQL for the same query shape, so a turn's
 * statements are found here after the first turn.
 *
 * A statement that fails is dropped (and made again next time), as it would have been
 * without the cache: libSQL does not reset a statement that failed (see `libsql.ts`).
 */
const KEPT_PER_CONNECTION = 256;

type Connection = InstanceType<typeof Database>;
type Statement = ReturnType<Connection["prepare"]>;
type Prepare = (this: Connection, sql: string) => Statement;

const cached = new WeakMap<Connection, Map<string, Statement>>();
let installed = false;

export function keepPreparedStatements(): void {
  if (installed) return;
  installed = true;
  const prepare = Database.prototype.prepare as Prepare;
  Database.prototype.prepare = function (this: Connection, sql: string): Statement {
    let kept = cached.get(this);
    if (!kept) cached.set(this, (kept = new Map()));
    const known = kept.get(sql);
    if (known) return known;
    const stmt = prepare.call(this, sql);
    if (kept.size >= KEPT_PER_CONNECTION) kept.clear();
    kept.set(sql, dropOnFailure(rawAnsweredOnce(stmt), () => kept.delete(sql)));
    return stmt;
  } as Prepare as Connection["prepare"];
}

/**
 * `@libsql/client` asks each statement it runs whether it returns rows by calling `raw()`,
 * which throws for one that does not (an insert, BEGIN, COMMIT). A kept statement that
 * returns no rows throws the error its first call made: a new error each time, its stack
 * taken, was five per turn's commit.
 */
function rawAnsweredOnce(stmt: Statement): Statement {
  if (stmt.reader) return stmt;
  try {
    stmt.raw(true);
  } catch (refusal) {
    Object.defineProperty(stmt, "raw", {
      value: () => {
        throw refusal;
      },
    });
  }
  return stmt;
}

/** The statement, forgotten by the cache when one of its runs throws. */
function dropOnFailure(stmt: Statement, drop: () => void): Statement {
  for (const method of ["run", "all", "get", "iterate"] as const) {
    const run = stmt[method] as (...args: unknown[]) => unknown;
    Object.defineProperty(stmt, method, {
      value: (...args: unknown[]) => {
        try {
          return run.apply(stmt, args);
        } catch (e) {
          drop();
          throw e;
        }
      },
    });
  }
  return stmt;
}
