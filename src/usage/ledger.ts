import type { Logger } from "../log";
import type { Db } from "../store/db";
import { insertUsage, type UsageRow } from "../store/usage";

/** How long usage rows wait to be written together, and how many make a write at once. */
const FLUSH_MS = 200;
const FLUSH_ROWS = 256;

/**
 * The usage ledger's writer: a turn's rows are written after it, many turns' in one
 * statement, off the turn's path. Whatever reads the ledger (reports, budgets) calls `flush`
 * first and sees every turn that ended; a kill loses at most the last FLUSH_MS of rows (the
 * responses keep their own tokens and cost).
 */
export class UsageLedger {
  #rows: UsageRow[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #written: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { db: Db; log?: Logger }) {}

  add(rows: UsageRow[]): void {
    if (!rows.length) return;
    this.#rows.push(...rows);
    if (this.#rows.length >= FLUSH_ROWS) void this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.#timer.unref?.();
    }
  }

  /** Writes what is waiting; resolves once every row added before the call is stored (or given up on). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const rows = this.#rows;
    this.#rows = [];
    if (rows.length) {
      this.#written = this.#written.then(() =>
        insertUsage(this.deps.db, rows).catch((e) => this.deps.log?.error("usage: rows could not be stored", { rows: rows.length, error: (e as Error).message })),
      );
    }
    return this.#written;
  }
}
