import type { Client } from "@libsql/client";

/**
 * When a libSQL file's write-ahead log is copied back into the database (a checkpoint). By
 * default SQLite does it inside whichever commit finds 1,000 pages in the log: that commit
 * takes milliseconds more (the copy and two fsyncs), and it was one turn in a hundred, the
 * turns' p99 (docs/performance.md). Here the log is checkpointed once the database has been
 * quiet for a moment, off every turn's way; under load with no quiet moment, SQLite still does
 * it itself, at `AUTOCHECKPOINT_PAGES`.
 */
export const AUTOCHECKPOINT_PAGES = 4000;
/** How long without a statement counts as quiet. */
const QUIET_MS = 100;
const TICK_MS = 250;

export interface Checkpoints {
  /** A statement ran (or is about to). */
  used(): void;
  stop(): void;
}

/** Checkpoints in the store's quiet moments; its timer runs only while a statement's writes wait for one. */
export function quietCheckpoints(client: Client): Checkpoints {
  let last = 0;
  let running = false;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    timer = setTimeout(check, TICK_MS);
    timer.unref?.();
  };
  const check = () => {
    timer = undefined;
    if (client.closed) return;
    if (running || Date.now() - last < QUIET_MS) return arm();
    running = true;
    client
      .execute("PRAGMA wal_checkpoint(PASSIVE)")
      .catch(() => {
        // the next quiet moment, or SQLite's own checkpoint, does it
      })
      .finally(() => (running = false));
  };
  return {
    used() {
      last = Date.now();
      if (!timer && !stopped) arm();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
