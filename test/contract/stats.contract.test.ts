/**
 * The overview's stats methods (attribution.activityStats, sales.salesStats,
 * commissions.commissionStats and programBalances) on every reachable backend:
 * the same rows per UTC day and per partner, live and test apart, partners
 * filtered (the daily rows too: one partner's overview), all time without daily rows.
 */
import * as ledger from "../../services/commissions/ledger";
import { checkLedgerInvariants } from "../../services/commissions/invariants";
import { createAttributionRepository } from "../../services/attribution/storage";
import type { AttributionRepository } from "../../services/attribution/repository";
import { createCommissionsRepository } from "../../services/commissions/storage";
import type { CommissionsRepository } from "../../services/commissions/repository";
import { createSalesRepository } from "../../services/sales/storage";
import type { NewSale, SalesRepository } from "../../services/sales/repository";
import { packFigures } from "../../shared/storage/running-packed";
import { lastSafeDay } from "../../shared/storage/running-sql";
import { PostgresDatabase } from "../../shared/storage/sql";
import type { StatsQuery, TopPartners } from "../../shared/domain/stats";
import type { Database } from "../../shared/storage/database";
import { Client } from "pg";
import { postgres } from "../support/databases";
import { onPostgresOnly } from "../support/query-plans";
import { backends, counter, newSale, newSaleCommission, useRepository } from "./harness";

const unique = counter(1);
const nextProgram = counter(500);

const JAN1 = new Date("2030-01-01T00:00:00.000Z");
const JAN3 = new Date("2030-01-03T00:00:00.000Z");
/** Jan 1st and 2nd (UTC), the range the tests ask for. */
const range = (programId: number, over: Partial<StatsQuery> = {}): StatsQuery => ({ programId, test: false, start: JAN1, end: JAN3, ...over });
/** Adds `by` to a figure of the program's rows of a rollup behind the repository's back: what reconcile must notice. */
async function bumpRollup(db: Database, rollup: string, figure: string, programId: number, partnerId: number, by = 1): Promise<void> {
  if (db.kind === "sql") await db.sql.query(`UPDATE ${rollup} SET ${figure} = ${figure} + $3 WHERE program_id = $1 AND partner_id = $2`, [programId, partnerId, by]);
  else await db.mongo.collection(rollup).updateMany({ programId, partnerId }, { $inc: { [figure]: by } });
}

/**
 * A page of partners over ranges across months (whole months read from the monthly rollups, the days around them
 * from the daily ones) and all time: each partner's figures equal its days summed (the daily series of that
 * partner alone, read from the daily rollup only).
 */
const MONTH_DAY = (i: number) => new Date(Date.UTC(2029, 9, 20 + 9 * i, 12)); // every 9 days from 2029-10-20 to 2030-03-14
async function expectPagesOfDaysSummed<F extends Record<string, number>>(
  programId: number,
  stats: (q: StatsQuery) => Promise<{ byDay: Array<{ day: string } & F>; byPartner: Array<{ partnerId: number } & F> }>,
): Promise<void> {
  const ranges: Array<[string, string] | null> = [["2029-10-25", "2030-02-14"], ["2029-11-01", "2030-01-01"], ["2029-11-15", "2029-12-20"], ["2029-12-01", "2030-03-15"], null];
  for (const r of ranges) {
    const [start, end] = (r ?? ["2029-01-01", "2031-01-01"]).map((d) => new Date(`${d}T00:00:00Z`));
    const page = await stats({ programId, test: false, start: r ? start : null, end: r ? end : null, partnerIds: [1, 2, 3], days: false });
    const expected = [];
    for (const partnerId of [1, 2, 3]) {
      const { byDay } = await stats({ programId, test: false, start, end, partnerIds: [partnerId], partners: false });
      if (!byDay.length) continue;
      const { day: _day, ...first } = byDay[0];
      const summed = Object.fromEntries(Object.keys(first).map((f) => [f, byDay.reduce((n, d) => n + d[f], 0)]));
      expected.push({ partnerId, ...summed });
    }
    expect({ r, byPartner: sortBy(page.byPartner, "partnerId") }).toEqual({ r, byPartner: expected });
  }
}

/**
 * The running totals' days (shared/storage/running-sql.ts): eleven days in the past (0-10), so a write of any of
 * them is a write of a past day; the job's "today" is day 11.
 */
const PAST_DAY = (n: number) => new Date(Date.UTC(2026, 2, 1 + n, 12));
const PAST_TODAY = PAST_DAY(11); // day 11: the job builds days 0-10 (yesterday: the database's clock is far later)
const pastRange = (programId: number, from: number, to: number, over: Partial<StatsQuery> = {}): StatsQuery =>
  range(programId, { start: new Date(Date.UTC(2026, 2, 1 + from)), end: new Date(Date.UTC(2026, 2, 1 + to)), ...over });

/** Runs an owner's job until it has nothing left to build; how many program-days it built. */
async function buildAll(extend: (today: Date) => Promise<number>): Promise<number> {
  let total = 0;
  for (let built = await extend(PAST_TODAY); built > 0; built = await extend(PAST_TODAY)) total += built;
  return total;
}

/**
 * topPartners equals the ranking of a recount (the rollup's per-partner figures) for every range of the eleven days,
 * all time, and some partners only: whatever part of each range the running totals cover.
 */
async function expectRankingsOfRecount(
  programId: number,
  top: (q: StatsQuery) => Promise<TopPartners>,
  figures: (q: StatsQuery) => Promise<Array<{ partnerId: number; figure: number }>>,
): Promise<void> {
  const queries: StatsQuery[] = [range(programId, { start: null, end: null }), pastRange(programId, 0, 11, { partnerIds: [2, 3] })];
  for (let from = 0; from < 11; from++) for (let to = from + 1; to <= 11; to++) queries.push(pastRange(programId, from, to));
  for (const q of queries) {
    const ranked = (await figures(q)).filter((r) => r.figure > 0).sort((a, b) => b.figure - a.figure || a.partnerId - b.partnerId);
    expect({ q, top: await top(q) }).toEqual({ q, top: { partnerIds: ranked.slice(0, 3).map((r) => r.partnerId), partnersCounted: ranked.length } });
  }
}

/** A sale of `programId` attributed to partner 1 on Jan 1st 2030 unless `over` says otherwise. */
const attributedSale = (programId: number, over: Partial<NewSale>): NewSale =>
  newSale(programId, { partnerId: 1, attributionMethod: "customer_key", occurredAt: new Date("2030-01-01T08:00:00Z"), ...over });

const sortBy = <T>(rows: T[], key: keyof T) => [...rows].sort((a, b) => String(a[key]).localeCompare(String(b[key]), undefined, { numeric: true }));

describe.each(backends)("stats methods on %s", (_name, backend) => {
  describe("attribution.activityStats", () => {
    let db: Database;
    const repo = useRepository<AttributionRepository>(backend, (opened) => createAttributionRepository((db = opened)));

    test("clicks and attributed leads per UTC day and per partner; test, unattributed and out-of-range ones apart", async () => {
      const programId = nextProgram();
      const click = (partnerId: number, timestamp: string, isTest = false) =>
        repo().createClick({
          clickId: `clk_s${unique()}`,
          programId,
          partnerId,
          referralCode: `r${partnerId}`,
          isTest,
          landingUrl: null,
          referrer: null,
          userAgent: null,
          timestamp: new Date(timestamp),
        });
      const lead = (partnerId: number | null, timestamp: string, isTest = false) =>
        repo().recordLead({ programId, customerKey: `c${unique()}`, email: null, clickId: null, partnerId, isTest, timestamp: new Date(timestamp) });
      await click(1, "2030-01-01T00:00:00Z");
      await click(1, "2030-01-01T23:59:59.999Z");
      await click(2, "2030-01-02T10:00:00Z");
      await click(2, "2029-12-31T23:59:59Z"); // before the range
      await click(2, "2030-01-03T00:00:00Z"); // the range's end is exclusive
      await click(1, "2030-01-01T05:00:00Z", true); // test
      await lead(1, "2030-01-02T01:00:00Z");
      await lead(2, "2030-01-02T02:00:00Z");
      await lead(null, "2030-01-02T03:00:00Z"); // unattributed
      await lead(2, "2030-01-01T04:00:00Z", true); // test

      const live = await repo().activityStats(range(programId));
      expect(sortBy(live.byDay, "day")).toEqual([
        { day: "2030-01-01", clicks: 2, leads: 0 },
        { day: "2030-01-02", clicks: 1, leads: 2 },
      ]);
      expect(sortBy(live.byPartner, "partnerId")).toEqual([
        { partnerId: 1, clicks: 2, leads: 1 },
        { partnerId: 2, clicks: 1, leads: 1 },
      ]);

      const test = await repo().activityStats(range(programId, { test: true }));
      expect(sortBy(test.byDay, "day")).toEqual([{ day: "2030-01-01", clicks: 1, leads: 1 }]);

      const onlyTwo = await repo().activityStats(range(programId, { partnerIds: [2, 99] }));
      expect(onlyTwo.byPartner).toEqual([{ partnerId: 2, clicks: 1, leads: 1 }]);
      expect(sortBy(onlyTwo.byDay, "day")).toEqual([{ day: "2030-01-02", clicks: 1, leads: 1 }]);

      const allTime = await repo().activityStats(range(programId, { start: null, end: null }));
      expect(allTime.byDay).toEqual([]);
      expect(sortBy(allTime.byPartner, "partnerId")).toEqual([
        { partnerId: 1, clicks: 2, leads: 1 },
        { partnerId: 2, clicks: 3, leads: 1 },
      ]);

      expect(await repo().activityStats(range(nextProgram()))).toEqual({ byDay: [], byPartner: [] });

      // The overview's partner table: most clicks first (ties: lower id), the range's only.
      expect(await repo().topPartners(range(programId), 1)).toEqual({ partnerIds: [1], partnersCounted: 2 });
      await click(2, "2030-01-02T11:00:00Z"); // ties with partner 1
      expect(await repo().topPartners(range(programId), 5)).toEqual({ partnerIds: [1, 2], partnersCounted: 2 });
      expect(await repo().topPartners(range(programId, { test: true }), 5)).toEqual({ partnerIds: [1], partnersCounted: 1 });

      // The rollups are what the clicks and leads add up to; a row changed behind the repository's back is reported (reconcile).
      expect(await repo().rollupDrift(100)).toEqual([]);
      await bumpRollup(db, "clicks_daily", "clicks", programId, 2);
      const drift = (day: string, clicks: number) => ({ rollup: "clicks_daily", programId, partnerId: 2, day, key: "live", stored: { clicks: clicks + 1 }, counted: { clicks } });
      expect(sortBy(await repo().rollupDrift(100), "day")).toEqual([drift("2029-12-31", 1), drift("2030-01-02", 2), drift("2030-01-03", 1)]);
    });
  });

  describe("sales.salesStats", () => {
    let db: Database;
    const repo = useRepository<SalesRepository>(backend, (opened) => createSalesRepository((db = opened)));

    test("a page of partners over months: their whole months from sales_monthly, equal to their days summed; drift reported", async () => {
      const programId = nextProgram();
      for (let i = 0; i < 16; i++)
        for (const partnerId of [1, 2, 3])
          if ((i + partnerId) % 3 !== 0) await repo().insertSale(attributedSale(programId, { partnerId, amountCents: 100 * i + partnerId, occurredAt: MONTH_DAY(i) }));
      await repo().insertSale(attributedSale(programId, { partnerId: 2, amountCents: 5_000, currency: "eur", occurredAt: MONTH_DAY(3) }));
      await repo().insertSale(attributedSale(programId, { partnerId: 2, amountCents: 7_000, isTest: true, occurredAt: MONTH_DAY(3) }));
      await expectPagesOfDaysSummed(programId, (q) => repo().salesStats(q, "usd"));

      expect(await repo().rollupDrift(100)).toEqual([]);
      await bumpRollup(db, "sales_monthly", "sales", programId, 1);
      const drift = await repo().rollupDrift(100);
      expect(drift.length).toBeGreaterThan(3);
      for (const d of drift) expect(d).toMatchObject({ rollup: "sales_monthly", programId, partnerId: 1, day: expect.stringMatching(/-01$/), stored: { sales: d.counted.sales + 1 } });
      await bumpRollup(db, "sales_monthly", "sales", programId, 1, -1);
    });

    test("attributed sales and revenue in the program's currency per day and per partner", async () => {
      const programId = nextProgram();
      const sale = (over: Partial<NewSale>) => repo().insertSale(attributedSale(programId, over));
      await sale({ amountCents: 12_345 });
      await sale({ amountCents: 1, occurredAt: new Date("2030-01-02T23:00:00Z") });
      await sale({ partnerId: 2, amountCents: 5_000, occurredAt: new Date("2030-01-02T00:00:00Z") });
      await sale({ partnerId: 2, amountCents: 777, currency: "eur" }); // counted, not in revenue
      await sale({ partnerId: null, attributionMethod: null, amountCents: 99_999 }); // unattributed
      await sale({ isTest: true, amountCents: 400 });
      await sale({ amountCents: 50, occurredAt: new Date("2030-01-05T00:00:00Z") }); // after the range

      const live = await repo().salesStats(range(programId), "usd");
      expect(sortBy(live.byDay, "day")).toEqual([
        { day: "2030-01-01", sales: 2, revenueCents: 12_345 },
        { day: "2030-01-02", sales: 2, revenueCents: 5_001 },
      ]);
      expect(sortBy(live.byPartner, "partnerId")).toEqual([
        { partnerId: 1, sales: 2, revenueCents: 12_346 },
        { partnerId: 2, sales: 2, revenueCents: 5_000 },
      ]);
      expect((await repo().salesStats(range(programId, { test: true }), "usd")).byPartner).toEqual([{ partnerId: 1, sales: 1, revenueCents: 400 }]);
      // One partner's overview: the days are that partner's alone too.
      const onlyTwo = await repo().salesStats(range(programId, { partnerIds: [2] }), "usd");
      expect(sortBy(onlyTwo.byDay, "day")).toEqual([
        { day: "2030-01-01", sales: 1, revenueCents: 0 },
        { day: "2030-01-02", sales: 1, revenueCents: 5_000 },
      ]);
      expect(onlyTwo.byPartner).toEqual([{ partnerId: 2, sales: 2, revenueCents: 5_000 }]);
      // The overview's figures of its ranked partners: no daily rows asked, none read.
      expect(await repo().salesStats(range(programId, { partnerIds: [2], days: false }), "usd")).toEqual({ byDay: [], byPartner: onlyTwo.byPartner });
      const allTime = await repo().salesStats(range(programId, { start: null, end: null, partnerIds: [1] }), "usd");
      expect(allTime).toEqual({ byDay: [], byPartner: [{ partnerId: 1, sales: 3, revenueCents: 12_396 }] });

      // The overview's partner table: most revenue in the program's currency first (ties: lower id), above zero only.
      expect(await repo().topPartners(range(programId), "usd", 1)).toEqual({ partnerIds: [1], partnersCounted: 2 });
      expect(await repo().topPartners(range(programId), "usd", 5)).toEqual({ partnerIds: [1, 2], partnersCounted: 2 });
      expect(await repo().topPartners(range(programId), "eur", 5)).toEqual({ partnerIds: [2], partnersCounted: 1 });
      expect(await repo().topPartners(range(programId, { test: true }), "usd", 5)).toEqual({ partnerIds: [1], partnersCounted: 1 });
      await sale({ partnerId: 3, amountCents: 12_346, occurredAt: new Date("2030-01-02T12:00:00Z") }); // ties with partner 1
      expect(await repo().topPartners(range(programId), "usd", 2)).toEqual({ partnerIds: [1, 3], partnersCounted: 3 });

      // sales_daily is what the sales add up to; a row changed behind the repository's back is reported (reconcile).
      expect(await repo().rollupDrift(100)).toEqual([]);
      await bumpRollup(db, "sales_daily", "sales", programId, 2);
      const drift = (day: string, key: string, amountCents: number) => ({
        rollup: "sales_daily",
        programId,
        partnerId: 2,
        day,
        key,
        stored: { sales: 2, amountCents },
        counted: { sales: 1, amountCents },
      });
      expect(sortBy(await repo().rollupDrift(100), "day")).toEqual([drift("2030-01-01", "live eur", 777), drift("2030-01-02", "live usd", 5_000)]);
    });
  });

  describe("commissions.commissionStats and programBalances", () => {
    let db: Database;
    const repo = useRepository<CommissionsRepository>(backend, (opened) => createCommissionsRepository((db = opened)));

    test("a page of partners over months: their whole months from commissions_monthly, equal to their days summed; reconcile checks it", async () => {
      const programId = nextProgram();
      for (let i = 0; i < 16; i++)
        for (const partnerId of [1, 2, 3]) {
          if ((i + partnerId) % 3 === 0) continue;
          const saleId = unique() + 20_000;
          const createdAt = MONTH_DAY(i);
          const input = newSaleCommission(programId, partnerId, saleId, 100 * i + partnerId, createdAt, { currency: i === 5 ? "eur" : "usd", saleAmountCents: 10_000 });
          const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, input, createdAt));
          if (i % 2 === 0) await repo().transaction((tx) => ledger.approveCommission(tx, commission.id, createdAt));
          if (i % 4 === 1) await repo().transaction((tx) => ledger.reverseCommission(tx, { saleId, amountCents: 5_000, reasonCode: "refund", reason: "half" }, createdAt));
        }
      await expectPagesOfDaysSummed(programId, (q) => repo().commissionStats(q, "usd"));

      const rules = async () => checkLedgerInvariants(await repo().ledgerSnapshot()).violations.map((v) => v.rule);
      expect(await rules()).toEqual([]);
      await bumpRollup(db, "commissions_monthly", "commissions", programId, 2);
      const tampered = await rules();
      expect(tampered.length).toBeGreaterThan(3);
      expect(new Set(tampered)).toEqual(new Set(["rollup.commissions_monthly"]));
      await bumpRollup(db, "commissions_monthly", "commissions", programId, 2, -1);
    });

    test("net amounts by current state, what refunds took back as reversed, per creation day and partner", async () => {
      const programId = nextProgram();
      const create = async (partnerId: number, amountCents: number, createdAt: Date, currency = "usd") => {
        const saleId = unique() + 10_000;
        const input = newSaleCommission(programId, partnerId, saleId, amountCents, createdAt, { currency });
        const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, input, createdAt));
        return { ...commission, saleId };
      };
      const d1 = new Date("2030-01-01T10:00:00Z");
      const d2 = new Date("2030-01-02T10:00:00Z");
      const later = new Date("2030-01-10T00:00:00Z");
      const a = await create(1, 2000, d1); // credited, then paid
      const b = await create(1, 1000, d1); // credited, half refunded
      const c = await create(2, 3000, d2); // pending, fully refunded
      await create(2, 500, d2); // pending
      await create(2, 700, d2, "eur"); // another currency: not counted
      await create(2, 900, new Date("2030-01-03T00:00:00Z")); // after the range

      await repo().transaction((tx) => ledger.approveCommission(tx, a.id, later));
      await repo().transaction((tx) => ledger.approveCommission(tx, b.id, later));
      await repo().transaction((tx) => ledger.reverseCommission(tx, { saleId: b.saleId, amountCents: b.saleAmountCents / 2, reasonCode: "refund", reason: "half" }, later));
      await repo().transaction((tx) => ledger.reverseCommission(tx, { saleId: c.saleId, reasonCode: "chargeback", reason: "all" }, later));
      const w = await repo().transaction((tx) => ledger.createWithdrawal(tx, { partnerId: 1, programId, currency: "usd" }, 2000, later));
      await repo().transaction((tx) => ledger.payWithdrawal(tx, w.id, later));

      const stats = await repo().commissionStats(range(programId), "usd");
      expect(sortBy(stats.byDay, "day")).toEqual([
        { day: "2030-01-01", commissions: 2, pendingCents: 0, creditedCents: 500, paidCents: 2000, reversedCents: 500 },
        { day: "2030-01-02", commissions: 2, pendingCents: 500, creditedCents: 0, paidCents: 0, reversedCents: 3000 },
      ]);
      expect(sortBy(stats.byPartner, "partnerId")).toEqual([
        { partnerId: 1, commissions: 2, pendingCents: 0, creditedCents: 500, paidCents: 2000, reversedCents: 500 },
        { partnerId: 2, commissions: 2, pendingCents: 500, creditedCents: 0, paidCents: 0, reversedCents: 3000 },
      ]);
      // One partner's overview: the days are that partner's alone too.
      const onlyOne = await repo().commissionStats(range(programId, { partnerIds: [1] }), "usd");
      expect(onlyOne).toEqual({
        byDay: [{ day: "2030-01-01", commissions: 2, pendingCents: 0, creditedCents: 500, paidCents: 2000, reversedCents: 500 }],
        byPartner: [{ partnerId: 1, commissions: 2, pendingCents: 0, creditedCents: 500, paidCents: 2000, reversedCents: 500 }],
      });
      const allTime = await repo().commissionStats(range(programId, { start: null, end: null, partnerIds: [2] }), "usd");
      expect(allTime).toEqual({ byDay: [], byPartner: [{ partnerId: 2, commissions: 3, pendingCents: 1400, creditedCents: 0, paidCents: 0, reversedCents: 3000 }] });

      const balances = await repo().programBalances(programId, "usd");
      // Partner 2's chargeback opened a (zero) balance row; partner 1 has what was credited, minus the refund and the payout.
      expect(balances.map((x) => [x.partnerId, x.balanceCents])).toEqual([
        [1, 500],
        [2, 0],
      ]);
      expect((await repo().programBalances(programId, "usd", [1, 3])).map((x) => x.partnerId)).toEqual([1]);
      expect(await repo().programBalances(programId, "eur")).toEqual([]);
    });
  });

  describe("running totals: the overview's partner ranking over any range", () => {
    let salesDb: Database;
    const sales = useRepository<SalesRepository>(backend, (opened) => createSalesRepository((salesDb = opened)));
    const attribution = useRepository<AttributionRepository>(backend, createAttributionRepository);

    /** A sale of `programId` on a past day (PAST_DAY), attributed to `partnerId`. */
    const pastSale =
      (programId: number) =>
      (partnerId: number, day: number, amountCents: number, over: Partial<NewSale> = {}) =>
        sales().insertSale(attributedSale(programId, { partnerId, amountCents, occurredAt: PAST_DAY(day), ...over }));

    test("sales: built up to yesterday, moved back by a sale dated earlier, every range equal to a recount; drift reported", async () => {
      const programId = nextProgram();
      const sale = pastSale(programId);
      for (const [partnerId, day, amount] of [
        [1, 0, 500],
        [2, 0, 300],
        [2, 3, 400],
        [3, 5, 900],
        [1, 7, 100],
        [4, 9, 50],
        [3, 10, 1],
        [5, 2, 700],
        [5, 8, 1],
      ])
        await sale(partnerId, day, amount);
      await sale(4, 4, 9_999, { currency: "eur" });
      await sale(4, 4, 9_999, { isTest: true });
      const check = () =>
        expectRankingsOfRecount(
          programId,
          (q) => sales().topPartners(q, "usd", 3),
          async (q) => (await sales().salesStats(q, "usd")).byPartner.map((r) => ({ partnerId: r.partnerId, figure: r.revenueCents })),
        );
      await check(); // nothing built yet: the rollup's rows alone
      expect(await buildAll((today) => sales().extendRunningTotals(today))).toBe(22); // days 0-10 built and packed
      await check();
      await sale(4, 4, 10_000); // a sale dated in the past: the built days go back before its day
      await check();
      expect(await buildAll((today) => sales().extendRunningTotals(today))).toBe(14); // days 4-10 again
      await check();
      // Days built and not packed (by an instance of an earlier version): ranked from the rollup until packed.
      if (salesDb.kind === "sql") {
        await salesDb.sql.query("DELETE FROM sales_running_packed WHERE program_id = $1 AND day > '2026-03-07'", [programId]);
        await salesDb.sql.query("UPDATE sales_running_through SET packed_through_day = '2026-03-07' WHERE program_id = $1", [programId]);
      } else {
        await salesDb.mongo.collection("sales_running_packed").deleteMany({ programId, day: { $gt: "2026-03-07" } });
        await salesDb.mongo.collection("sales_running_through").updateOne({ _id: programId as never }, { $set: { packedThroughDay: "2026-03-07" } });
      }
      await check();
      expect(await buildAll((today) => sales().extendRunningTotals(today))).toBe(4); // days 7-10 packed
      await check();

      expect(await sales().rollupDrift(100)).toEqual([]);
      const tamper = async (by: number) => {
        if (salesDb.kind === "sql")
          await salesDb.sql.query("UPDATE sales_running SET amount_cents = amount_cents + $2 WHERE program_id = $1 AND partner_id = 1 AND day = '2026-03-05'", [programId, by]);
        else await salesDb.mongo.collection("sales_running").updateOne({ programId, partnerId: 1, day: "2026-03-05" }, { $inc: { amountCents: by } });
      };
      await tamper(1);
      const drift = (rollup: string, day: string, stored: number, counted: number) => ({
        rollup,
        programId,
        partnerId: 1,
        day,
        key: "live usd",
        stored: { amountCents: stored },
        counted: { amountCents: counted },
      });
      // The row differs from the day before's plus its day's sales, and the day's packed totals from the rows.
      expect(await sales().rollupDrift(100)).toEqual([
        drift("sales_running", "2026-03-05", 501, 500),
        drift("sales_running", "2026-03-06", 500, 501),
        drift("sales_running_packed", "2026-03-05", 500, 501),
      ]);
      await tamper(-1);
      expect(await sales().rollupDrift(100)).toEqual([]);
      // A packed day holding a partner its rows do not: reported with the partner.
      const packedDay = { programId, isTest: false, currency: "usd", day: "2026-03-05" };
      const packedFigures = async () =>
        salesDb.kind === "sql"
          ? (
              await salesDb.sql.query<{ figures: Uint8Array }>("SELECT figures FROM sales_running_packed WHERE program_id = $1 AND NOT is_test AND currency = 'usd' AND day = '2026-03-05'", [
                programId,
              ])
            )[0].figures
          : ((await salesDb.mongo.collection("sales_running_packed").findOne(packedDay))!.figures as { value(): Uint8Array }).value();
      const setPacked = async (figures: Uint8Array) => {
        if (salesDb.kind === "sql")
          await salesDb.sql.query("UPDATE sales_running_packed SET figures = $2 WHERE program_id = $1 AND NOT is_test AND currency = 'usd' AND day = '2026-03-05'", [programId, figures]);
        else await salesDb.mongo.collection("sales_running_packed").updateOne(packedDay, { $set: { figures: Buffer.from(figures) } });
      };
      const built = Buffer.from(await packedFigures());
      await setPacked(Buffer.concat([built, packFigures([{ partnerId: 99, figure: 5 }])]));
      expect(await sales().rollupDrift(100)).toEqual([{ ...drift("sales_running_packed", "2026-03-05", 5, 0), partnerId: 99 }]);
      await setPacked(built);
      expect(await sales().rollupDrift(100)).toEqual([]);
    });

    test("builds racing sales of past days never record a day without them", async () => {
      const programId = nextProgram();
      const sale = pastSale(programId);
      await sale(1, 0, 100);
      await Promise.all([
        (async () => {
          for (let i = 0; i < 60; i++) await sale(1 + (i % 7), i % 10, 100 + i);
        })(),
        (async () => {
          for (let i = 0; i < 30; i++) await sales().extendRunningTotals(PAST_TODAY);
        })(),
      ]);
      await buildAll((today) => sales().extendRunningTotals(today));
      expect(await sales().rollupDrift(100)).toEqual([]);
    });

    test("the job builds up to yesterday by the clock (MongoDB from a quarter of an hour after midnight); today ranks from the rollup", async () => {
      const programId = nextProgram();
      const dayOf = (at: Date) => at.toISOString().slice(0, 10);
      const dayBefore = (at: Date) => dayOf(new Date(Date.parse(dayOf(at)) - 86_400_000));
      const now = new Date();
      const yesterdayNoon = new Date(Date.parse(`${dayBefore(now)}T12:00:00Z`));
      await sales().insertSale(attributedSale(programId, { partnerId: 1, amountCents: 500, occurredAt: yesterdayNoon }));
      await sales().insertSale(attributedSale(programId, { partnerId: 2, amountCents: 900, occurredAt: now }));
      while ((await sales().extendRunningTotals(new Date())) > 0);
      const through =
        salesDb.kind === "sql"
          ? (await salesDb.sql.query<{ day: string }>("SELECT to_char(through_day, 'YYYY-MM-DD') AS day FROM sales_running_through WHERE program_id = $1", [programId]))[0].day
          : (await salesDb.mongo.collection("sales_running_through").findOne({ _id: programId as never }))!.throughDay;
      expect(through).toBe(dayBefore(salesDb.kind === "sql" ? now : new Date(now.getTime() - 15 * 60_000)));
      const twoDays = range(programId, { start: new Date(Date.parse(dayBefore(now))), end: new Date(Date.parse(dayOf(now)) + 86_400_000) });
      expect(await sales().topPartners(twoDays, "usd", 3)).toEqual({ partnerIds: [2, 1], partnersCounted: 2 });
    });

    test("clicks and leads: the partners' figures and the ranking from clicks_running and leads_running equal a count of what was written", async () => {
      const programId = nextProgram();
      const written: Array<{ kind: "clicks" | "leads"; partnerId: number; day: number }> = [];
      const click = async (partnerId: number, day: number) => {
        written.push({ kind: "clicks", partnerId, day });
        await attribution().createClick({
          clickId: `clk_r${unique()}`,
          programId,
          partnerId,
          referralCode: `r${partnerId}`,
          isTest: false,
          landingUrl: null,
          referrer: null,
          userAgent: null,
          timestamp: PAST_DAY(day),
        });
      };
      const lead = async (partnerId: number, day: number) => {
        written.push({ kind: "leads", partnerId, day });
        await attribution().recordLead({ programId, customerKey: `c${unique()}`, email: null, clickId: null, partnerId, isTest: false, timestamp: PAST_DAY(day) });
      };
      for (const [partnerId, day] of [
        [1, 0],
        [1, 1],
        [2, 1],
        [2, 4],
        [2, 6],
        [3, 9],
        [3, 10],
        [4, 2],
        [1, 8],
      ])
        await click(partnerId, day);
      for (const [partnerId, day] of [
        [2, 0],
        [5, 3],
        [2, 7],
        [1, 10],
      ])
        await lead(partnerId, day);
      // What was written on the query's days (PAST_DAY(n) is noon of day n) by its partners.
      const counted = (q: StatsQuery, kind: "clicks" | "leads") => {
        const byPartner = new Map<number, number>();
        for (const w of written) {
          const at = PAST_DAY(w.day);
          if (w.kind !== kind || (q.start && at < q.start) || (q.end && at >= q.end) || (q.partnerIds && !q.partnerIds.includes(w.partnerId))) continue;
          byPartner.set(w.partnerId, (byPartner.get(w.partnerId) ?? 0) + 1);
        }
        return [...byPartner].map(([partnerId, figure]) => ({ partnerId, figure }));
      };
      const check = async () => {
        await expectRankingsOfRecount(
          programId,
          (q) => attribution().topPartners(q, 3),
          async (q) => counted(q, "clicks"),
        );
        for (let from = 0; from < 11; from++)
          for (const q of [pastRange(programId, from, 11), pastRange(programId, from, from + 1, { partnerIds: [1, 2] }), range(programId, { start: null, end: null })]) {
            const zero = (partnerId: number) => ({ partnerId, clicks: 0, leads: 0 });
            const want = new Map<number, { partnerId: number; clicks: number; leads: number }>();
            for (const kind of ["clicks", "leads"] as const) for (const c of counted(q, kind)) want.set(c.partnerId, { ...(want.get(c.partnerId) ?? zero(c.partnerId)), [kind]: c.figure });
            expect({ q, partners: sortBy((await attribution().activityStats({ ...q, days: false })).byPartner, "partnerId") }).toEqual({
              q,
              partners: sortBy([...want.values()], "partnerId"),
            });
          }
      };
      await check(); // nothing built yet: the rollups' rows alone
      expect(await buildAll((today) => attribution().extendRunningTotals(today))).toBe(33); // clicks built and packed, leads built (days 0-10)
      await check();
      await click(4, 1);
      await lead(3, 2);
      await check();
      expect(await buildAll((today) => attribution().extendRunningTotals(today))).toBe(29); // clicks' days 1-10, leads' 2-10
      await check();
      expect(await attribution().rollupDrift(100)).toEqual([]);
    });
  });
});

/**
 * The job's check before it builds yesterday (running-sql.ts, lastSafeDay), on PostgreSQL: a transaction open in the
 * database holds yesterday back when it began before midnight, or when the job's role may not see when it began
 * (another role's session); an idle session holds nothing back. Midnight cannot be moved, so the second case stands
 * in for the first: both are the same condition of one statement.
 */
onPostgresOnly("Running totals' last safe day SKIPPED: TEST_POSTGRES_URL is not set.")("running totals' last safe day on PostgreSQL", () => {
  test("a transaction the job's role cannot see holds yesterday back until it ends; the job's own today caps the day", async () => {
    const { url, drop } = await postgres!.create();
    const role = `probe_${unique()}_${process.pid}`;
    const held = new Client({ connectionString: url });
    await held.connect();
    await held.query(`CREATE ROLE ${role} LOGIN`);
    const asOwner = new PostgresDatabase(url, 2);
    const roleUrl = new URL(url);
    roleUrl.username = role;
    const asRole = new PostgresDatabase(roleUrl.toString(), 2);
    try {
      const [{ today }] = await asOwner.query<{ today: string }>("SELECT (now() AT TIME ZONE 'UTC')::date::text AS today");
      const daysBefore = (n: number) => new Date(Date.parse(today) - n * 86_400_000).toISOString().slice(0, 10);
      const tomorrow = new Date(Date.parse(today) + 86_400_000);
      await held.query("BEGIN");
      await held.query("SELECT 1");
      expect(await lastSafeDay(asOwner, tomorrow)).toBe(daysBefore(1)); // begun today, seen
      expect(await lastSafeDay(asRole, tomorrow)).toBe(daysBefore(2)); // begun unseen
      await held.query("COMMIT");
      expect(await lastSafeDay(asRole, tomorrow)).toBe(daysBefore(1)); // the session idle
      expect(await lastSafeDay(asOwner, new Date(Date.parse(daysBefore(5))))).toBe(daysBefore(6));
    } finally {
      await Promise.all([asOwner.close(), asRole.close()]);
      await held.query(`DROP ROLE ${role}`);
      await held.end();
      await drop();
    }
  });
});
