// When a routine runs. Cron expressions and one-off times are parsed and evaluated by croner
// (time zones and daylight saving included) and put into words by cronstrue; `every` is
// arithmetic from the routine's anchor.
import type { Cron, CronOptions } from "croner";
import cronstrue from "cronstrue";

/** A paused croner job (it only computes times), croner loaded with the first schedule: most homes have none. */
function pausedCron(pattern: string, options: CronOptions): Cron {
  const { Cron } = require("croner") as typeof import("croner");
  return new Cron(pattern, { ...options, paused: true });
}

/** A schedule that cannot be used, with the reason in words (a 400 of the routines API). */
export class ScheduleError extends Error {}

export interface Schedule {
  /** The first tick strictly after `after` (ms since the epoch), or undefined when there is none (an `at` that has passed). */
  next(after: number): number | undefined;
  /** The latest `n` ticks at or before `at`, oldest first. */
  previous(at: number, n: number): number[];
  /** The schedule in words: "At 07:00, Monday through Friday (Europe/Berlin)". */
  describe(): string;
}

const NICKNAMES: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const UNITS: Record<string, { ms: number; word: string }> = {
  s: { ms: 1_000, word: "second" },
  m: { ms: 60_000, word: "minute" },
  h: { ms: 3_600_000, word: "hour" },
  d: { ms: 86_400_000, word: "day" },
};

/** The machine's time zone: a routine's default. */
export const machineTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** Whether `tz` is an IANA time zone this runtime knows. */
export function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses a schedule: a 5-field cron expression or `@hourly`, `@daily`, `@weekly`, `@monthly`,
 * `@yearly` (evaluated in `timezone`), `every <n>s|m|h|d` (ticks at `anchor` + k × n), or
 * `at <ISO 8601 time>` (once; a time without an offset is read in `timezone`).
 */
export function parseSchedule(text: string, timezone: string, anchor: number): Schedule {
  const s = text.trim();
  if (!s) throw new ScheduleError("the schedule is empty: give a cron expression (0 7 * * 1-5), every <n>s|m|h|d, or at <ISO 8601 time>");
  if (!validTimeZone(timezone)) throw new ScheduleError(`${JSON.stringify(timezone)} is not a time zone (use an IANA name such as Europe/Berlin or UTC)`);
  const every = /^every\s+(\d+)\s*([smhd])$/i.exec(s);
  if (every) return everySchedule(Number(every[1]), UNITS[every[2]!.toLowerCase()]!, anchor);
  if (/^every\b/i.test(s)) throw new ScheduleError(`"${s}" is not understood: write every <n>s, every <n>m, every <n>h or every <n>d (every 30m)`);
  const at = /^at\s+(.+)$/i.exec(s);
  if (at) return atSchedule(at[1]!.trim(), timezone);
  return cronSchedule(s, timezone);
}

function everySchedule(n: number, unit: { ms: number; word: string }, anchor: number): Schedule {
  if (!Number.isSafeInteger(n) || n < 1) throw new ScheduleError("every needs a whole number of at least 1 (every 1s at the most often)");
  const ms = n * unit.ms;
  if (!Number.isSafeInteger(ms) || ms > 366 * UNITS.d!.ms) throw new ScheduleError("every may be at most 366 days");
  return {
    next: (after) => anchor + (Math.floor((after - anchor) / ms) + 1) * ms,
    previous(at, count) {
      const last = Math.floor((at - anchor) / ms);
      const out: number[] = [];
      for (let k = Math.max(1, last - count + 1); k <= last; k++) out.push(anchor + k * ms);
      return out;
    },
    describe: () => `every ${n === 1 ? unit.word : `${n} ${unit.word}s`}`,
  };
}

function atSchedule(when: string, timezone: string): Schedule {
  // croner reads an ISO 8601 time (with or without an offset) as a one-off, in the time zone
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(when)) {
    throw new ScheduleError(`"${when}" is not an ISO 8601 time like 2026-12-24T18:00 or 2026-12-24T18:00:00+01:00`);
  }
  const [, y, mo, d, h, mi] = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(when)!.map(Number);
  const calendar = new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!));
  if (calendar.getUTCMonth() !== mo! - 1 || calendar.getUTCDate() !== d || calendar.getUTCHours() !== h || calendar.getUTCMinutes() !== mi) {
    throw new ScheduleError(`"${when}" is not a date and time that exist`);
  }
  const withSeconds = /T\d{2}:\d{2}(Z|[+-]|$)/i.test(when) ? when.replace(/(T\d{2}:\d{2})/i, "$1:00") : when;
  const offset = /(Z|[+-]\d{2}:?\d{2})$/i.test(when);
  let time: number;
  try {
    const date = pausedCron(withSeconds, { timezone }).getOnce();
    if (!date || Number.isNaN(date.getTime())) throw new Error("no such time");
    time = date.getTime();
  } catch {
    throw new ScheduleError(`"${when}" is not a time that exists`);
  }
  // a local time in the hour a clock skips when daylight saving starts does not exist there
  if (!offset && localMinute(time, timezone) !== when.slice(0, 16)) throw new ScheduleError(`${when.slice(0, 16)} does not exist in ${timezone} (the clocks skip it)`);
  return {
    next: (after) => (time > after ? time : undefined),
    previous: (at) => (time <= at ? [time] : []),
    describe: () => `once, at ${when.replace("T", " ")}${offset ? "" : ` (${timezone})`}`,
  };
}

function cronSchedule(expression: string, timezone: string): Schedule {
  const pattern = NICKNAMES[expression.toLowerCase()] ?? expression;
  if (expression.startsWith("@") && !NICKNAMES[expression.toLowerCase()]) {
    throw new ScheduleError(`${expression} is not a schedule: use @hourly, @daily, @weekly, @monthly or @yearly`);
  }
  const fields = pattern.split(/\s+/).length;
  if (fields !== 5) {
    throw new ScheduleError(
      `"${expression}" has ${fields} field${fields === 1 ? "" : "s"}: a cron expression has 5 (minute hour day-of-month month day-of-week, like 0 7 * * 1-5), or write every <n>s|m|h|d or at <ISO 8601 time>`,
    );
  }
  let cron: Cron;
  try {
    cron = pausedCron(pattern, { timezone, mode: "5-part" });
  } catch (e) {
    throw new ScheduleError(`"${expression}" is not a valid cron expression: ${(e as Error).message.replace(/^CronPattern: /, "")}`);
  }
  let words: string;
  try {
    words = cronstrue.toString(pattern, { use24HourTimeFormat: true });
  } catch {
    words = expression;
  }
  return {
    next: (after) => cron.nextRun(new Date(after))?.getTime(),
    // croner's previous runs are strictly before the reference
    previous: (at, n) => cron.previousRuns(n, new Date(at + 1)).map((d) => d.getTime()).reverse(),
    describe: () => `${words} (${timezone})`,
  };
}

/** `YYYY-MM-DDTHH:MM` of a time in a time zone. */
function localMinute(time: number, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
      .formatToParts(time)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/** The next `n` ticks after `after`. */
export function upcoming(schedule: Schedule, after: number, n: number): number[] {
  const out: number[] = [];
  for (let t = schedule.next(after); t !== undefined && out.length < n; t = schedule.next(t)) out.push(t);
  return out;
}
