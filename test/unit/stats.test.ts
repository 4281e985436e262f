/** The overview's date ranges and zero-filled daily series (shared/domain/stats.ts). */
import fc from "fast-check";
import { fillDays, mergeRows, partnerTotals, resolveStatsRange, splitByMonths, statsAnswer, sumFigures, MAX_STATS_DAYS } from "../../shared/domain/stats";

const NOW = new Date("2030-03-10T23:59:59.999Z");
const zero = { clicks: 0, leads: 0 };

describe("resolveStatsRange", () => {
  test("defaults to the last 30 UTC days, today included", () => {
    const r = resolveStatsRange({}, NOW);
    if (!r.ok) throw new Error(r.message);
    expect(r.range).toMatchObject({ from: "2030-02-09", to: "2030-03-10" });
    expect(r.range.days).toHaveLength(30);
    expect(r.range.start.toISOString()).toBe("2030-02-09T00:00:00.000Z");
    expect(r.range.end.toISOString()).toBe("2030-03-11T00:00:00.000Z");
  });

  test("from and to are inclusive whole days; one day is a range", () => {
    const r = resolveStatsRange({ from: "2030-02-27", to: "2030-03-01" }, NOW);
    if (!r.ok) throw new Error(r.message);
    expect(r.range.days).toEqual(["2030-02-27", "2030-02-28", "2030-03-01"]);
    const one = resolveStatsRange({ from: "2030-01-01", to: "2030-01-01" }, NOW);
    expect(one.ok && one.range.days).toEqual(["2030-01-01"]);
  });

  test("a leap day, and at most 366 days", () => {
    const leap = resolveStatsRange({ from: "2028-02-28", to: "2028-03-01" }, NOW);
    expect(leap.ok && leap.range.days).toEqual(["2028-02-28", "2028-02-29", "2028-03-01"]);
    const year = resolveStatsRange({ from: "2028-01-01", to: "2028-12-31" }, NOW);
    expect(year.ok && year.range.days.length).toBe(MAX_STATS_DAYS);
    const tooLong = resolveStatsRange({ from: "2028-01-01", to: "2029-01-01" }, NOW);
    expect(tooLong).toEqual({ ok: false, message: "Invalid range: 367 days asked for, at most 366." });
  });

  test("refuses days that are not days and a from after to", () => {
    expect(resolveStatsRange({ from: "2030-02-30" }, NOW)).toMatchObject({ ok: false, message: expect.stringContaining("'from'") });
    expect(resolveStatsRange({ to: "2030-3-1" }, NOW)).toMatchObject({ ok: false, message: expect.stringContaining("'to'") });
    expect(resolveStatsRange({ from: "2030-03-02", to: "2030-03-01" }, NOW)).toEqual({ ok: false, message: "Invalid 'from': it is after 'to'." });
  });

  test("from alone counts back from today; to alone gives the 30 days before it", () => {
    const r = resolveStatsRange({ to: "2030-01-30" }, NOW);
    expect(r.ok && [r.range.from, r.range.to]).toEqual(["2030-01-01", "2030-01-30"]);
  });
});

describe("fillDays and totals", () => {
  test("every day present, zeros where nothing happened, rows outside ignored", () => {
    const days = ["2030-01-01", "2030-01-02", "2030-01-03"];
    const filled = fillDays(
      days,
      [
        { day: "2030-01-02", clicks: 3, leads: 1 },
        { day: "2029-12-31", clicks: 9, leads: 9 },
      ],
      zero,
    );
    expect(filled).toEqual([
      { date: "2030-01-01", clicks: 0, leads: 0 },
      { date: "2030-01-02", clicks: 3, leads: 1 },
      { date: "2030-01-03", clicks: 0, leads: 0 },
    ]);
    expect(sumFigures(filled, zero)).toEqual({ clicks: 3, leads: 1 });
  });

  test("a figure missing from a row is zero; text from a driver becomes a number", () => {
    expect(fillDays(["2030-01-01"], [{ day: "2030-01-01", clicks: "4" as unknown as number } as never], zero)).toEqual([{ date: "2030-01-01", clicks: 4, leads: 0 }]);
  });

  test("partner totals: the partners asked for, in that order, zeros for those without rows", () => {
    const rows = [
      { partnerId: 9, clicks: 2, leads: 0 },
      { partnerId: 4, clicks: 1, leads: 1 },
    ];
    expect(partnerTotals(rows, zero, [4, 5, 9])).toEqual([
      { partnerId: 4, clicks: 1, leads: 1 },
      { partnerId: 5, clicks: 0, leads: 0 },
      { partnerId: 9, clicks: 2, leads: 0 },
    ]);
    expect(partnerTotals(rows, zero).map((p) => p.partnerId)).toEqual([4, 9]);
  });

  test("mergeRows joins two queries' rows on their key", () => {
    const merged = mergeRows(
      "day",
      zero,
      [{ day: "a", clicks: 2 }],
      [
        { day: "a", leads: 1 },
        { day: "b", leads: 5 },
      ],
    );
    expect(merged).toEqual([
      { day: "a", clicks: 2, leads: 1 },
      { day: "b", clicks: 0, leads: 5 },
    ]);
  });

  test("statsAnswer: the series, the partners and totals; all time has no series", () => {
    const r = resolveStatsRange({ from: "2030-01-01", to: "2030-01-02" }, NOW);
    if (!r.ok) throw new Error(r.message);
    const rows = { byDay: [{ day: "2030-01-02", clicks: 5, leads: 2 }], byPartner: [{ partnerId: 1, clicks: 5, leads: 2 }] };
    expect(statsAnswer(r.range, rows, zero)).toEqual({
      from: "2030-01-01",
      to: "2030-01-02",
      days: [
        { date: "2030-01-01", clicks: 0, leads: 0 },
        { date: "2030-01-02", clicks: 5, leads: 2 },
      ],
      partners: [{ partnerId: 1, clicks: 5, leads: 2 }],
      totals: { clicks: 5, leads: 2 },
    });
    expect(statsAnswer(null, { byDay: [], byPartner: rows.byPartner }, zero, [1, 2])).toEqual({
      from: null,
      to: null,
      days: [],
      partners: [
        { partnerId: 1, clicks: 5, leads: 2 },
        { partnerId: 2, clicks: 0, leads: 0 },
      ],
      totals: { clicks: 5, leads: 2 },
    });
    // The partners' figures over a range without its series: totals from the partners.
    expect(statsAnswer(r.range, { byDay: [], byPartner: rows.byPartner }, zero, [1], false)).toEqual({
      from: "2030-01-01",
      to: "2030-01-02",
      days: [],
      partners: [{ partnerId: 1, clicks: 5, leads: 2 }],
      totals: { clicks: 5, leads: 2 },
    });
  });
});

describe("splitByMonths", () => {
  const DAY_MS = 86_400_000;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const daysOf = (from: string, to: string) => {
    const days: string[] = [];
    for (let t = Date.parse(from); t < Date.parse(to); t += DAY_MS) days.push(day(t));
    return days;
  };

  test("whole months from the monthly rollup, the days around them from the daily one", () => {
    expect(splitByMonths("2026-11-27", "2027-11-28")).toEqual({
      months: { from: "2026-12-01", to: "2027-11-01" },
      days: [
        { from: "2026-11-27", to: "2026-12-01" },
        { from: "2027-11-01", to: "2027-11-28" },
      ],
    });
    expect(splitByMonths("2026-06-01", "2026-07-01")).toEqual({ months: { from: "2026-06-01", to: "2026-07-01" }, days: [] });
    expect(splitByMonths("2026-06-02", "2026-07-01")).toEqual({ months: null, days: [{ from: "2026-06-02", to: "2026-07-01" }] });
    expect(splitByMonths("2026-12-15", "2027-01-15")).toEqual({ months: null, days: [{ from: "2026-12-15", to: "2027-01-15" }] });
    expect(splitByMonths(null, null)).toEqual({ months: "all", days: [] });
  });

  test("every day of any range is read exactly once, months only whole", () => {
    const start = Date.parse("2027-01-01");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 * 366 }), fc.integer({ min: 1, max: 400 }), (offset, length) => {
        const [from, to] = [day(start + offset * DAY_MS), day(start + (offset + length) * DAY_MS)];
        const { months, days } = splitByMonths(from, to);
        const read = days.flatMap((s) => daysOf(s.from, s.to));
        if (months && months !== "all") {
          expect([months.from.endsWith("-01"), months.to.endsWith("-01"), months.from < months.to]).toEqual([true, true, true]);
          read.push(...daysOf(months.from, months.to));
        }
        expect(read.sort()).toEqual(daysOf(from, to));
      }),
    );
  });
});
