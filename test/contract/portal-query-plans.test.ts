/**
 * The partner portal's own queries are served by their indexes: on PostgreSQL with 100k notifications (and
 * partner read rows) and 100k clicks, EXPLAIN of the exact queries (a partner's notices in a program, first and
 * cursor page, unread or not; a partner's live click count, from the clicks' daily rollup) reads the portal's indexes, with no sequential scan
 * and no sort of the table. The other lists the portal shows are the lists' own (list-query-plans.test.ts).
 * PostgreSQL only; skipped loudly without TEST_POSTGRES_URL.
 */
import { COUNT_PARTNER_CLICKS_SQL } from "../../services/attribution/repository.sql";
import { createAttributionRepository } from "../../services/attribution/storage";
import { listPartnerNoticesQuery } from "../../services/notifications/repository.sql";
import { createNotificationsRepository } from "../../services/notifications/storage";
import { sqlPosition, type SqlListedColumns, type SqlQuery } from "../../shared/pagination";
import { ROWS, SEED_PARTNER, SEED_PROGRAM, onPostgresOnly, usePlanDatabase, type PlanNode } from "../support/query-plans";

const describeOnPostgres = onPostgresOnly("Portal query plans SKIPPED: TEST_POSTGRES_URL is not set; the portal's indexes were NOT checked at 100k rows.");

describeOnPostgres("partner portal queries at 100k rows on PostgreSQL", () => {
  const db = usePlanDatabase({
    title: `Partner portal query plans at ${ROWS} rows (PostgreSQL)`,
    repositories: [createNotificationsRepository, createAttributionRepository],
    // 10 programs, 50 partners each; one row a second, two sharing a second; a third of the notices read by the partner.
    async seed(sql) {
      const at = "timestamptz '2026-01-01' + ((i / 2) * interval '1 second')";
      const program = SEED_PROGRAM;
      const partner = SEED_PARTNER;
      await sql.query(
        `INSERT INTO notifications (event_id, kind, workspace_id, program_id, partner_id, commission_id, transaction_id, status, deduction_cents, currency, reason, created_at)
         SELECT i, CASE WHEN i % 4 = 0 THEN 'advertiser_warning' ELSE 'partner_notice' END, (i % 10) + 1, ${program}, ${partner}, i, 'tx_' || i, 'refunded', 100, 'usd', 'refund', ${at}
         FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        "INSERT INTO partner_notice_reads (notification_id, partner_id, read_at) SELECT id, partner_id, created_at FROM notifications WHERE id % 3 = 0 AND kind = 'partner_notice'",
      );
      await sql.query(
        `INSERT INTO clicks (click_id, program_id, partner_id, referral_code, is_test, timestamp, created_at)
         SELECT 'clk_' || i, ${program}, ${partner}, 'code_' || ${partner}, i % 13 = 0, ${at}, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
    },
  });

  const bigSeqScanOrSort = (nodes: PlanNode[]) => nodes.some((n) => n["Node Type"] === "Seq Scan" || (n["Node Type"] === "Sort" && n["Plan Rows"] > 1000));

  test.each([
    ["all", undefined],
    ["unread", true],
    ["read", false],
  ] as const)("a partner's notices in a program (%s): first and cursor page read notifications_partner_program_list", async (_what, unread) => {
    const query = (cursor?: ReturnType<typeof sqlPosition>): SqlQuery => listPartnerNoticesQuery({ partnerId: 7, programId: 3, unread, limit: 25, cursor });
    const rows = await db.sql.query<SqlListedColumns>(query().text, query().values);
    expect(rows.length).toBeGreaterThan(2);
    for (const [page, q] of [
      ["first page", query()],
      ["cursor page", query(sqlPosition(rows[rows.length - 2]))],
    ] as const) {
      const { nodes, summary } = await db.planOf(q);
      db.plans.push(`notices (${_what}), ${page}: ${summary.join(" <- ")}`);
      const usesIndex = nodes.some((n) => ["Index Scan", "Index Only Scan", "Bitmap Index Scan"].includes(n["Node Type"]) && n["Index Name"] === "notifications_partner_program_list");
      expect({ page, usesIndex, bigSeqScanOrSort: bigSeqScanOrSort(nodes) }).toEqual({ page, usesIndex: true, bigSeqScanOrSort: false });
    }
  });

  test("a partner's live click count reads clicks_daily's primary key", async () => {
    const { nodes, summary } = await db.planOf({ text: COUNT_PARTNER_CLICKS_SQL, values: [3, 7] });
    db.plans.push(`click count: ${summary.join(" <- ")}`);
    expect(nodes.some((n) => n["Index Name"] === "clicks_daily_pkey")).toBe(true);
    expect(bigSeqScanOrSort(nodes)).toBe(false);
  });
});
