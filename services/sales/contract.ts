import type { Page } from "../../shared/pagination";
import type { ExportBatch } from "../../shared/csv-export";
import type { z } from "zod";
import type { Jsonified } from "../../shared/dto";
import type { CommissionsContract } from "../commissions/contract";
import type { RollupDrift, StatsAnswer, TopPartners } from "../../shared/domain/stats";
import type { Sale, SalesBreakdownFigures, SalesFigures } from "./repository";
import type { Breakdown } from "../../shared/domain/breakdowns";
import type * as S from "./schemas";
import type * as X from "./exchange-rate-schemas";
import type { ReferenceRate } from "./exchange-rate";
import type { LoadedRates } from "./exchange-rate-admin";
import type { RefreshOutcome } from "./exchange-rate-job";
import type { RateTable } from "./rate-tables";
import type { MismatchReport } from "./currency-mismatches";

/** `POST /api/v1/track/sale`'s answer (spec 2.1). */
export interface TrackedSale {
  success: true;
  sale_id: number;
  transaction_id: string;
  amount_cents: number;
  currency: string;
  /** A sale in another currency: what was paid and the frozen rate (null otherwise). */
  conversion: { original_amount_cents: number; original_currency: string; rate: string; source: string; rate_day: string } | null;
  test: boolean;
  attributed: boolean;
  partner_id: number | null;
  attribution_method: string | null;
  commission_id: number | null;
  commission_status: string | null;
}

/**
 * The sales service's actions as a caller sees them: params as the zod input
 * schemas accept them, results as the bus delivers them (JSON: dates are ISO
 * strings). Callers use `call` from services/bus.ts.
 */
export interface SalesContract {
  /** HTTP; the caller's program comes from `ctx.meta.programId` (the API key). */
  "sales.track": { params: z.input<typeof S.TrackSaleRequest>; result: TrackedSale };
  "sales.recordProcessorSale": { params: z.input<typeof S.ProcessorSaleInput>; result: { sale: Jsonified<Sale>; commissionId: number | null } };
  /** HTTP; the caller's program comes from `ctx.meta.programId` (the API key). */
  "sales.refund": { params: z.input<typeof S.RefundRequest>; result: CommissionsContract["commissions.reverseForSale"]["result"] };
  "sales.settleProcessorTransaction": { params: z.input<typeof S.ProcessorSettlementInput>; result: CommissionsContract["commissions.settleProcessorForSale"]["result"] };
  "sales.list": { params: z.input<typeof S.ListSalesInput>; result: Page<Jsonified<Sale>> };
  "sales.get": { params: z.input<typeof S.GetSaleInput>; result: Jsonified<Sale> };
  /** One batch of the sales CSV export (the gateway pulls them: shared/csv-export.ts). */
  "sales.export": { params: z.input<typeof S.ExportSalesInput>; result: ExportBatch };
  /** Attributed sales and revenue (program currency) per UTC day (zero-filled) and per partner, for the program overview. */
  "sales.stats": { params: z.input<typeof S.StatsInput>; result: StatsAnswer<SalesFigures> };
  "sales.topPartners": { params: z.input<typeof S.TopPartnersInput>; result: TopPartners };
  /** The range's attributed sales and amounts by country, device, browser and referrer domain of their click: the top values and the rest (programs.breakdowns). */
  "sales.breakdowns": { params: z.input<typeof S.BreakdownsInput>; result: { from: string; to: string; sales: Breakdown<SalesBreakdownFigures> } };
  "sales.rollupDrift": { params: z.input<typeof S.RollupDriftInput>; result: RollupDrift[] };
  /** The reference rate a sale of the day converts with (exchange_rate_unavailable when none). */
  "sales.exchangeRate": { params: z.input<typeof X.ExchangeRateInput>; result: ReferenceRate };
  /** The stored reference-rate tables, newest first. */
  "sales.listExchangeRates": { params: z.input<typeof X.ListExchangeRatesInput>; result: { data: Jsonified<RateTable>[] } };
  /** Tables loaded by an operator (all or nothing). */
  "sales.loadExchangeRates": { params: z.input<typeof X.LoadExchangeRatesInput>; result: LoadedRates };
  /** The reference-rate job's fetch, run now on the instance called. */
  "sales.refreshExchangeRates": { params: z.input<typeof X.RefreshExchangeRatesInput>; result: RefreshOutcome };
  /** Reconcile's sale.converted_at_rate: how many converted sales were checked, and those that drifted. */
  "sales.conversionDrift": { params: z.input<typeof S.RollupDriftInput>; result: { checked: number; drift: Array<{ saleId: number; programId: number; detail: string }> } };
  "sales.reevaluateCurrencyMismatches": { params: z.input<typeof S.ReevaluateMismatchesInput>; result: Jsonified<MismatchReport> };
}
