import type { AttributionMethod } from "../../shared/domain/attribution";
import type { RollupDrift, StatsQuery, StatsRows, TopPartners } from "../../shared/domain/stats";
import type { Page, PageRequest } from "../../shared/pagination";
import type { OutboxStore } from "../../shared/outbox/outbox";
import type { SaleLine } from "../../shared/domain/rewards";
import type { RateTableStore } from "./rate-tables";
import type { SaleConversion } from "../../shared/domain/exchange-rates";
import type { BreakdownRow, TrafficDimensions } from "../../shared/domain/breakdowns";

/**
 * `none`: no commission is due (test or unattributed sale); `pending`: one is
 * due but not yet confirmed by the commissions service; `created`: it exists.
 */
export type SaleCommissionState = "none" | "pending" | "created";

export interface Sale {
  id: number;
  programId: number;
  /** Caller's id of the sale, unique per program (the processor's id for processor sales). */
  transactionId: string;
  /** The amount in the program's currency (converted when the sale was paid in another one: `conversion`). */
  amountCents: number;
  currency: string;
  /** A sale paid in another currency: what was paid, and the rate it was converted at, frozen (docs/currencies.md); null otherwise. */
  conversion: SaleConversion | null;
  /** What was sold, line by line, when the caller or the processor said (product rewards read it); null: one line of the whole amount. */
  lines: SaleLine[] | null;
  /**
   * The discounts the payment was made with, as its billing platform names them (Stripe coupon and promotion code
   * ids, a Paddle discount id): a referred customer's discount among them shows it was used (docs/rewards.md,
   * "The referred customer's discount"). Null when none, or when the sale was tracked by the API.
   */
  discountIds: string[] | null;
  customerKey: string | null;
  email: string | null;
  processorCustomerId: string | null;
  partnerId: number | null;
  clickId: string | null;
  attributionMethod: AttributionMethod | null;
  isTest: boolean;
  isRecurring: boolean;
  saleType: string | null;
  subscriptionId: string | null;
  commissionState: SaleCommissionState;
  commissionId: number | null;
  /** Why a sale that could have earned earns no commission (self-referral, a product without reward; `currency_mismatch: ...` before conversions); null otherwise. */
  noCommissionReason: string | null;
  /** When the payment happened (the processor's event time, or when tracked). */
  occurredAt: Date;
  createdAt: Date;
}

/**
 * A sale to record. `clickTraffic`: the dimensions of the click that attributed it (attribution.resolve answers them;
 * shared/domain/breakdowns.ts), stored for the sales' breakdowns; absent or null: its buckets (no click).
 */
export type NewSale = Omit<Sale, "id" | "commissionId" | "createdAt"> & { clickTraffic?: TrafficDimensions | null };

/** A page of one program's sales: one partner's, test or live, attributed or not, created in a range. */
export interface SaleListFilter extends PageRequest {
  programId: number;
  partnerId?: number;
  test?: boolean;
  attributed?: boolean;
}

/** Storage contract of the sales service. */
export interface SalesRepository {
  /**
   * Returns null when the program already has a sale with this transaction id.
   * A new sale's `sale.created` event is written to the sales outbox in the
   * same transaction (shared/events.ts).
   */
  insertSale(sale: NewSale): Promise<Sale | null>;
  findSale(programId: number, transactionId: string): Promise<Sale | null>;
  getSale(id: number): Promise<Sale | null>;
  /** The earliest sale of a subscription in the program (its first payment). */
  findFirstSaleOfSubscription(programId: number, subscriptionId: string): Promise<Sale | null>;
  markCommissionCreated(saleId: number, commissionId: number): Promise<void>;
  /** A sale that was due a commission earns none after all (no reward covers it): state `none`, with the reason. */
  markNoCommission(saleId: number, reason: string): Promise<void>;
  /**
   * Converts a sale recorded without commission for its currency (`currency_mismatch`, before conversions) into the
   * program's currency: its amount, currency, lines, conversion and commission state replaced, its reason cleared,
   * its sales_daily counts moved with it, in one transaction. False when the sale is no longer one.
   */
  convertMismatchedSale(saleId: number, converted: Pick<Sale, "amountCents" | "currency" | "lines" | "conversion" | "commissionState">): Promise<boolean>;
  /** Sales recorded with `currency_mismatch` (before conversions), by id after `afterId`, at most `limit`; one program's, or all. */
  listMismatchedSales(filter: { programId?: number; afterId: number; limit: number }): Promise<Sale[]>;
  /** Converted sales (with a `conversion`), by id after `afterId`, at most `limit` (reconcile checks their amounts). */
  listConvertedSales(afterId: number, limit: number): Promise<Sale[]>;
  /** Sales whose commission is still `pending` and older than `before` (oldest first). */
  listAwaitingCommission(before: Date, limit: number): Promise<Sale[]>;
  /**
   * Attributed sales (by `occurredAt`) per UTC day and per partner, live or
   * test ones: their count, and the sum of the amounts of those in `currency`
   * (the program's). Only days and partners with a sale are returned. Served by
   * the sales_stats index.
   */
  salesStats(q: StatsQuery, currency: string): Promise<StatsRows<SalesFigures>>;
  /** The partners with the most revenue in `currency` over the range best first (ties: lower id first), at most `limit` (sales_running, sales_daily). */
  topPartners(q: StatsQuery, currency: string, limit: number): Promise<TopPartners>;
  /** Builds sales_running up to two days before `today` (the sales service's job); how many program-days it built, 0 when done. */
  extendRunningTotals(today: Date): Promise<number>;
  /** A page of the sales list (listSalesPage's filters and order) as lines of the sales CSV (SALES_CSV), each ending in CRLF. */
  exportSalesLines(filter: SaleListFilter): Promise<Page<string>>;
  /**
   * Attributed sales summed per dimension and value over the range (sales_breakdown_daily; the program's rows, or the
   * partners asked for): their count, and the sum of the amounts of those in `currency` (the program's).
   */
  breakdowns(q: StatsQuery, currency: string): Promise<Array<BreakdownRow<SalesBreakdownFigures>>>;
  /** Keys where sales_daily differs from a recount of the sales, or sales_running from its days (reconcile), at most `limit`. */
  rollupDrift(limit: number): Promise<RollupDrift[]>;
  /** A page of sales sorted by (createdAt desc, id desc), served by an index on (program, createdAt, id) or (program, partner, createdAt, id). */
  listSalesPage(filter: SaleListFilter): Promise<Page<Sale>>;
  /** The sales outbox (table or collection `sales_outbox`), for its relay. */
  readonly outbox: OutboxStore;
  /** The reference-rate tables sales in another currency are converted with (table or collection `exchange_rate_tables`; rate-tables.ts). */
  readonly rateTables: RateTableStore;
}

/** What the sales' breakdowns count: attributed sales and their amounts in the program's currency. */
export type SalesBreakdownFigures = { sales: number; amountCents: number };

/** What sales counts for the overview. */
export type SalesFigures = { sales: number; revenueCents: number };
