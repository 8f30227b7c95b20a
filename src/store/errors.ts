// What a failed statement means, whichever database said it.
import { LibsqlError } from "@libsql/client";

/** SQLite's answers that say the database cannot be used now (locked, full, read-only, gone), not that a statement is wrong. */
const SQLITE_UNAVAILABLE = new Set(["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_NOMEM"]);

/**
 * PostgreSQL's: a lost or refused connection (class 08), a refused login (28), no such
 * database (3D000), no resources left (53), a server shutting down (57P), a read-only one.
 */
const PG_UNAVAILABLE = /^(08|28|53|57P)|^(3D000|25006)$/;
/** postgres.js's own codes for a connection it could not make or lost. */
const CONNECTION_LOST = new Set(["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT", "ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EPIPE", "ETIMEDOUT"]);

/** postgres.js's error for what the server answered, told by its name: postgres.js is loaded only for a PostgreSQL store. */
const isPostgresError = (e: unknown): e is Error & { code: string } => e instanceof Error && e.name === "PostgresError" && typeof (e as { code?: unknown }).code === "string";

/** The error itself and what it wraps (drizzle's query error quotes the statement and its values: only the causes are told). */
function* causes(e: unknown): Generator<unknown> {
  for (let cause = e, depth = 0; cause && depth < 5; cause = (cause as Error).cause, depth++) yield cause;
}

/**
 * Why the database cannot be used, when that is what `e` comes down to:
 * `database is locked (SQLITE_BUSY)`. Undefined for any other error.
 */
export function storeUnavailable(e: unknown): string | undefined {
  for (const cause of causes(e)) {
    if (cause instanceof LibsqlError) {
      if (SQLITE_UNAVAILABLE.has(cause.code) || cause.code === "CLIENT_CLOSED") return `${cause.message.replace(/^([A-Z_]+: )+/, "")} (${cause.code})`;
    } else if (isPostgresError(cause)) {
      if (PG_UNAVAILABLE.test(cause.code)) return `${cause.message} (${cause.code})`;
    } else if (cause instanceof Error) {
      const code = (cause as Error & { code?: unknown }).code;
      if (typeof code === "string" && CONNECTION_LOST.has(code)) return `${cause.message} (${code})`;
    }
  }
  return undefined;
}

/** Whether `e` (or what it wraps) is a unique or primary key violation: the row is there already. */
export function uniqueViolation(e: unknown): boolean {
  for (const cause of causes(e)) {
    if (isPostgresError(cause)) return cause.code === "23505";
    if (!(cause instanceof LibsqlError)) continue;
    const code = (cause as LibsqlError & { extendedCode?: string }).extendedCode ?? cause.code;
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || (code === "SQLITE_CONSTRAINT" && /UNIQUE|PRIMARY KEY/.test(cause.message));
  }
  return false;
}
