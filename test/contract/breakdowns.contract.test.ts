/**
 * The traffic breakdowns' rollups (shared/domain/breakdowns.ts) on every reachable backend: clicks (counted ones only)
 * and attributed leads per dimension and value (attribution.breakdowns), attributed sales and their amounts in the
 * program's currency (sales.breakdowns), the program's rows and one partner's, live and test apart; reconcile's drift,
 * and a click's details cleared after their retention leaving the counts as they were without reading as drift.
 */
import { createAttributionRepository } from "../../services/attribution/storage";
import type { AttributionRepository, NewClick } from "../../services/attribution/repository";
import { NO_CLICK_DETAILS } from "../../services/attribution/repository";
import { createSalesRepository } from "../../services/sales/storage";
import type { NewSale, SalesRepository } from "../../services/sales/repository";
import type { StatsQuery } from "../../shared/domain/stats";
import type { Database } from "../../shared/storage/database";
import { backends, counter, newSale, useRepository } from "./harness";

const unique = counter(1);
const nextProgram = counter(700);

const range = (programId: number, over: Partial<StatsQuery> = {}): StatsQuery => ({
  programId,
  test: false,
  start: new Date("2030-01-01T00:00:00Z"),
  end: new Date("2030-01-03T00:00:00Z"),
  ...over,
});
const sorted = <T extends { dimension: string; value: string }>(rows: T[]) => [...rows].sort((a, b) => a.dimension.localeCompare(b.dimension) || a.value.localeCompare(b.value));
const DE_MOBILE = { country: "DE", deviceType: "mobile", browser: "Firefox", referrerDomain: "blog.example" };

describe.each(backends)("breakdowns on %s", (_name, backend) => {
  describe("attribution: clicks and attributed leads", () => {
    let db: Database;
    const repo = useRepository<AttributionRepository>(backend, (opened) => createAttributionRepository((db = opened)));

    test("per dimension and value; bots, test and unattributed apart; drift reported; cleared details are no drift", async () => {
      const programId = nextProgram();
      const click = (partnerId: number, details: Partial<NewClick["details"]> & object, over: Partial<NewClick> = {}) =>
        repo().createClick({
          clickId: `clk_b${unique()}`,
          programId,
          partnerId,
          referralCode: `r${partnerId}`,
          isTest: false,
          landingUrl: null,
          referrer: null,
          userAgent: null,
          timestamp: new Date("2030-01-01T10:00:00Z"),
          details: { ...NO_CLICK_DETAILS, ...details },
          ...over,
        });
      const first = await click(1, DE_MOBILE);
      await click(1, { ...DE_MOBILE, browser: "Chrome" });
      await click(2, { country: "FR", deviceType: "desktop" });
      await click(2, { ...DE_MOBILE, isBot: true }); // a bot's: not counted
      await click(2, { ...DE_MOBILE, hostingNetwork: true }); // a hosting network's: not counted
      await click(1, DE_MOBILE, { isTest: true });
      await click(1, DE_MOBILE, { timestamp: new Date("2030-01-03T00:00:00Z") }); // after the range
      const lead = (partnerId: number | null, clickTraffic: typeof DE_MOBILE | null, isTest = false) =>
        repo().recordLead({ programId, customerKey: `c${unique()}`, email: null, clickId: null, partnerId, isTest, timestamp: new Date("2030-01-02T10:00:00Z"), clickTraffic });
      await lead(1, DE_MOBILE);
      await lead(2, null); // attributed without a click: the buckets
      await lead(null, DE_MOBILE); // unattributed: not counted
      // A lead gaining its partner later counts with its click's dimensions then.
      const key = `c${unique()}`;
      await repo().recordLead({ programId, customerKey: key, email: null, clickId: null, partnerId: null, isTest: false, timestamp: new Date("2030-01-02T11:00:00Z") });
      await repo().recordLead({
        programId,
        customerKey: key,
        email: null,
        clickId: first.clickId,
        partnerId: 1,
        isTest: false,
        timestamp: new Date("2030-01-02T11:00:00Z"),
        clickTraffic: DE_MOBILE,
      });

      const row = (dimension: string, value: string, clicks: number, leads: number) => ({ dimension, value, clicks, leads });
      // One row per value and family (clicks and leads come from one statement on SQL): summed here.
      const summed = (rows: Array<{ dimension: string; value: string; clicks: number; leads: number }>) => {
        const byKey = new Map<string, { dimension: string; value: string; clicks: number; leads: number }>();
        for (const r of rows) {
          const k = `${r.dimension}/${r.value}`;
          const e = byKey.get(k) ?? { dimension: r.dimension, value: r.value, clicks: 0, leads: 0 };
          byKey.set(k, { ...e, clicks: e.clicks + Number(r.clicks), leads: e.leads + Number(r.leads) });
        }
        return sorted([...byKey.values()]);
      };
      expect(summed(await repo().breakdowns(range(programId)))).toEqual(
        sorted([
          row("country", "DE", 2, 2),
          row("country", "FR", 1, 0),
          row("country", "unknown", 0, 1),
          row("device", "mobile", 2, 2),
          row("device", "desktop", 1, 0),
          row("device", "unknown", 0, 1),
          row("browser", "Firefox", 1, 2),
          row("browser", "Chrome", 1, 0),
          row("browser", "unknown", 1, 1),
          row("referrer", "blog.example", 2, 2),
          row("referrer", "direct", 1, 1),
        ]),
      );
      expect(summed(await repo().breakdowns(range(programId, { partnerIds: [2] })))).toEqual(
        sorted([
          row("country", "FR", 1, 0),
          row("country", "unknown", 0, 1),
          row("device", "desktop", 1, 0),
          row("device", "unknown", 0, 1),
          row("browser", "unknown", 1, 1),
          row("referrer", "direct", 1, 1),
        ]),
      );
      expect(summed(await repo().breakdowns(range(programId, { test: true })))).toEqual(
        sorted([row("country", "DE", 1, 0), row("device", "mobile", 1, 0), row("browser", "Firefox", 1, 0), row("referrer", "blog.example", 1, 0)]),
      );

      const ours = (drift: Awaited<ReturnType<AttributionRepository["rollupDrift"]>>) => drift.filter((d) => d.programId === programId);
      expect(ours(await repo().rollupDrift(1000))).toEqual([]);

      // The retention job clears a click's details: the breakdowns keep what they counted, and a check from a later
      // day on (the days whose clicks still have their details) sees no drift.
      if (db.kind === "sql") await db.sql.query("UPDATE clicks SET country = NULL, device_type = NULL, browser = NULL, referrer_domain = NULL WHERE click_id = $1", [first.clickId]);
      else
        await db.mongo
          .collection("clicks")
          .updateOne({ clickId: first.clickId }, { $set: { "details.country": null, "details.deviceType": null, "details.browser": null, "details.referrerDomain": null } });
      expect(summed(await repo().breakdowns(range(programId))).find((r) => r.dimension === "country" && r.value === "DE")).toEqual(row("country", "DE", 2, 2));
      expect(ours(await repo().rollupDrift(1000, "2030-01-02"))).toEqual([]);
      // Compared on that day too, it would: which is why reconcile starts after the retention.
      expect(ours(await repo().rollupDrift(1000, "2030-01-01")).map((d) => d.rollup)).toContain("clicks_breakdown_daily");

      // A row changed behind the repository's back is reported.
      if (db.kind === "sql") await db.sql.query("UPDATE leads_breakdown_daily SET leads = leads + 1 WHERE program_id = $1 AND partner_id = 2", [programId]);
      else await db.mongo.collection("leads_breakdown_daily").updateMany({ programId, partnerId: 2 }, { $inc: { leads: 1 } });
      const drift = ours(await repo().rollupDrift(1000, "2030-01-02"));
      expect(drift.length).toBe(4);
      for (const d of drift) expect(d).toMatchObject({ rollup: "leads_breakdown_daily", partnerId: 2, day: "2030-01-02", stored: { leads: 2 }, counted: { leads: 1 } });
      expect(drift.map((d) => d.key).sort()).toEqual(["live browser unknown", "live country unknown", "live device unknown", "live referrer direct"]);
    });
    test("the program's closed days are read once and again after a write dated in one of them (a past change); today's writes leave them", async () => {
      const programId = nextProgram();
      const click = (timestamp: Date) =>
        repo().createClick({
          clickId: `clk_p${unique()}`,
          programId,
          partnerId: 1,
          referralCode: "r1",
          isTest: false,
          landingUrl: null,
          referrer: null,
          userAgent: null,
          timestamp,
          details: { ...NO_CLICK_DETAILS, ...DE_MOBILE },
        });
      const past = { programId, test: false, start: new Date("2020-03-01T00:00:00Z"), end: new Date("2020-03-03T00:00:00Z") };
      const deClicks = async () => (await repo().breakdowns(past)).filter((r) => r.dimension === "country" && r.value === "DE").reduce((n, r) => n + Number(r.clicks), 0);
      const revision = async () =>
        db.kind === "sql"
          ? ((await db.sql.query<{ revision: string }>("SELECT revision::text FROM attribution_breakdown_changes WHERE program_id = $1", [programId]))[0]?.revision ?? "0")
          : String((await db.mongo.collection("attribution_breakdown_changes").findOne({ _id: programId } as never))?.revision ?? 0);

      await click(new Date()); // today's: no past change
      expect(await revision()).toBe("0");
      await click(new Date("2020-03-01T10:00:00Z"));
      expect(await revision()).toBe("1");
      expect(await deClicks()).toBe(1);
      // Kept: a rollup row changed behind the repository's back (no past change) is not read again...
      if (db.kind === "sql") await db.sql.query("UPDATE clicks_breakdown_daily SET clicks = clicks + 5 WHERE program_id = $1 AND partner_id = 0 AND dimension = 'country'", [programId]);
      else await db.mongo.collection("clicks_breakdown_daily").updateMany({ programId, partnerId: 0, dimension: "country" }, { $inc: { clicks: 5 } });
      expect(await deClicks()).toBe(1);
      // ...until a write dated in a past day moves the revision: then the range is summed again.
      await click(new Date("2020-03-02T10:00:00Z"));
      expect(await revision()).toBe("2");
      expect(await deClicks()).toBe(7);
      // One partner's rows are read whole every time.
      expect((await repo().breakdowns({ ...past, partnerIds: [1] })).filter((r) => r.dimension === "country").reduce((n, r) => n + Number(r.clicks), 0)).toBe(2);
    });
  });

  describe("sales: attributed sales and their amounts", () => {
    let db: Database;
    const repo = useRepository<SalesRepository>(backend, (opened) => createSalesRepository((db = opened)));

    test("per dimension and value in the program's currency; unattributed and test apart; a conversion moves them; drift reported", async () => {
      const programId = nextProgram();
      const sale = (over: Partial<NewSale>) => repo().insertSale(newSale(programId, { partnerId: 1, attributionMethod: "click", occurredAt: new Date("2030-01-01T08:00:00Z"), ...over }));
      await sale({ amountCents: 1000, clickTraffic: DE_MOBILE });
      await sale({ amountCents: 2000, clickTraffic: { ...DE_MOBILE, country: "FR" }, partnerId: 2 });
      await sale({ amountCents: 400, attributionMethod: "coupon" }); // no click: the buckets
      await sale({ amountCents: 700, currency: "eur", clickTraffic: DE_MOBILE }); // another currency: counted, no amount
      await sale({ amountCents: 900, partnerId: null, attributionMethod: null, clickTraffic: DE_MOBILE }); // unattributed
      await sale({ amountCents: 300, isTest: true, clickTraffic: DE_MOBILE });

      const country = (rows: Awaited<ReturnType<SalesRepository["breakdowns"]>>) => sorted(rows.filter((r) => r.dimension === "country"));
      expect(country(await repo().breakdowns(range(programId), "usd"))).toEqual([
        { dimension: "country", value: "DE", sales: 2, amountCents: 1000 },
        { dimension: "country", value: "FR", sales: 1, amountCents: 2000 },
        { dimension: "country", value: "unknown", sales: 1, amountCents: 400 },
      ]);
      expect(sorted(await repo().breakdowns(range(programId, { partnerIds: [2] }), "usd"))).toEqual(
        sorted([
          { dimension: "country", value: "FR", sales: 1, amountCents: 2000 },
          { dimension: "device", value: "mobile", sales: 1, amountCents: 2000 },
          { dimension: "browser", value: "Firefox", sales: 1, amountCents: 2000 },
          { dimension: "referrer", value: "blog.example", sales: 1, amountCents: 2000 },
        ]),
      );
      expect(country(await repo().breakdowns(range(programId, { test: true }), "usd"))).toEqual([{ dimension: "country", value: "DE", sales: 1, amountCents: 300 }]);

      const ours = (drift: Awaited<ReturnType<SalesRepository["rollupDrift"]>>) => drift.filter((d) => d.programId === programId);
      expect(ours(await repo().rollupDrift(1000))).toEqual([]);
      if (db.kind === "sql") await db.sql.query("UPDATE sales_breakdown_daily SET sales = sales + 1 WHERE program_id = $1 AND partner_id = 2", [programId]);
      else await db.mongo.collection("sales_breakdown_daily").updateMany({ programId, partnerId: 2 }, { $inc: { sales: 1 } });
      const drift = ours(await repo().rollupDrift(1000));
      expect(drift).toHaveLength(4);
      for (const d of drift) expect(d).toMatchObject({ rollup: "sales_breakdown_daily", partnerId: 2, stored: { sales: 2 }, counted: { sales: 1 } });
    });

    test("a sale dated in a closed day moves the program's revision: the closed days are summed again", async () => {
      const programId = nextProgram();
      const past = { programId, test: false, start: new Date("2020-03-01T00:00:00Z"), end: new Date("2020-03-03T00:00:00Z") };
      const sale = (occurredAt: Date, amountCents: number) =>
        repo().insertSale(newSale(programId, { partnerId: 1, attributionMethod: "click", occurredAt, amountCents, clickTraffic: DE_MOBILE }));
      const de = async () => (await repo().breakdowns(past, "usd")).find((r) => r.dimension === "country" && r.value === "DE");
      await sale(new Date(), 100); // today's: outside the range, no past change
      await sale(new Date("2020-03-01T08:00:00Z"), 1000);
      expect(await de()).toEqual({ dimension: "country", value: "DE", sales: 1, amountCents: 1000 });
      expect(await de()).toEqual({ dimension: "country", value: "DE", sales: 1, amountCents: 1000 });
      await sale(new Date("2020-03-02T08:00:00Z"), 500);
      expect(await de()).toEqual({ dimension: "country", value: "DE", sales: 2, amountCents: 1500 });
      // Summed in another currency: kept apart.
      expect(await repo().breakdowns(past, "eur")).toEqual(expect.arrayContaining([{ dimension: "country", value: "DE", sales: 2, amountCents: 0 }]));
    });
  });
});
