/** The sales service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { csvExample, exportDescription } from "../../shared/csv-export";
import type { Jsonified } from "../../shared/dto";
import { declareActions, programRoutes, programApiRoute } from "../../shared/endpoint";
import type { Sale } from "./repository";
import { SALES_CSV } from "./export";
import * as S from "./schemas";
import { EXCHANGE_RATE_ACTIONS } from "./exchange-rate-endpoints";

const refundedExample = { success: true, status: "refunded", deductionAmount: 6, commission_id: 7 };

const saleItemExample: Jsonified<Sale> = {
  id: 9,
  programId: 1,
  transactionId: "order-1001",
  amountCents: 10000,
  currency: "usd",
  conversion: { originalAmountCents: 9200, originalCurrency: "eur", rate: "1.0869565", source: "ecb", rateDay: "2026-01-01" },
  lines: null,
  discountIds: null,
  customerKey: "user_42",
  email: "buyer@example.com",
  processorCustomerId: null,
  partnerId: 3,
  clickId: "clk_8Yq2",
  attributionMethod: "click",
  isTest: false,
  isRecurring: false,
  saleType: null,
  subscriptionId: null,
  commissionState: "created",
  commissionId: 7,
  noCommissionReason: null,
  occurredAt: "2026-01-01T10:00:00.000Z",
  createdAt: "2026-01-01T10:00:00.000Z",
};

export const SALES = declareActions("sales", {
  track: {
    input: S.TrackSaleRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/sale",
      route: "track-server",
      tag: "Tracking",
      summary: "Track a sale",
      description:
        "Server to server only (no CORS). The transaction id is unique per program: a repeat is 409 already_recorded. An attributed, non-test sale gets a commission at the program's rule (commission_status is processing while it is still being created). A sale in another currency than the program's is converted into it at the reference rate of the sale's day; when no rate of that day is known, 503 exchange_rate_unavailable with Retry-After, and nothing is recorded.",
      example: { transaction_id: "order-1001", amount_cents: 10000, currency: "usd", customer_key: "user-42" },
      errors: ["already_recorded", "exchange_rate_unavailable"],
      response: {
        description:
          "The recorded sale and its commission. attribution_method is click, email, processor_customer, customer_key or coupon (null when unattributed). reason says why a sale earns nothing: self_referral when the program's self-referral guard found the customer to be the partner (email or customer key; the sale is then recorded with attributed false); unknown_coupon_code, coupon_code_archived or coupon_partner_not_approved when only its coupon_code could have named the partner; null otherwise. amount_cents and currency are the program's; conversion says what was paid and the rate when the sale was in another currency (null otherwise).",
        example: {
          success: true,
          sale_id: 1,
          transaction_id: "order-1001",
          amount_cents: 10000,
          currency: "usd",
          conversion: { original_amount_cents: 9200, original_currency: "eur", rate: "1.0869565", source: "ecb", rate_day: "2026-01-01" },
          test: false,
          attributed: true,
          partner_id: 3,
          attribution_method: "customer_key",
          reason: null,
          commission_id: 7,
          commission_status: "pending",
        },
      },
    },
  },
  refund: {
    input: S.RefundRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/refund",
      route: "track-server",
      tag: "Tracking",
      summary: "Refund (or charge back) a sale",
      description:
        "Reduces the sale's commission in proportion to the refunded share of the sale. Omitting refund_amount_cents (or 0) refunds the rest (refund_id is then ignored); an over-refund is capped. The status is refunded, reversed (fully refunded), skipped or no_commission. " +
        "Retries are skipped and change nothing. With a refund_id: skipped when that refund_id was already applied to the sale, whatever the amount. " +
        "Without a refund_id: skipped when refund_amount_cents equals the amount asked for (before capping) by any earlier refund of the sale, whether or not that refund had a refund_id; a different amount is applied. So two real refunds of the same amount need refund ids. " +
        "The other way round, a refund with a new refund_id is applied even when an earlier refund without one had the same amount: an id names a refund explicitly. Once the commission is reversed, every call is skipped.",
      example: { transaction_id: "order-1001", refund_amount_cents: 3000, refund_id: "re_1", refund_reason: "customer request" },
      errors: ["not_found"],
      response: { description: "What the refund did to the commission (deductionAmount is in major units).", example: refundedExample },
    },
  },
  list: {
    input: S.ListSalesInput,
    http: [
      programApiRoute({
        method: "GET",
        path: "/sales",
        scope: "sales:read",
        summary: "The program's sales",
        description:
          "Sales recorded for the program, filtered by partner, test or live, attributed or not, and creation date. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.",
        example: { test: "false", from: "2026-01-01", limit: 25 },
        response: { description: "A page of sales.", example: { data: [saleItemExample], nextCursor: null } },
      }),
      {
        method: "GET",
        path: "/api/programs/:programId/sales",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "The program's sales",
        description:
          "Sales recorded for the program, filtered by partner, test or live, attributed or not, and creation date. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page. For members of the program's workspace whose role grants programs:read.",
        example: { programId: 1, test: "false", from: "2026-01-01", limit: 25 },
        response: { description: "A page of sales.", example: { data: [saleItemExample], nextCursor: null } },
      },
      {
        method: "GET",
        path: "/api/admin/sales",
        route: "admin",
        tag: "Operator",
        summary: "A program's sales",
        description:
          "Sales of one program (programId is required), filtered by partner, test or live, attributed or not, and creation date. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.",
        example: { programId: 1, partnerId: 3 },
        errors: ["not_found"],
        response: { description: "A page of sales.", example: { data: [saleItemExample], nextCursor: null } },
      },
    ],
  },
  export: {
    input: S.ExportSalesInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/sales.csv",
      scope: "sales:read",
      tag: "Dashboard",
      summary: "The program's sales as a CSV file",
      description: exportDescription(
        "The sales of the program, filtered like the sales list (partner, test or live, attributed or not, creation date), one row per sale with its attribution and commission state.",
      ),
      example: { programId: 1, test: "false", from: "2026-01-01" },
      response: { description: "The CSV file (Content-Disposition: attachment).", contentType: "text/csv", example: csvExample(SALES_CSV, saleItemExample) },
    }),
  },
  get: {
    input: S.GetSaleInput,
    http: {
      method: "GET",
      path: "/api/admin/programs/:programId/sales/:transactionId",
      route: "admin",
      tag: "Operator",
      summary: "A sale by transaction id",
      description: "The sale as recorded, with its attribution and commission.",
      example: { programId: 1, transactionId: "order-1001" },
      errors: ["not_found"],
      response: { description: "The sale.", example: { id: 1, programId: 1, transactionId: "order-1001", amountCents: 10000, currency: "usd", partnerId: 3, commissionId: 7 } },
    },
  },
  recordProcessorSale: {
    input: S.ProcessorSaleInput,
  },
  settleProcessorTransaction: {
    input: S.ProcessorSettlementInput,
  },
  stats: {
    input: S.StatsInput,
  },
  topPartners: {
    input: S.TopPartnersInput,
  },
  breakdowns: {
    input: S.BreakdownsInput,
  },
  rollupDrift: {
    input: S.RollupDriftInput,
  },
  // The reference-rate tables sales in other currencies are converted with (docs/currencies.md).
  ...EXCHANGE_RATE_ACTIONS,
  conversionDrift: {
    input: S.RollupDriftInput,
  },
  reevaluateCurrencyMismatches: {
    input: S.ReevaluateMismatchesInput,
  },
});
