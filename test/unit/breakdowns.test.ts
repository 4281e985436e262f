import { breakdownValues, topValues, NO_TRAFFIC_DIMENSIONS, type BreakdownRow } from "../../shared/domain/breakdowns";
import { clickDetailRetentionDays, clickDetailsKeptFrom } from "../../services/attribution/click-retention";

describe("breakdownValues", () => {
  it("names the buckets of what a click did not tell, and of a lead or sale without a click", () => {
    expect(breakdownValues({ country: "DE", deviceType: "mobile", browser: "Firefox", referrerDomain: "blog.example" })).toEqual({
      country: "DE",
      device: "mobile",
      browser: "Firefox",
      referrer: "blog.example",
    });
    expect(breakdownValues(NO_TRAFFIC_DIMENSIONS)).toEqual({ country: "unknown", device: "unknown", browser: "unknown", referrer: "direct" });
    expect(breakdownValues(null)).toEqual(breakdownValues(NO_TRAFFIC_DIMENSIONS));
  });
});

describe("topValues", () => {
  const row = (value: string, clicks: number, leads = 0): BreakdownRow<{ clicks: number; leads: number }> => ({ dimension: "country", value, clicks, leads });

  it("sums a value's rows, ranks by the figure, ties by value, and sums the rest", () => {
    const rows = [row("DE", 5), row("FR", 3), row("DE", 2), row("AT", 3), row("US", 1), row("NL", 0, 4)];
    const top = topValues<{ clicks: number }>(rows, ["clicks"], ["clicks"], 2);
    expect(top.country).toEqual({
      values: [
        { value: "DE", clicks: 7 },
        { value: "AT", clicks: 3 },
      ],
      other: { clicks: 4 },
    });
    // NL has no click: not a value of the clicks' breakdown.
    expect(topValues<{ clicks: number }>(rows, ["clicks"], ["clicks"], 10).country.values.map((v) => v.value)).toEqual(["DE", "AT", "FR", "US"]);
    expect(top.device).toEqual({ values: [], other: null });
  });

  it("ranks by the first figure, then the next (sales by amount, then count)", () => {
    const rows: Array<BreakdownRow<{ sales: number; amountCents: number }>> = [
      { dimension: "browser", value: "Chrome", sales: 3, amountCents: 3000 },
      { dimension: "browser", value: "Safari", sales: 1, amountCents: 5000 },
      { dimension: "browser", value: "Edge", sales: 2, amountCents: 3000 },
    ];
    const top = topValues<{ sales: number; amountCents: number }>(rows, ["sales", "amountCents"], ["amountCents", "sales"]);
    expect(top.browser.values.map((v) => v.value)).toEqual(["Safari", "Chrome", "Edge"]);
    expect(top.browser.other).toBeNull();
  });

  it("keeps ten values by default", () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({ dimension: "referrer" as const, value: `site${String(i).padStart(2, "0")}.example`, clicks: 100 - i }));
    const top = topValues<{ clicks: number }>(rows, ["clicks"]);
    expect(top.referrer.values).toHaveLength(10);
    expect(top.referrer.other).toEqual({ clicks: 90 + 89 });
  });
});

describe("clickDetailsKeptFrom", () => {
  it("is the first day no clearing of details can have reached", () => {
    const now = new Date("2026-05-01T13:00:00Z");
    expect(clickDetailsKeptFrom(90, now)).toBe("2026-02-02");
    expect(clickDetailsKeptFrom(2, now)).toBe("2026-05-01");
    expect(clickDetailsKeptFrom(1, now)).toBe("2026-05-01");
  });

  it("reads CLICK_DETAIL_RETENTION_DAYS, default 90, refusing what is not a number of days", () => {
    expect(clickDetailRetentionDays({})).toBe(90);
    expect(clickDetailRetentionDays({ CLICK_DETAIL_RETENTION_DAYS: "30" })).toBe(30);
    expect(() => clickDetailRetentionDays({ CLICK_DETAIL_RETENTION_DAYS: "0" })).toThrow(/CLICK_DETAIL_RETENTION_DAYS/);
    expect(() => clickDetailRetentionDays({ CLICK_DETAIL_RETENTION_DAYS: "ninety" })).toThrow(/CLICK_DETAIL_RETENTION_DAYS/);
  });
});
