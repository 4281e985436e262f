/**
 * The overview's aggregations and the partners list are served by their indexes (issues 15 and 31): on PostgreSQL
 * with 100k rows in each table (50 partners, one row every 5 minutes over about a year, so about 35k rows in each
 * daily rollup), EXPLAIN of the exact queries the repositories run (their exported builders) reads one of the
 * rollup's indexes meant for it and never scans it sequentially: a 30-day range per day and per partner, all time
 * and a year for a page of partners (whole months from the monthly rollups), the overview's partner ranking by the packed running totals' key, and the partners' clicks
 * and leads along the running totals' key.
 * PostgreSQL only; skipped loudly without TEST_POSTGRES_URL.
 */
import { activityStatsQueries, clicksTopPartnersQuery } from "../../services/attribution/repository.sql";
import { createAttributionRepository } from "../../services/attribution/storage";
import { commissionStatsQueries } from "../../services/commissions/repository.sql";
import { createCommissionsRepository } from "../../services/commissions/storage";
import { listEnrollmentsQuery } from "../../services/programs/repository.sql";
import { createProgramsRepository } from "../../services/programs/storage";
import { salesStatsQueries, salesTopPartnersQuery } from "../../services/sales/repository.sql";
import { createSalesRepository } from "../../services/sales/storage";
import type { StatsQuery } from "../../shared/domain/stats";
import type { SqlQuery } from "../../shared/pagination";
import { ROWS, SEED_PARTNER, SEED_PROGRAM, onPostgresOnly, usePlanDatabase } from "../support/query-plans";

const describeOnPostgres = onPostgresOnly("Stats query plans SKIPPED: TEST_POSTGRES_URL is not set; the overview's indexes were NOT checked at 100k rows.");

describeOnPostgres("overview stats queries at 100k rows on PostgreSQL", () => {
  const db = usePlanDatabase({
    title: `Overview query plans at ${ROWS} rows per table (PostgreSQL)`,
    repositories: [createAttributionRepository, createSalesRepository, createCommissionsRepository, createProgramsRepository],
    async seed(sql) {
      const at = "timestamptz '2026-01-01' + (i * interval '5 minutes')";
      const program = SEED_PROGRAM;
      const partner = SEED_PARTNER;
      await sql.query(
        `INSERT INTO clicks (click_id, program_id, partner_id, referral_code, is_test, timestamp, created_at)
         SELECT 'clk_' || i, ${program}, ${partner}, 'code', i % 13 = 0, ${at}, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO leads (program_id, customer_key, partner_id, is_test, timestamp, created_at)
         SELECT ${program}, 'c_' || i, CASE WHEN i % 7 = 0 THEN NULL ELSE ${partner} END, i % 13 = 0, ${at}, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO sales (program_id, transaction_id, amount_cents, currency, partner_id, is_test, commission_state, occurred_at, created_at)
         SELECT ${program}, 'tx_' || i, 10000, 'usd', CASE WHEN i % 7 = 0 THEN NULL ELSE ${partner} END, i % 13 = 0, 'created', ${at}, ${at}
         FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO commissions (program_id, partner_id, sale_id, transaction_id, currency, sale_amount_cents, rule_type, rule_value, amount_cents,
           deducted_cents, approvable_at, credited_at, created_at, updated_at)
         SELECT ${program}, ${partner}, i, 'tx_' || i, 'usd', 10000, 'percentage', 2000, 2000, (i % 3) * 100, ${at},
           CASE WHEN i % 2 = 0 THEN ${at} END, ${at}, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO programs (name, currency, commission_type, commission_value, created_at)
         SELECT 'Program ' || i, 'usd', 'percentage', 2000, ${at} FROM generate_series(1, 10) AS i`,
      );
      await sql.query(`INSERT INTO partners (name, created_at) SELECT 'Partner ' || i, ${at} FROM generate_series(1, ${ROWS}) AS i`);
      await sql.query(
        `INSERT INTO enrollments (partner_id, program_id, status, referral_code, created_at)
         SELECT i, ${program}, (ARRAY['approved', 'pending', 'declined'])[(i % 3) + 1], 'code_' || i, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      // The running totals of the seeded year, built by the owners' job as in production.
      const database = { kind: "sql" as const, sql };
      const owners = [await createSalesRepository(database), await createAttributionRepository(database)];
      for (const owner of owners) while ((await owner.extendRunningTotals(new Date("2027-01-01T00:00:00Z"))) > 0);
    },
  });

  const month: StatsQuery = { programId: 3, test: false, start: new Date("2026-06-01T00:00:00Z"), end: new Date("2026-07-01T00:00:00Z") };
  const onePartner: StatsQuery = { ...month, partnerIds: [7] };
  const pageOfPartners: StatsQuery = { programId: 3, test: false, start: null, end: null, partnerIds: Array.from({ length: 25 }, (_, i) => i + 1) };
  const yearOfPartners: StatsQuery = { ...pageOfPartners, start: new Date("2026-01-15T00:00:00Z"), end: new Date("2027-01-15T00:00:00Z") };

  // The figures come from the owners' daily rollups (kept by triggers on the seeded tables): the days of the program
  // are its rows of all partners (partner 0) along the primary key, which starts (program, partner), as a page of
  // partners (or one partner) is; the partners of a range of days read the range index.
  const CASES: Array<{ name: string; table: string; index: string | string[]; query: SqlQuery }> = [
    { name: "clicks per day, 30 days", table: "clicks_daily", index: "clicks_daily_pkey", query: activityStatsQueries(month).clickDays! },
    { name: "leads per day, 30 days", table: "leads_daily", index: "leads_daily_pkey", query: activityStatsQueries(month).leadDays! },
    { name: "sales per day, 30 days", table: "sales_daily", index: "sales_daily_pkey", query: salesStatsQueries(month, "usd").byDay! },
    { name: "sales per partner, 30 days", table: "sales_daily", index: "sales_daily_range", query: salesStatsQueries(month, "usd").byPartner },
    // A page of partners: whole months from the monthly rollup, the days around them from the daily one, both by key.
    { name: "sales of 25 partners, all time", table: "sales_monthly", index: "sales_monthly_pkey", query: salesStatsQueries(pageOfPartners, "usd").byPartner },
    { name: "sales of 25 partners, a year: its months", table: "sales_monthly", index: "sales_monthly_pkey", query: salesStatsQueries(yearOfPartners, "usd").byPartner },
    { name: "sales of 25 partners, a year: its days", table: "sales_daily", index: "sales_daily_pkey", query: salesStatsQueries(yearOfPartners, "usd").byPartner },
    { name: "commissions per day, 30 days", table: "commissions_daily", index: "commissions_daily_pkey", query: commissionStatsQueries(month, "usd").byDay! },
    { name: "commissions per partner, 30 days", table: "commissions_daily", index: "commissions_daily_range", query: commissionStatsQueries(month, "usd").byPartner },
    { name: "commissions of 25 partners, all time", table: "commissions_monthly", index: "commissions_monthly_pkey", query: commissionStatsQueries(pageOfPartners, "usd").byPartner },
    {
      name: "commissions of 25 partners, a year: its months",
      table: "commissions_monthly",
      index: "commissions_monthly_pkey",
      query: commissionStatsQueries(yearOfPartners, "usd").byPartner,
    },
    { name: "commissions of 25 partners, a year: its days", table: "commissions_daily", index: "commissions_daily_pkey", query: commissionStatsQueries(yearOfPartners, "usd").byPartner },
    // The overview's partner ranking: a packed day of the running totals by its key, plus the rollup's days after them.
    { name: "partners ranked by revenue, 30 days", table: "sales_running_packed", index: "sales_running_packed_pkey", query: salesTopPartnersQuery(month, "usd") },
    {
      name: "partners ranked by revenue, all time",
      table: "sales_running_packed",
      index: "sales_running_packed_pkey",
      query: salesTopPartnersQuery({ ...month, start: null, end: null }, "usd"),
    },
    { name: "partners ranked by clicks, 30 days", table: "clicks_running_packed", index: "clicks_running_packed_pkey", query: clicksTopPartnersQuery(month) },
    // The partners' clicks and leads: two rows a partner from the running totals' key too.
    { name: "clicks per partner, 30 days", table: "clicks_running", index: "clicks_running_pkey", query: activityStatsQueries(month).clickPartners! },
    { name: "clicks of 25 partners, all time", table: "clicks_running", index: "clicks_running_pkey", query: activityStatsQueries(pageOfPartners).clickPartners! },
    { name: "leads of 25 partners, all time", table: "leads_running", index: "leads_running_pkey", query: activityStatsQueries(pageOfPartners).leadPartners! },
    { name: "partners list, first page", table: "enrollments", index: "enrollments_list", query: listEnrollmentsQuery(3, { limit: 25 }) },
    { name: "partners list, pending", table: "enrollments", index: "enrollments_list_status", query: listEnrollmentsQuery(3, { limit: 25, status: "pending" }) },
    // A search reads the list's index newest first and keeps the rows that match (no index serves "contains").
    { name: "partners list, searched", table: "enrollments", index: "enrollments_list", query: listEnrollmentsQuery(3, { limit: 25, q: "partner 12" }) },
    // One partner's overview: the daily series filtered by the partner.
    { name: "one partner's clicks per day, 30 days", table: "clicks_daily", index: ["clicks_daily_pkey", "clicks_daily_range"], query: activityStatsQueries(onePartner).clickDays! },
    { name: "one partner's sales per day, 30 days", table: "sales_daily", index: ["sales_daily_pkey", "sales_daily_range"], query: salesStatsQueries(onePartner, "usd").byDay! },
    {
      name: "one partner's commissions per day, 30 days",
      table: "commissions_daily",
      index: ["commissions_daily_pkey", "commissions_daily_range"],
      query: commissionStatsQueries(onePartner, "usd").byDay!,
    },
  ];

  test.each(CASES)("$name reads its index and never scans $table sequentially", async ({ name, table, index, query }) => {
    const { summary } = await db.planOf(query);
    db.plans.push(`${name}: ${summary.join(" <- ")}`);
    const accepted = Array.isArray(index) ? index : [index];
    const usesIndex = summary.some((s) => accepted.includes(/ using (\S+)/.exec(s)?.[1] ?? ""));
    const seqScans = summary.filter((s) => s.startsWith(`Seq Scan on ${table} `)).length;
    expect({ summary, usesIndex, seqScans }).toEqual({ summary, usesIndex: true, seqScans: 0 });
  });
});
