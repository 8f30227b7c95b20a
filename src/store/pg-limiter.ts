import type { Sql } from "postgres";
import type { Limiter } from "./db";

const SWEEP_EVERY = 500;

/**
 * A sliding window per key shared by the replicas (the same rule as src/rate-limit.ts's
 * RateLimiter): each allowed event is a row of `rate_events`, counted under a transaction
 * lock on the key, so that two replicas never both take the last place. A limit of 0 is off.
 */
export function pgRateLimiter(sql: Sql, name: string, limit: number, windowMs = 60_000): Limiter {
  let taken = 0;
  return {
    async take(id) {
      if (limit <= 0) return 0;
      const key = `${name}:${id}`;
      const now = Date.now();
      // now and then, the rows of keys that have not come back since their window passed
      if (++taken % SWEEP_EVERY === 0) await sql`delete from rate_events where key like ${`${name}:%`} and at <= ${now - windowMs}`.catch(() => {});
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtext('rate'), hashtext(${key}))`;
        await tx`delete from rate_events where key = ${key} and at <= ${now - windowMs}`;
        const [row] = await tx`select count(*)::int as n, min(at) as first from rate_events where key = ${key}`;
        if (row!.n >= limit) return Math.max(1, Math.ceil((Number(row!.first) + windowMs - now) / 1000));
        await tx`insert into rate_events (key, at) values (${key}, ${now})`;
        return 0;
      });
    },
  };
}
