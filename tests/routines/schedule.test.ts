// Schedules: 5-field cron and @nicknames in a time zone across daylight saving (croner),
// `every <n>s|m|h|d` from an anchor, `at <ISO>` once; in words (cronstrue); refused with a reason.
import { describe, expect, test } from "bun:test";
import { parseSchedule, ScheduleError, upcoming } from "../../src/routines/schedule";

const iso = (ms: number[]) => ms.map((t) => new Date(t).toISOString());
const at = (s: string) => Date.parse(s);

describe("cron", () => {
  test("weekdays at 07:00 in Europe/Berlin, across the spring change of clocks: 07:00 local each day", () => {
    const s = parseSchedule("0 7 * * 1-5", "Europe/Berlin", 0);
    // Friday 27 March 2026 (CET, UTC+1) → Monday 30 March (CEST, UTC+2)
    expect(iso(upcoming(s, at("2026-03-26T12:00:00Z"), 3))).toEqual(["2026-03-27T06:00:00.000Z", "2026-03-30T05:00:00.000Z", "2026-03-31T05:00:00.000Z"]);
    expect(s.describe()).toBe("At 07:00, Monday through Friday (Europe/Berlin)");
  });

  test("02:30 every day: once on the day the clocks skip it (at 03:00), once on the day they repeat it", () => {
    const s = parseSchedule("30 2 * * *", "Europe/Berlin", 0);
    expect(iso(upcoming(s, at("2026-03-28T12:00:00Z"), 2))).toEqual(["2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
    const autumn = upcoming(s, at("2026-10-24T12:00:00Z"), 2);
    expect(iso(autumn)).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  test("@daily, @hourly, @weekly, @monthly, @yearly; in America/New_York midnight moves with its DST", () => {
    expect(iso(upcoming(parseSchedule("@daily", "America/New_York", 0), at("2026-03-07T12:00:00Z"), 3))).toEqual([
      "2026-03-08T05:00:00.000Z",
      "2026-03-09T04:00:00.000Z",
      "2026-03-10T04:00:00.000Z",
    ]);
    expect(iso(upcoming(parseSchedule("@hourly", "UTC", 0), at("2026-01-01T00:30:00Z"), 2))).toEqual(["2026-01-01T01:00:00.000Z", "2026-01-01T02:00:00.000Z"]);
    for (const n of ["@weekly", "@monthly", "@yearly", "@annually", "@midnight"]) expect(upcoming(parseSchedule(n, "UTC", 0), 0, 1)).toHaveLength(1);
  });

  test("previous ticks: the latest n at or before a time, oldest first", () => {
    const s = parseSchedule("0 * * * *", "UTC", 0);
    expect(iso(s.previous(at("2026-01-01T03:00:00Z"), 3))).toEqual(["2026-01-01T01:00:00.000Z", "2026-01-01T02:00:00.000Z", "2026-01-01T03:00:00.000Z"]);
  });
});

describe("every and at", () => {
  test("every 2s counts from its anchor; previous and next agree", () => {
    const s = parseSchedule("every 2s", "UTC", 1_000);
    expect(upcoming(s, 1_000, 3)).toEqual([3_000, 5_000, 7_000]);
    expect(s.next(4_999)).toBe(5_000);
    expect(s.next(5_000)).toBe(7_000);
    expect(s.previous(8_000, 2)).toEqual([5_000, 7_000]);
    expect(s.previous(2_000, 5)).toEqual([]);
    expect(s.describe()).toBe("every 2 seconds");
    expect(parseSchedule("every 1d", "UTC", 0).describe()).toBe("every day");
    expect(parseSchedule("EVERY 30 m", "UTC", 0).next(0)).toBe(30 * 60_000);
  });

  test("at: once, in the time zone unless the time has an offset", () => {
    const local = parseSchedule("at 2026-12-24T18:00", "Europe/Berlin", 0);
    expect(upcoming(local, at("2026-12-01T00:00:00Z"), 3)).toEqual([at("2026-12-24T17:00:00Z")]);
    expect(local.next(at("2026-12-24T17:00:00Z"))).toBeUndefined();
    expect(local.describe()).toBe("once, at 2026-12-24 18:00 (Europe/Berlin)");
    expect(parseSchedule("at 2026-12-24T18:00:00+01:00", "America/New_York", 0).next(0)).toBe(at("2026-12-24T17:00:00Z"));
  });
});

describe("refused, with the reason", () => {
  const reason = (text: string, tz = "UTC") => {
    try {
      parseSchedule(text, tz, 0);
    } catch (e) {
      expect(e).toBeInstanceOf(ScheduleError);
      return (e as Error).message;
    }
    throw new Error(`${text} was accepted`);
  };

  test.each([
    ["* * * * * *", "has 6 fields"],
    ["0 7 * *", "has 4 fields"],
    ["61 * * * *", "minute"],
    ["0 25 * * *", "hour"],
    ["@reboot", "@hourly"],
    ["every 0s", "at least 1"],
    ["every 5 minutes", "every <n>s"],
    ["at tomorrow", "ISO 8601"],
    ["at 2026-02-30T07:00", "not a date"],
    ["", "empty"],
  ])("%p", (text, why) => expect(reason(text)).toContain(why));

  test("an unknown time zone, and a local time the clocks skip", () => {
    expect(reason("0 7 * * *", "Mars/Olympus")).toContain("is not a time zone");
    expect(reason("at 2026-03-29T02:30", "Europe/Berlin")).toContain("does not exist in Europe/Berlin");
  });
});
