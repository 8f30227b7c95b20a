export interface UntilOptions {
  /** How long to keep trying before failing (default 10 s). */
  timeoutMs?: number;
  /** The pause between two checks (default 20 ms; more where a check spawns a process). */
  everyMs?: number;
}

/**
 * Checks until `check` gives something truthy, and returns it; fails after `timeoutMs` with
 * `what` in the message (a function is called then, to show the state the wait ended on).
 * For state a test can only read; where there is a signal to await, await the signal.
 */
export async function until<T>(what: string | (() => string), check: () => T | Promise<T>, { timeoutMs = 10_000, everyMs = 20 }: UntilOptions = {}): Promise<Exclude<T, false | 0 | "" | null | undefined>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | 0 | "" | null | undefined>;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`);
    await Bun.sleep(everyMs);
  }
}
