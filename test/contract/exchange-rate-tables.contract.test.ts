/**
 * The reference-rate tables (services/sales/rate-tables.ts, the sales repository's `rateTables`) on every reachable
 * backend: upserts by (source, day) replacing the day's rates, the lookup's rule (the latest table on or before a
 * day, at most N days older), the admin list, and instances saving the same days at once.
 */
import { createSalesRepository } from "../../services/sales/storage";
import type { SalesRepository } from "../../services/sales/repository";
import type { RateTableStore } from "../../services/sales/rate-tables";
import { backends, useRepository } from "./harness";

describe.each(backends)("exchange-rate tables on %s", (_name, backend) => {
  const repo = useRepository<SalesRepository>(backend, createSalesRepository);
  const store = (): RateTableStore => repo().rateTables;

  it("round-trips a table and finds, for a day, the latest one on or before it within the age limit", async () => {
    // Fri 2027-11-26, Mon 2027-11-29, then Wed 2027-12-01 (Tuesday a holiday).
    const saved = await store().saveTables("ecb", "eur", [
      { day: "2027-11-29", rates: { usd: "1.0801", jpy: "160.98" } },
      { day: "2027-11-26", rates: { usd: "1.0823", jpy: "161.45" } },
      { day: "2027-12-01", rates: { usd: "1.0779", jpy: "160.5" } },
    ]);
    expect(saved).toBe(3);
    const friday = await store().findTable("ecb", "2027-11-26", 4);
    expect(friday).toEqual({ source: "ecb", day: "2027-11-26", base: "eur", rates: { usd: "1.0823", jpy: "161.45" }, loadedAt: expect.any(Date) });
    const dayOf = async (day: string, maxAgeDays = 4) => (await store().findTable("ecb", day, maxAgeDays))?.day ?? null;
    expect(await dayOf("2027-11-27")).toBe("2027-11-26"); // Saturday
    expect(await dayOf("2027-11-28")).toBe("2027-11-26"); // Sunday
    expect(await dayOf("2027-11-30")).toBe("2027-11-29"); // the holiday
    expect(await dayOf("2027-12-05")).toBe("2027-12-01"); // four days after the last table
    expect(await dayOf("2027-12-06")).toBeNull(); // five
    expect(await dayOf("2027-12-02", 0)).toBeNull();
    expect(await dayOf("2027-12-01", 0)).toBe("2027-12-01");
    expect(await dayOf("2027-11-25")).toBeNull(); // before the first
    expect(await store().findTable("manual", "2027-11-26", 4)).toBeNull();
  });

  it("replaces a day's table whole on a second save, and keeps each source's apart", async () => {
    await store().saveTables("manual", "usd", [{ day: "2028-03-01", rates: { eur: "0.92", gbp: "0.79" } }]);
    const first = await store().findTable("manual", "2028-03-01", 0);
    await new Promise((r) => setTimeout(r, 5));
    expect(await store().saveTables("manual", "eur", [{ day: "2028-03-01", rates: { usd: "1.09" } }])).toBe(1);
    const second = await store().findTable("manual", "2028-03-01", 0);
    expect(second).toMatchObject({ source: "manual", day: "2028-03-01", base: "eur", rates: { usd: "1.09" } });
    expect(second!.loadedAt.getTime()).toBeGreaterThan(first!.loadedAt.getTime());
    await store().saveTables("ecb", "eur", [{ day: "2028-03-01", rates: { usd: "1.1" } }]);
    expect((await store().findTable("manual", "2028-03-01", 0))?.rates).toEqual({ usd: "1.09" });
    expect((await store().findTable("ecb", "2028-03-01", 0))?.rates).toEqual({ usd: "1.1" });
  });

  it("saves nothing for no tables, and refuses a day given twice, saving none of the load", async () => {
    expect(await store().saveTables("ecb", "eur", [])).toBe(0);
    await expect(
      store().saveTables("ecb", "eur", [
        { day: "2029-01-02", rates: { usd: "1" } },
        { day: "2029-01-02", rates: { usd: "2" } },
      ]),
    ).rejects.toThrow("2029-01-02 twice");
    expect(await store().findTable("ecb", "2029-01-02", 0)).toBeNull();
  });

  it("lists tables newest first (the same day by source), by source and days, at most the limit", async () => {
    await store().saveTables("ecb", "eur", [
      { day: "2030-06-03", rates: { usd: "1.1" } },
      { day: "2030-06-04", rates: { usd: "1.2" } },
      { day: "2030-06-05", rates: { usd: "1.3" } },
    ]);
    await store().saveTables("manual", "eur", [{ day: "2030-06-04", rates: { usd: "1.25" } }]);
    const key = (t: { source: string; day: string }) => `${t.source} ${t.day}`;
    const june = await store().listTables({ from: "2030-06-01", to: "2030-06-30", limit: 10 });
    expect(june.map(key)).toEqual(["ecb 2030-06-05", "ecb 2030-06-04", "manual 2030-06-04", "ecb 2030-06-03"]);
    expect(june[0]).toEqual({ source: "ecb", day: "2030-06-05", base: "eur", rates: { usd: "1.3" }, loadedAt: expect.any(Date) });
    expect((await store().listTables({ source: "ecb", from: "2030-06-04", limit: 10 })).map(key)).toEqual(["ecb 2030-06-05", "ecb 2030-06-04"]);
    expect((await store().listTables({ source: "manual", to: "2030-06-04", limit: 10 })).map(key)).toEqual(expect.arrayContaining(["manual 2030-06-04"]));
    expect((await store().listTables({ to: "2030-06-04", from: "2030-06-04", limit: 1 })).map(key)).toEqual(["ecb 2030-06-04"]);
    expect((await store().listTables({ limit: 2 })).map(key)).toEqual(["ecb 2030-06-05", "ecb 2030-06-04"]);
  });

  it("takes instances saving the same days at once: every save succeeds and each day holds one save's table whole", async () => {
    const days = Array.from({ length: 20 }, (_, i) => `2031-02-${String(i + 1).padStart(2, "0")}`);
    const load = (rate: string) => days.map((day) => ({ day, rates: { usd: rate, jpy: `${rate}0` } }));
    const results = await Promise.all(["1.1", "1.2", "1.3", "1.4"].map((rate) => store().saveTables("ecb", "eur", load(rate))));
    expect(results).toEqual([20, 20, 20, 20]);
    const stored = await store().listTables({ source: "ecb", from: days[0], to: days[19], limit: 50 });
    expect(stored).toHaveLength(20);
    for (const t of stored) expect(["1.1", "1.2", "1.3", "1.4"].map((r) => ({ usd: r, jpy: `${r}0` }))).toContainEqual(t.rates);
  });
});
