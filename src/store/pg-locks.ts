import type { Sql } from "postgres";
import { KeyedLock } from "../keyed-lock";
import type { Broadcast } from "./broadcast";
import type { Locks } from "./db";

/** How long a waiter sleeps at most before it tries a lock held in another replica again. */
const RETRY_MS = 250;
const RELEASED = "lock.released";

/**
 * Locks shared by the replicas: PostgreSQL session advisory locks, all held on one connection
 * of this process's own (`sql`, a client of one connection). Within the process, holders of a key queue in arrival order
 * (KeyedLock); the first in line tries the advisory lock and, while another replica holds
 * it, waits until that one says it let go (or tries again every RETRY_MS). A replica that
 * dies lets go of its locks with its connection. (So does one whose lock connection breaks:
 * postgres.js connects again for the next call, and the locks it held are gone.)
 */
export class PgLockSession {
  readonly #wakers = new Set<() => void>();

  constructor(
    private readonly sql: Sql,
    private readonly broadcast: Broadcast,
  ) {
    broadcast.subscribe(RELEASED, () => {
      for (const wake of [...this.#wakers]) wake();
    });
  }

  family(name: string): Locks {
    const local = new KeyedLock();
    return {
      hold: (key, fn) =>
        local.hold(key, async () => {
          await this.#acquire(name, key);
          try {
            return await fn();
          } finally {
            await this.#release(name, key);
          }
        }),
    };
  }

  close(): Promise<void> {
    return this.sql.end({ timeout: 1 });
  }

  async #acquire(family: string, key: string): Promise<void> {
    for (;;) {
      const [row] = await this.sql`select pg_try_advisory_lock(hashtext(${family}), hashtext(${key})) as ok`;
      if (row?.ok) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, RETRY_MS);
        this.#wakers.add(wake);
      });
    }
  }

  async #release(family: string, key: string): Promise<void> {
    await this.sql`select pg_advisory_unlock(hashtext(${family}), hashtext(${key}))`.catch(() => {});
    this.broadcast.publish(RELEASED, null);
  }
}
