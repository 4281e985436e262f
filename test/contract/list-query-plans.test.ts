/**
 * Every list is served by its index (issue 15, item 1): on PostgreSQL with 100k rows in each listed table,
 * EXPLAIN of the exact query each repository runs (its exported query builder) must read the list's index
 * (Index Scan or Index Only Scan), and must neither scan the table sequentially nor sort it: first page and
 * cursor page, with and without the partner filter. PostgreSQL only (PGlite's planner is the same, but a
 * plan at this size on a real server is the claim); skipped loudly without TEST_POSTGRES_URL.
 */
import { listCommissionsQuery, listFraudReviewsQuery, listWithdrawalsQuery } from "../../services/commissions/repository.sql";
import { createCommissionsRepository } from "../../services/commissions/storage";
import { listLeadsQuery } from "../../services/attribution/repository.sql";
import { createAttributionRepository } from "../../services/attribution/storage";
import { listWebhookDeliveriesQuery, listWorkspaceNotificationsQuery } from "../../services/notifications/repository.sql";
import { createNotificationsRepository } from "../../services/notifications/storage";
import { listProgramsQuery } from "../../services/programs/repository.sql";
import { createProgramsRepository } from "../../services/programs/storage";
import { listSalesQuery } from "../../services/sales/repository.sql";
import { createSalesRepository } from "../../services/sales/storage";
import { sqlPosition, type CursorPosition, type PageRequest, type SqlListedColumns, type SqlQuery } from "../../shared/pagination";
import { ROWS, SEED_PARTNER, SEED_PROGRAM, onPostgresOnly, usePlanDatabase } from "../support/query-plans";

const describeOnPostgres = onPostgresOnly("List query plans SKIPPED: TEST_POSTGRES_URL is not set; the indexes of the lists were NOT checked at 100k rows.");

describeOnPostgres("list queries at 100k rows on PostgreSQL", () => {
  const db = usePlanDatabase({
    title: `List query plans at ${ROWS} rows per table (PostgreSQL)`,
    repositories: [createCommissionsRepository, createSalesRepository, createProgramsRepository, createAttributionRepository, createNotificationsRepository],
    // 10 programs (10k rows each), 50 partners per program (200 rows each), one row a second, some sharing a second.
    async seed(sql) {
      const at = "timestamptz '2026-01-01' + ((i / 2) * interval '1 second')";
      const program = SEED_PROGRAM;
      const partner = SEED_PARTNER;
      await sql.query(
        `INSERT INTO commissions (program_id, partner_id, sale_id, transaction_id, currency, sale_amount_cents, rule_type, rule_value, amount_cents,
           status, approvable_at, created_at, updated_at)
         SELECT ${program}, ${partner}, i, 'tx_' || i, 'usd', 10000, 'percentage', 2000, 2000,
           (ARRAY['pending', 'approved', 'paid', 'refunded', 'reversed'])[((i / 7) % 5) + 1], ${at}, ${at}, ${at}
         FROM generate_series(1, ${ROWS}) AS i`,
      );
      // One review per commission (a review names its commission), most decided.
      await sql.query(
        `INSERT INTO fraud_reviews (program_id, partner_id, commission_id, kind, flags, status, decided_at, created_at)
         SELECT ${program}, ${partner}, i, 'sale', '[]', s.status, CASE WHEN s.status = 'pending' THEN NULL ELSE ${at} END, ${at}
         FROM generate_series(1, ${ROWS}) AS i, LATERAL (SELECT (ARRAY['pending', 'cleared', 'rejected', 'cleared'])[((i / 7) % 4) + 1] AS status) AS s`,
      );
      await sql.query(
        `INSERT INTO withdrawals (partner_id, program_id, currency, requested_cents, amount_cents, status, created_at)
         SELECT ${partner}, ${program}, 'usd', 100, 100, (ARRAY['open', 'paid', 'cancelled'])[((i / 7) % 3) + 1], ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO sales (program_id, transaction_id, amount_cents, currency, partner_id, is_test, commission_state, occurred_at, created_at)
         SELECT ${program}, 'tx_' || i, 10000, 'usd', CASE WHEN i % 7 = 0 THEN NULL ELSE ${partner} END, i % 13 = 0, 'created', ${at}, ${at}
         FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO programs (name, currency, commission_type, commission_value, workspace_id, created_at)
         SELECT 'Program ' || i, 'usd', 'percentage', 2000, (i % 100) + 1, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO leads (program_id, customer_key, email, partner_id, is_test, timestamp, created_at)
         SELECT ${program}, 'customer_' || i, 'c' || i || '@example.com', ${partner}, i % 13 = 0, ${at}, ${at} FROM generate_series(1, ${ROWS}) AS i`,
      );
      await sql.query(
        `INSERT INTO notifications (event_id, kind, workspace_id, program_id, partner_id, commission_id, transaction_id, status, deduction_cents, currency, reason, created_at)
         SELECT i, CASE WHEN i % 4 = 0 THEN 'advertiser_warning' ELSE 'partner_notice' END, (i % 10) + 1, ${program}, ${partner}, i, 'tx_' || i, 'refunded', 100, 'usd', 'refund', ${at}
         FROM generate_series(1, ${ROWS}) AS i`,
      );
      // Ten webhook endpoints (ids 1 to 10), 10k deliveries each, in every status.
      await sql.query(
        `INSERT INTO webhook_endpoints (workspace_id, url, event_types, secret, created_at, updated_at)
         SELECT i, 'https://merchant.example/hooks', ARRAY['sale.created'], 'whsec_seed', timestamptz '2026-01-01', timestamptz '2026-01-01' FROM generate_series(1, 10) AS i`,
      );
      await sql.query(
        `INSERT INTO webhook_deliveries (endpoint_id, producer, event_id, event_type, body, status, attempts, next_attempt_at, created_at)
         SELECT (i % 10) + 1, 'sales', i, 'sale.created', '{}', (ARRAY['succeeded', 'failed', 'pending'])[((i / 7) % 3) + 1], 1, ${at}, ${at}
         FROM generate_series(1, ${ROWS}) AS i`,
      );
    },
  });

  async function lastPosition(q: SqlQuery): Promise<CursorPosition> {
    const rows = await db.sql.query<SqlListedColumns>(q.text, q.values);
    expect(rows.length).toBeGreaterThan(2);
    return sqlPosition(rows[rows.length - 2]);
  }

  /** `index`: the list's index; `alsoIndexes`: others the planner may combine with it for a narrow filter (a bitmap, then a small sort). */
  type Case = { list: string; table: string; index: string; alsoIndexes?: string[]; query: (page: PageRequest) => SqlQuery };
  const CASES: Case[] = [
    { list: "commissions", table: "commissions", index: "commissions_program_list", query: (p) => listCommissionsQuery({ programId: 3, ...p }) },
    { list: "commissions, one partner", table: "commissions", index: "commissions_program_partner_list", query: (p) => listCommissionsQuery({ programId: 3, partnerId: 7, ...p }) },
    { list: "commissions, one status", table: "commissions", index: "commissions_program_list", query: (p) => listCommissionsQuery({ programId: 3, status: "approved", ...p }) },
    {
      list: "commissions, one partner, one status, a range",
      table: "commissions",
      index: "commissions_program_partner_list",
      query: (p) => listCommissionsQuery({ programId: 3, partnerId: 7, status: "pending", from: new Date("2026-01-01T02:00:00Z"), ...p }),
    },
    { list: "withdrawals", table: "withdrawals", index: "withdrawals_program_list", query: (p) => listWithdrawalsQuery({ programId: 3, ...p }) },
    { list: "withdrawals, one partner", table: "withdrawals", index: "withdrawals_program_partner_list", query: (p) => listWithdrawalsQuery({ programId: 3, partnerId: 7, ...p }) },
    { list: "withdrawals, open", table: "withdrawals", index: "withdrawals_program_list", query: (p) => listWithdrawalsQuery({ programId: 3, status: "open", ...p }) },
    { list: "fraud reviews", table: "fraud_reviews", index: "fraud_reviews_list", query: (p) => listFraudReviewsQuery({ programId: 3, ...p }) },
    { list: "fraud reviews, pending", table: "fraud_reviews", index: "fraud_reviews_list_status", query: (p) => listFraudReviewsQuery({ programId: 3, status: "pending", ...p }) },
    { list: "fraud reviews, one partner", table: "fraud_reviews", index: "fraud_reviews_partner", query: (p) => listFraudReviewsQuery({ programId: 3, partnerId: 7, ...p }) },
    { list: "sales", table: "sales", index: "sales_program_list", query: (p) => listSalesQuery({ programId: 3, ...p }) },
    { list: "sales, one partner", table: "sales", index: "sales_program_partner_list", query: (p) => listSalesQuery({ programId: 3, partnerId: 7, ...p }) },
    { list: "sales, live and attributed", table: "sales", index: "sales_program_list", query: (p) => listSalesQuery({ programId: 3, test: false, attributed: true, ...p }) },
    {
      list: "sales, a range",
      table: "sales",
      index: "sales_program_list",
      query: (p) => listSalesQuery({ programId: 3, from: new Date("2026-01-01T01:00:00Z"), to: new Date("2026-01-01T10:00:00Z"), ...p }),
    },
    { list: "programs of a workspace", table: "programs", index: "programs_workspace_list", query: (p) => listProgramsQuery({ workspaceId: 42, ...p }) },
    { list: "every program", table: "programs", index: "programs_list", query: (p) => listProgramsQuery({ ...p }) },
    { list: "customers", table: "leads", index: "leads_program_list", query: (p) => listLeadsQuery({ programId: 3, ...p }) },
    { list: "customers, one partner", table: "leads", index: "leads_program_partner_list", query: (p) => listLeadsQuery({ programId: 3, partnerId: 7, ...p }) },
    { list: "notifications", table: "notifications", index: "notifications_workspace_list", query: (p) => listWorkspaceNotificationsQuery({ workspaceId: 3, ...p }) },
    {
      list: "notifications, one partner",
      table: "notifications",
      index: "notifications_workspace_partner_list",
      query: (p) => listWorkspaceNotificationsQuery({ workspaceId: 3, partnerId: 7, ...p }),
    },
    {
      list: "notifications, unread warnings",
      table: "notifications",
      index: "notifications_workspace_list",
      query: (p) => listWorkspaceNotificationsQuery({ workspaceId: 3, kind: "advertiser_warning", unread: true, ...p }),
    },
    {
      list: "notifications, unread warnings of a program",
      table: "notifications",
      index: "notifications_workspace_program_list",
      // The older (program, kind, id) index answers "a program's warnings" as well: the planner may AND it with the workspace's.
      alsoIndexes: ["notifications_program", "notifications_workspace"],
      query: (p) => listWorkspaceNotificationsQuery({ workspaceId: 3, programId: 3, kind: "advertiser_warning", unread: true, ...p }),
    },
    { list: "webhook deliveries", table: "webhook_deliveries", index: "webhook_deliveries_endpoint_list", query: (p) => listWebhookDeliveriesQuery({ endpointId: 3, ...p }) },
    {
      list: "webhook deliveries, failed",
      table: "webhook_deliveries",
      index: "webhook_deliveries_endpoint_status_list",
      query: (p) => listWebhookDeliveriesQuery({ endpointId: 3, status: "failed", ...p }),
    },
  ];

  // A sort is allowed only over what a narrow filter left (a bitmap scan of a partner's rows): never over the big table.
  const SMALL_SORT = 1000;

  test.each(CASES)("$list: the first page and a cursor page read $index, without a sequential scan or a sort of the table", async ({ table, index, alsoIndexes = [], query }) => {
    const first = query({ limit: 25 });
    const cursor = await lastPosition(first);
    for (const [page, q] of [
      ["first page", first],
      ["cursor page", query({ limit: 25, cursor })],
      ["largest page", query({ limit: 100, cursor })],
    ] as const) {
      // ANALYZE runs the query too: its execution time is printed with the plans (a figure, never asserted).
      const { nodes, summary, executionMs = 0 } = await db.planOf(q, { analyze: true });
      db.plans.push(`${q === first ? "" : "  "}${page} (${executionMs.toFixed(3)} ms): ${summary.join(" <- ")}`);
      const accepted = [index, ...alsoIndexes];
      const usesIndex =
        nodes.some((n) => ["Index Scan", "Index Only Scan"].includes(n["Node Type"]) && n["Index Name"] === index) ||
        nodes.some((n) => ["Index Scan", "Index Only Scan", "Bitmap Index Scan"].includes(n["Node Type"]) && accepted.includes(n["Index Name"] ?? ""));
      expect({ page, summary, usesIndex }).toEqual({
        page,
        summary,
        usesIndex: true,
      });
      expect({ page, summary, seqScans: nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === table).length }).toEqual({ page, summary, seqScans: 0 });
      const bigSorts = nodes.filter((n) => ["Sort", "Incremental Sort"].includes(n["Node Type"]) && n["Plan Rows"] > SMALL_SORT);
      expect({ page, summary, bigSorts: bigSorts.length }).toEqual({ page, summary, bigSorts: 0 });
      // Without a narrow filter, no sort at all: the index gives the order.
      if (alsoIndexes.length === 0 && !nodes.some((n) => n["Node Type"] === "Bitmap Index Scan")) {
        expect({ page, summary, sorts: nodes.filter((n) => ["Sort", "Incremental Sort"].includes(n["Node Type"])).length }).toEqual({ page, summary, sorts: 0 });
      }
    }
  });
});
