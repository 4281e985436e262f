import { saleCreatedPayload } from "../../shared/events";
import { outboxTableMigration, SqlOutbox } from "../../shared/outbox/sql";
import { wantsDays, type RollupDrift, type StatsKeys, type StatsQuery, type StatsRows, type TopPartners } from "../../shared/domain/stats";
import { migrate, type SqlDatabase } from "../../shared/storage/sql";
import {
  ROLLUP_DAY,
  monthlyRollup,
  partnerRangeRows,
  BREAKDOWN_KEY,
  breakdownExpansion,
  pastRevision,
  rollupCoveringMigration,
  rollupMigration,
  rollupWhere,
  rollupsDrift,
  utcDay,
  type RollupDefinition,
} from "../../shared/storage/rollup-sql";
import { ClosedDaysCache } from "../../shared/storage/closed-days";
import { PackedDayCache, rankPackedRange, type PackedRangeRow } from "../../shared/storage/running-packed";
import {
  extendRunningTotals,
  runningCoveringKeyMigration,
  runningDrift,
  runningMigration,
  runningPackedMigration,
  runningPackedRevisionMigration,
  topPartnersQuery,
} from "../../shared/storage/running-sql";
import type { NewSale, Sale, SalesBreakdownFigures, SalesFigures, SalesRepository, SaleListFilter } from "./repository";
import type { BreakdownDimension, BreakdownRow } from "../../shared/domain/breakdowns";
import type { RateSource, SaleConversion } from "../../shared/domain/exchange-rates";
import { CURRENCY_MISMATCH } from "../../shared/domain/currencies";
import { csvLineSql } from "../../shared/storage/csv-sql";
import { SALES_CSV } from "./export";
import type { RateTableStore } from "./rate-tables";
import { SqlRateTableStore } from "./rate-tables.sql";
import { pageOf, sqlPosition, SqlConditions, type Page, type SqlListed, type SqlQuery } from "../../shared/pagination";

/** Per program, a revision bumped by every change of a past day's sales breakdown (closed-days.ts). */
const BREAKDOWN_CHANGES = "sales_breakdown_changes";

const MIGRATIONS = [
  `CREATE TABLE sales (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     transaction_id TEXT NOT NULL,
     amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
     currency TEXT NOT NULL,
     customer_key TEXT,
     email TEXT,
     processor_customer_id TEXT,
     partner_id INTEGER,
     click_id TEXT,
     attribution_method TEXT,
     is_test BOOLEAN NOT NULL DEFAULT false,
     is_recurring BOOLEAN NOT NULL DEFAULT false,
     sale_type TEXT,
     subscription_id TEXT,
     commission_state TEXT NOT NULL,
     commission_id INTEGER,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     UNIQUE (program_id, transaction_id));
   CREATE INDEX sales_awaiting_commission ON sales (created_at) WHERE commission_state = 'pending';`,
  `ALTER TABLE sales ADD COLUMN occurred_at TIMESTAMPTZ;
   UPDATE sales SET occurred_at = created_at WHERE occurred_at IS NULL;
   ALTER TABLE sales ALTER COLUMN occurred_at SET NOT NULL;
   CREATE INDEX sales_subscription ON sales (program_id, subscription_id, occurred_at) WHERE subscription_id IS NOT NULL;`,
  `ALTER TABLE sales ADD COLUMN no_commission_reason TEXT;`,
  // The dashboard's lists (listSalesQuery): newest first per program, and per partner of a program.
  `CREATE INDEX sales_program_list ON sales (program_id, created_at DESC, id DESC);
   CREATE INDEX sales_program_partner_list ON sales (program_id, partner_id, created_at DESC, id DESC);`,
  // sale.created events, written with the sale (shared/outbox).
  outboxTableMigration("sales_outbox"),
  // The overview's figures (salesStats): a range scan per program and mode; amount and currency included for an index-only scan.
  `CREATE INDEX sales_stats ON sales (program_id, is_test, occurred_at, partner_id) INCLUDE (amount_cents, currency) WHERE partner_id IS NOT NULL;`,
  // What was sold, line by line (product rewards: docs/rewards.md).
  `ALTER TABLE sales ADD COLUMN lines JSONB;`,
  // The overview's figures from per (program, partner, UTC day) counters kept by triggers (salesStats); the range scan
  // over the sales goes.
  `${rollupMigration(salesDaily())}
   DROP INDEX sales_stats;`,
  // The overview's partner ranking: each partner's revenue summed through each day (built by the sales service's job).
  runningMigration(salesDaily()),
  // The ranking's rows read from the running totals' key alone (index-only).
  runningCoveringKeyMigration(salesDaily()),
  // The figures read from the rollup's indexes alone (a page of partners, a range of days), however its rows lie.
  rollupCoveringMigration(salesDaily()),
  // The ranking's days packed: every partner's revenue through each day in one value (running-packed.ts).
  runningPackedMigration(salesDaily()),
  // A revision per packed day: the service keeps the days it has read and leaves their bytes out of the ranking's query.
  runningPackedRevisionMigration(salesDaily()),
  // A page of partners' whole months in a range (or all time) from per (program, partner, month) counters.
  rollupMigration(monthlyRollup(salesDaily())),
  // A sale paid in another currency than its program's: what was paid and the frozen rate (docs/currencies.md); the
  // amount and currency are the program's. All five or none.
  `ALTER TABLE sales ADD COLUMN original_amount_cents BIGINT CHECK (original_amount_cents > 0),
     ADD COLUMN original_currency TEXT, ADD COLUMN exchange_rate TEXT, ADD COLUMN exchange_rate_source TEXT, ADD COLUMN exchange_rate_day DATE,
     ADD CONSTRAINT sales_conversion_whole CHECK (num_nulls(original_amount_cents, original_currency, exchange_rate, exchange_rate_source, exchange_rate_day) IN (0, 5));`,
  // Traffic breakdowns (shared/domain/breakdowns.ts): a sale attributed by its click keeps the click's dimensions (as
  // attribution.resolve answers them: this service never reads the clicks), and the attributed sales and their amounts
  // are counted per (program, partner, mode, UTC day, currency, dimension, value) by triggers, as sales_daily is.
  `ALTER TABLE sales ADD COLUMN click_country TEXT, ADD COLUMN click_device_type TEXT, ADD COLUMN click_browser TEXT, ADD COLUMN click_referrer_domain TEXT;
   CREATE TABLE ${BREAKDOWN_CHANGES} (program_id INTEGER PRIMARY KEY, revision BIGINT NOT NULL);
   ${rollupMigration(salesBreakdownDaily())}`,
  // Double-sided rewards: the discounts a processor payment was made with.
  `ALTER TABLE sales ADD COLUMN discount_ids JSONB;`,
];

/**
 * sales_breakdown_daily: sales_daily's attributed sales and amounts, each sale once per dimension of its click (its
 * buckets without one). A sale's currency may change (a currency mismatch converted): its rows move with it.
 */
function salesBreakdownDaily(): RollupDefinition {
  const daily = salesDaily();
  return {
    table: "sales_breakdown_daily",
    source: "sales",
    key: [...daily.key, ...BREAKDOWN_KEY],
    figures: daily.figures,
    where: daily.where,
    expand: breakdownExpansion({ country: "click_country", deviceType: "click_device_type", browser: "click_browser", referrerDomain: "click_referrer_domain" }),
    // Read along the key (program, partner, mode, day): the program's rows of all partners, or one partner's.
    rangeIndex: [],
    pastChanges: BREAKDOWN_CHANGES,
  };
}

/**
 * The exact query of breakdowns (exported so the query-plan test explains what runs): the range's attributed sales
 * and their amounts in `currency` (the program's) per dimension and value, a range scan of the rollup's key.
 */
export function salesBreakdownsQuery(q: StatsQuery, currency: string): SqlQuery {
  const w = rollupWhere(q, "is_test", "days");
  const values = [...w.params, currency];
  return {
    text: `SELECT dimension, value, sum(sales)::int AS sales, COALESCE(sum(amount_cents) FILTER (WHERE currency = $${values.length}), 0)::bigint AS "amountCents"
       FROM sales_breakdown_daily WHERE ${w.where} GROUP BY 1, 2`,
    values,
  };
}

/** sales_daily: attributed sales and their amounts per (program, partner, mode, UTC day of occurrence, currency). */
function salesDaily(): RollupDefinition {
  return {
    table: "sales_daily",
    source: "sales",
    key: [
      { name: "program_id", type: "INTEGER", expr: "program_id" },
      { name: "partner_id", type: "INTEGER", expr: "partner_id" },
      { name: "is_test", type: "BOOLEAN", expr: "is_test" },
      { name: "day", type: "DATE", expr: utcDay("occurred_at") },
      { name: "currency", type: "TEXT", expr: "currency" },
    ],
    figures: [
      { name: "sales", type: "INTEGER", expr: "1" },
      { name: "amount_cents", type: "BIGINT", expr: "amount_cents" },
    ],
    where: "partner_id IS NOT NULL",
    rangeIndex: ["program_id", "is_test", "day"],
    running: { table: "sales_running", figure: "amount_cents", packed: true },
  };
}

/** The exact query of listSalesPage (exported so the query-plan test explains what runs). */
export function listSalesQuery(f: SaleListFilter, select = "*"): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.test !== undefined) c.add("is_test = ?", f.test);
  if (f.attributed !== undefined) c.add(f.attributed ? "partner_id IS NOT NULL" : "partner_id IS NULL");
  return c.page(f).query(select, "sales", f.limit);
}

/** A sale's line of the sales CSV (SALES_CSV), written by PostgreSQL (shared/storage/csv-sql.ts). */
const SALES_CSV_LINE = csvLineSql(SALES_CSV, {
  id: { integer: "id" },
  created_at: { date: "created_at" },
  occurred_at: { date: "occurred_at" },
  transaction_id: { text: "transaction_id" },
  amount_cents: { integer: "amount_cents" },
  currency: { text: "currency" },
  partner_id: { integer: "partner_id" },
  attribution_method: { text: "attribution_method" },
  click_id: { text: "click_id" },
  customer_key: { text: "customer_key" },
  email: { text: "email" },
  processor_customer_id: { text: "processor_customer_id" },
  test: { yesNo: "is_test" },
  recurring: { yesNo: "is_recurring" },
  sale_type: { text: "sale_type" },
  subscription_id: { text: "subscription_id" },
  commission_state: { text: "commission_state" },
  commission_id: { integer: "commission_id" },
  no_commission_reason: { text: "no_commission_reason" },
  original_amount_cents: { integer: "original_amount_cents" },
  original_currency: { text: "original_currency" },
  exchange_rate: { text: "exchange_rate" },
  exchange_rate_source: { text: "exchange_rate_source" },
  exchange_rate_day: { text: "to_char(exchange_rate_day, 'YYYY-MM-DD')" },
});

/** The exact query of topPartners (exported so the query-plan test explains what runs): revenue in the program's currency. */
export const salesTopPartnersQuery = (q: StatsQuery, currency: string, heldRevisions: readonly string[] = []): SqlQuery =>
  topPartnersQuery(salesDaily(), q, (n) => `currency = $${n}`, [currency], heldRevisions);

/** The exact queries of salesStats (exported so the query-plan test explains what runs); no daily one for all time. */
export function salesStatsQueries(q: StatsQuery, currency: string): { byDay: SqlQuery | null; byPartner: SqlQuery } {
  const figures = (n: number) => `sum(sales)::int AS sales, COALESCE(sum(amount_cents) FILTER (WHERE currency = $${n}), 0)::bigint AS "revenueCents"`;
  const query = (rows: "days" | "partners") => {
    const w = rollupWhere(q, "is_test", rows);
    const values = [...w.params, currency];
    const group = rows === "days" ? `${ROLLUP_DAY} AS day` : `partner_id AS "partnerId"`;
    return { text: `SELECT ${group}, ${figures(values.length)} FROM sales_daily WHERE ${w.where} GROUP BY 1`, values };
  };
  // Some partners (a page, the overview's shown ones): their whole months from sales_monthly.
  const somePartners = (partnerIds: readonly number[]) => {
    const r = partnerRangeRows(salesDaily(), { ...q, partnerIds }, "is_test", ["currency"]);
    const values = [...r.params, currency];
    return { text: `SELECT partner_id AS "partnerId", ${figures(values.length)} FROM ${r.from} GROUP BY 1`, values };
  };
  return { byDay: wantsDays(q) ? query("days") : null, byPartner: q.partnerIds ? somePartners(q.partnerIds) : query("partners") };
}

/** A row of sales. */
interface SaleRow {
  id: number;
  program_id: number;
  transaction_id: string;
  amount_cents: number;
  currency: string;
  lines: Sale["lines"];
  discount_ids?: string[] | null;
  customer_key: string | null;
  email: string | null;
  processor_customer_id: string | null;
  partner_id: number | null;
  click_id: string | null;
  attribution_method: Sale["attributionMethod"];
  is_test: boolean;
  is_recurring: boolean;
  sale_type: string | null;
  subscription_id: string | null;
  occurred_at: Date;
  commission_state: Sale["commissionState"];
  commission_id: number | null;
  no_commission_reason: string | null;
  original_amount_cents: number | string | null;
  original_currency: string | null;
  exchange_rate: string | null;
  exchange_rate_source: RateSource | null;
  exchange_rate_day: Date | string | null;
  created_at: Date;
}

/** A row of salesStats: its group, then the figures (the BIGINT sum: a driver that leaves BIGINT as text returns text). */
type SalesStatsRow<K extends keyof StatsKeys> = Record<K, StatsKeys[K]> & Record<keyof SalesFigures, number | string>;

const toSale = (r: SaleRow): Sale => ({
  id: r.id,
  programId: r.program_id,
  transactionId: r.transaction_id,
  amountCents: r.amount_cents,
  currency: r.currency,
  lines: r.lines ?? null,
  discountIds: r.discount_ids ?? null,
  customerKey: r.customer_key,
  email: r.email,
  processorCustomerId: r.processor_customer_id,
  partnerId: r.partner_id,
  clickId: r.click_id,
  attributionMethod: r.attribution_method,
  isTest: r.is_test,
  isRecurring: r.is_recurring,
  saleType: r.sale_type,
  subscriptionId: r.subscription_id,
  occurredAt: r.occurred_at,
  commissionState: r.commission_state,
  commissionId: r.commission_id,
  noCommissionReason: r.no_commission_reason ?? null,
  conversion: conversionOf(r),
  createdAt: r.created_at,
});

/** The conversion columns as the sale's `conversion` (all set, or none). */
function conversionOf(r: SaleRow): SaleConversion | null {
  if (r.original_amount_cents === null || r.original_currency === null || r.exchange_rate === null || r.exchange_rate_source === null || r.exchange_rate_day === null) return null;
  const day = r.exchange_rate_day instanceof Date ? r.exchange_rate_day.toISOString().slice(0, 10) : String(r.exchange_rate_day).slice(0, 10);
  return { originalAmountCents: Number(r.original_amount_cents), originalCurrency: r.original_currency, rate: r.exchange_rate, source: r.exchange_rate_source, rateDay: day };
}

/** A conversion as the values of its five columns (nulls for none). */
const conversionValues = (c: SaleConversion | null) => (c ? [c.originalAmountCents, c.originalCurrency, c.rate, c.source, c.rateDay] : [null, null, null, null, null]);

/** How a sale recorded with currency_mismatch is found (the reason's prefix, shared/domain/currencies.ts). */
const MISMATCH_REASON = `${CURRENCY_MISMATCH}:%`;

export class SqlSalesRepository implements SalesRepository {
  readonly outbox: SqlOutbox;
  /** The ranking's packed days read so far (running-packed.ts). */
  private readonly packedDays = new PackedDayCache();
  /** The program's breakdowns of closed days read so far (closed-days.ts). */
  private readonly breakdownDays = new ClosedDaysCache<BreakdownRow<SalesBreakdownFigures>>({
    revision: (programId) => pastRevision(this.db, BREAKDOWN_CHANGES, programId),
    rows: async (q, currency) => {
      const query = salesBreakdownsQuery(q, currency);
      // The BIGINT sum: a driver that leaves BIGINT as text returns text.
      const rows = await this.db.query<{ dimension: BreakdownDimension; value: string } & Record<keyof SalesBreakdownFigures, number | string>>(query.text, query.values);
      return rows.map((r) => ({ ...r, sales: Number(r.sales), amountCents: Number(r.amountCents) }));
    },
  });

  private constructor(
    private readonly db: SqlDatabase,
    readonly rateTables: RateTableStore,
  ) {
    this.outbox = new SqlOutbox(db, "sales_outbox");
  }

  static async create(db: SqlDatabase): Promise<SqlSalesRepository> {
    await migrate(db, "sales", MIGRATIONS);
    return new SqlSalesRepository(db, await SqlRateTableStore.create(db));
  }

  async insertSale(s: NewSale): Promise<Sale | null> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query<SaleRow>(
        `INSERT INTO sales (program_id, transaction_id, amount_cents, currency, customer_key, email, processor_customer_id, partner_id,
         click_id, attribution_method, is_test, is_recurring, sale_type, subscription_id, commission_state, occurred_at, no_commission_reason, lines,
         original_amount_cents, original_currency, exchange_rate, exchange_rate_source, exchange_rate_day,
         click_country, click_device_type, click_browser, click_referrer_domain, discount_ids)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)
       ON CONFLICT (program_id, transaction_id) DO NOTHING RETURNING *`,
        [
          s.programId,
          s.transactionId,
          s.amountCents,
          s.currency,
          s.customerKey,
          s.email,
          s.processorCustomerId,
          s.partnerId,
          s.clickId,
          s.attributionMethod,
          s.isTest,
          s.isRecurring,
          s.saleType,
          s.subscriptionId,
          s.commissionState,
          s.occurredAt,
          s.noCommissionReason,
          s.lines === null ? null : JSON.stringify(s.lines),
          ...conversionValues(s.conversion),
          s.clickTraffic?.country ?? null,
          s.clickTraffic?.deviceType ?? null,
          s.clickTraffic?.browser ?? null,
          s.clickTraffic?.referrerDomain ?? null,
          s.discountIds === null ? null : JSON.stringify(s.discountIds),
        ],
      );
      if (!row) return null;
      const sale = toSale(row);
      await this.outbox.enqueue(q, "sale.created", saleCreatedPayload(sale), sale.createdAt);
      return sale;
    });
  }

  async findSale(programId: number, transactionId: string): Promise<Sale | null> {
    const [row] = await this.db.query<SaleRow>("SELECT * FROM sales WHERE program_id = $1 AND transaction_id = $2", [programId, transactionId]);
    return row ? toSale(row) : null;
  }

  async getSale(id: number): Promise<Sale | null> {
    const [row] = await this.db.query<SaleRow>("SELECT * FROM sales WHERE id = $1", [id]);
    return row ? toSale(row) : null;
  }

  async findFirstSaleOfSubscription(programId: number, subscriptionId: string): Promise<Sale | null> {
    const [row] = await this.db.query<SaleRow>("SELECT * FROM sales WHERE program_id = $1 AND subscription_id = $2 ORDER BY occurred_at, id LIMIT 1", [programId, subscriptionId]);
    return row ? toSale(row) : null;
  }

  async markNoCommission(saleId: number, reason: string): Promise<void> {
    await this.db.query("UPDATE sales SET commission_state = 'none', no_commission_reason = $2 WHERE id = $1 AND commission_state = 'pending'", [saleId, reason]);
  }

  async markCommissionCreated(saleId: number, commissionId: number): Promise<void> {
    await this.db.query("UPDATE sales SET commission_state = 'created', commission_id = $2 WHERE id = $1", [saleId, commissionId]);
  }

  async convertMismatchedSale(saleId: number, c: Pick<Sale, "amountCents" | "currency" | "lines" | "conversion" | "commissionState">): Promise<boolean> {
    // sales_daily follows through its trigger (an update moves the sale's count and amount to its new key).
    const rows = await this.db.query(
      `UPDATE sales SET amount_cents = $2, currency = $3, lines = $4, commission_state = $11, no_commission_reason = NULL,
         original_amount_cents = $5, original_currency = $6, exchange_rate = $7, exchange_rate_source = $8, exchange_rate_day = $9
       WHERE id = $1 AND commission_state = 'none' AND no_commission_reason LIKE $10 RETURNING id`,
      [saleId, c.amountCents, c.currency, c.lines === null ? null : JSON.stringify(c.lines), ...conversionValues(c.conversion), MISMATCH_REASON, c.commissionState],
    );
    return rows.length === 1;
  }

  async listMismatchedSales(f: { programId?: number; afterId: number; limit: number }): Promise<Sale[]> {
    const rows = await this.db.query<SaleRow>(
      `SELECT * FROM sales WHERE id > $1 AND commission_state = 'none' AND no_commission_reason LIKE $2 AND ($3::int IS NULL OR program_id = $3) ORDER BY id LIMIT $4`,
      [f.afterId, MISMATCH_REASON, f.programId ?? null, f.limit],
    );
    return rows.map(toSale);
  }

  async listConvertedSales(afterId: number, limit: number): Promise<Sale[]> {
    const rows = await this.db.query<SaleRow>("SELECT * FROM sales WHERE id > $1 AND original_amount_cents IS NOT NULL ORDER BY id LIMIT $2", [afterId, limit]);
    return rows.map(toSale);
  }

  async listAwaitingCommission(before: Date, limit: number): Promise<Sale[]> {
    const rows = await this.db.query<SaleRow>("SELECT * FROM sales WHERE commission_state = 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2", [before, limit]);
    return rows.map(toSale);
  }

  async salesStats(q: StatsQuery, currency: string): Promise<StatsRows<SalesFigures>> {
    const queries = salesStatsQueries(q, currency);
    const [byDay, byPartner] = await Promise.all([
      queries.byDay ? this.db.query<SalesStatsRow<"day">>(queries.byDay.text, queries.byDay.values, { prepare: true }) : [],
      q.partners === false ? [] : this.db.query<SalesStatsRow<"partnerId">>(queries.byPartner.text, queries.byPartner.values, { prepare: true }),
    ]);
    const numbers = <R extends Record<keyof SalesFigures, number | string>>(r: R) => ({ ...r, sales: Number(r.sales), revenueCents: Number(r.revenueCents) });
    return { byDay: byDay.map((r) => numbers(r)), byPartner: byPartner.map((r) => numbers(r)) };
  }

  async topPartners(q: StatsQuery, currency: string, limit: number): Promise<TopPartners> {
    return rankPackedRange(
      this.packedDays,
      async (held) => {
        const query = salesTopPartnersQuery(q, currency, held);
        return (await this.db.query<PackedRangeRow>(query.text, query.values, { prepare: true }))[0];
      },
      q.partnerIds,
      limit,
    );
  }

  extendRunningTotals(today: Date): Promise<number> {
    return extendRunningTotals(this.db, salesDaily(), today);
  }

  breakdowns(q: StatsQuery, currency: string): Promise<Array<BreakdownRow<SalesBreakdownFigures>>> {
    return this.breakdownDays.read(q, currency);
  }

  async rollupDrift(limit: number): Promise<RollupDrift[]> {
    const drift = await rollupsDrift(this.db, [salesDaily(), monthlyRollup(salesDaily()), salesBreakdownDaily()], limit);
    return [...drift, ...(await runningDrift(this.db, salesDaily(), limit - drift.length))];
  }

  async listSalesPage(f: SaleListFilter): Promise<Page<Sale>> {
    const q = listSalesQuery(f);
    return pageOf(await this.db.query<SqlListed<SaleRow>>(q.text, q.values), f.limit, sqlPosition, toSale);
  }

  async exportSalesLines(f: SaleListFilter): Promise<Page<string>> {
    const q = listSalesQuery(f, `id, ${SALES_CSV_LINE} AS csv_line`);
    return pageOf(await this.db.query<SqlListed<{ csv_line: string }>>(q.text, q.values), f.limit, sqlPosition, (r) => r.csv_line);
  }
}
