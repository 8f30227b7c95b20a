import type { Sql } from "postgres";
import { KeyedLock } from "../keyed-lock";
import type { Locks } from "./db";

/** How long a waiter sleeps before it tries a lock another replica holds again: doubling from the first, up to the last. */
const RETRY_MS = [5, 250] as const;

/**
 * Locks shared by the replicas: PostgreSQL session advisory locks, all held on one connection
 * of this process's own (`sql`, a client of one connection). Within the process, holders of a
 * key queue in arrival order (KeyedLock); the first in line tries the advisory lock and, while
 * another replica holds it, tries again after a pause that grows (replicas rarely meet on one
 * thread: a person's second message while the first is answered elsewhere). A replica that
 * dies lets go of its locks with its connection. (So does one whose lock connection breaks:
 * postgres.js connects again for the next call, and the locks it held are gone.)
 */
export class PgLockSession {
  constructor(private readonly sql: Sql) {}

  family(name: string): Locks {
    const local = new KeyedLock();
    return {
      hold: (key, fn) =>
        local.hold(key, async () => {
          await this.#acquire(name, key);
          try {
            return await fn();
          } finally {
            await this.sql`select pg_advisory_unlock(hashtext(${name}), hashtext(${key}))`.catch(() => {});
          }
        }),
    };
  }

  close(): Promise<void> {
    return this.sql.end({ timeout: 1 });
  }

  async #acquire(family: string, key: string): Promise<void> {
    for (let pause: number = RETRY_MS[0]; ; pause = Math.min(pause * 2, RETRY_MS[1])) {
      const [row] = await this.sql`select pg_try_advisory_lock(hashtext(${family}), hashtext(${key})) as ok`;
      if (row?.ok) return;
      await Bun.sleep(pause);
    }
  }
}
