/** The sales export's columns (docs/dashboard-api.md, "Exports (CSV)"): a row of the sales list, money in minor units. */
import { csvDate, csvLayout } from "../../shared/csv-export";
import type { Jsonified } from "../../shared/dto";
import type { Sale } from "./repository";

/** A sale as read (the export), or as the list shows it (the reference's example). */
type SaleItem = Sale | Jsonified<Sale>;

export const SALES_CSV = csvLayout<SaleItem>({
  id: (s) => s.id,
  created_at: (s) => csvDate(s.createdAt),
  occurred_at: (s) => csvDate(s.occurredAt),
  transaction_id: (s) => s.transactionId,
  amount_cents: (s) => s.amountCents,
  currency: (s) => s.currency,
  partner_id: (s) => s.partnerId,
  attribution_method: (s) => s.attributionMethod,
  click_id: (s) => s.clickId,
  customer_key: (s) => s.customerKey,
  email: (s) => s.email,
  processor_customer_id: (s) => s.processorCustomerId,
  test: (s) => s.isTest,
  recurring: (s) => s.isRecurring,
  sale_type: (s) => s.saleType,
  subscription_id: (s) => s.subscriptionId,
  commission_state: (s) => s.commissionState,
  commission_id: (s) => s.commissionId,
  no_commission_reason: (s) => s.noCommissionReason,
  // A sale paid in another currency (docs/currencies.md): what was paid, and the rate amount_cents was converted at.
  original_amount_cents: (s) => s.conversion?.originalAmountCents ?? null,
  original_currency: (s) => s.conversion?.originalCurrency ?? null,
  exchange_rate: (s) => s.conversion?.rate ?? null,
  exchange_rate_source: (s) => s.conversion?.source ?? null,
  exchange_rate_day: (s) => s.conversion?.rateDay ?? null,
});
