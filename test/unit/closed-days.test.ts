import { ClosedDaysCache, splitClosedDays } from "../../shared/storage/closed-days";
import type { StatsQuery } from "../../shared/domain/stats";

const day = (d: string) => new Date(`${d}T00:00:00Z`);
const now = new Date("2026-11-28T15:00:00Z");

describe("splitClosedDays", () => {
  it("closes the days before yesterday (UTC); yesterday and today are recent", () => {
    expect(splitClosedDays(day("2026-10-30"), day("2026-11-29"), now)).toEqual({
      closed: { start: day("2026-10-30"), end: day("2026-11-27") },
      recent: { start: day("2026-11-27"), end: day("2026-11-29") },
    });
  });
  it("a range of recent days has no closed part, a range of past days no recent one", () => {
    expect(splitClosedDays(day("2026-11-27"), day("2026-11-29"), now)).toEqual({ closed: null, recent: { start: day("2026-11-27"), end: day("2026-11-29") } });
    expect(splitClosedDays(day("2026-01-01"), day("2026-02-01"), now)).toEqual({ closed: { start: day("2026-01-01"), end: day("2026-02-01") }, recent: null });
  });
});

describe("ClosedDaysCache", () => {
  const range = (over: Partial<StatsQuery> = {}): StatsQuery => ({ programId: 1, test: false, start: day("2026-10-30"), end: day("2026-11-29"), ...over });
  const setup = () => {
    let revision = "0";
    const reads: string[] = [];
    const cache = new ClosedDaysCache<{ from: string; variant: string }>({
      revision: async () => revision,
      rows: async (q, variant) => {
        const from = q.start!.toISOString().slice(0, 10);
        reads.push(`${from}..${q.end!.toISOString().slice(0, 10)}${q.partnerIds ? ` partners ${q.partnerIds}` : ""} ${variant}`);
        return [{ from, variant }];
      },
    });
    return { cache, reads, bump: () => (revision = String(Number(revision) + 1)) };
  };

  it("sums the closed days once per revision and the recent days every time", async () => {
    const { cache, reads, bump } = setup();
    const expected = [
      { from: "2026-10-30", variant: "usd" },
      { from: "2026-11-27", variant: "usd" },
    ];
    expect(await cache.read(range(), "usd", now)).toEqual(expected);
    expect(await cache.read(range(), "usd", now)).toEqual(expected);
    expect([...reads].sort()).toEqual(["2026-10-30..2026-11-27 usd", "2026-11-27..2026-11-29 usd", "2026-11-27..2026-11-29 usd"]);
    bump();
    await cache.read(range(), "usd", now);
    expect(reads.slice(3).sort()).toEqual(["2026-10-30..2026-11-27 usd", "2026-11-27..2026-11-29 usd"]);
  });

  it("keeps programs, modes and variants apart, and reads one partner's rows whole", async () => {
    const { cache, reads } = setup();
    await cache.read(range(), "usd", now);
    await cache.read(range({ test: true }), "usd", now);
    await cache.read(range({ programId: 2 }), "usd", now);
    await cache.read(range(), "eur", now);
    expect(reads.filter((r) => r.startsWith("2026-10-30"))).toHaveLength(4);
    await cache.read(range({ partnerIds: [7] }), "usd", now);
    await cache.read(range({ partnerIds: [7] }), "usd", now);
    expect(reads.slice(-2)).toEqual(["2026-10-30..2026-11-29 partners 7 usd", "2026-10-30..2026-11-29 partners 7 usd"]);
  });
});
