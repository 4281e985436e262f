/**
 * Paddle Billing's transactions and adjustments in the processor's own terms: a payment to record as a sale, and
 * movements (refunds, chargebacks, their reversals) settled by the same rules as Stripe's (processor-refunds.ts).
 * Pure: the notification handlers fetch and record, these only translate.
 */
import { parseRate } from "../../../shared/domain/exchange-rates";
import type { SaleLine } from "../../../shared/domain/rewards";
import type { ProcessorMovement } from "../processor-refunds";
import { apportionCents } from "../sale-lines";
import type { PaddleAdjustment, PaddleTransaction } from "./objects";

/** A completed transaction as a sale: amounts in minor units of the transaction's currency. */
export interface PaddlePayment {
  transactionId: string;
  subscriptionId: string | null;
  processorCustomerId: string | null;
  discountId: string | null;
  isRecurring: boolean;
  /** What was paid net of tax (after discounts): the sale's amount. */
  saleAmountCents: number;
  /** What was charged, tax included: refunds and chargebacks are fractions of it. */
  chargedAmountCents: number;
  currency: string;
  occurredAt: Date | null;
  /** The checkout's custom data as given (cleaned by cleanAttributionHints before use). */
  hints: { clickId?: unknown; customerKey?: unknown; programId?: unknown };
  /** The line items, their net paid apportioned to the sale's amount (product rewards). */
  lines: SaleLine[];
  /** Paddle's own rate to the payout currency (`payout_totals.exchange_rate`), when it is another currency. */
  settlement: { currency: string; rate: string } | null;
}

/** Origins that are a sale: a first payment (checkout or API) or a subscription's renewal. */
const SALE_ORIGINS: Record<string, boolean> = { web: false, api: false, subscription_recurring: true };

/** The sale of a completed transaction, or why none is recorded. */
export function paddlePaymentOf(t: PaddleTransaction): { payment: PaddlePayment } | { ignored: string } {
  if (t.status !== "completed") return { ignored: `transaction status '${t.status}' is not completed` };
  if (!Object.hasOwn(SALE_ORIGINS, t.origin)) return { ignored: `transaction origin '${t.origin}' (a change to a subscription) is not a sale` };
  if (t.collection_mode === "manual") return { ignored: "manually collected transaction (an invoice) is not a sale" };
  const { totals, payout_totals: payout, line_items: items } = t.details;
  const saleAmountCents = totals.total - totals.tax;
  if (saleAmountCents <= 0) return { ignored: `nothing was paid net of tax (${saleAmountCents})` };
  const shares = apportionCents(
    saleAmountCents,
    items.map((item) => Math.max(0, item.totals.total - item.totals.tax)),
  );
  const custom = t.custom_data ?? {};
  const rate = payout?.exchange_rate;
  return {
    payment: {
      transactionId: t.id,
      subscriptionId: t.subscription_id ?? null,
      processorCustomerId: t.customer_id ?? null,
      discountId: t.discount_id ?? null,
      isRecurring: SALE_ORIGINS[t.origin],
      saleAmountCents,
      chargedAmountCents: totals.total,
      currency: t.currency_code,
      occurredAt: t.billed_at ? new Date(t.billed_at) : null,
      hints: { clickId: custom.svc_click_id, customerKey: custom.svc_customer_key, programId: custom.program_id },
      lines: items.map((item, i) => ({ amountCents: shares[i], productId: item.product?.id ?? null, priceId: item.price_id ?? null })),
      settlement: payout && payout.currency_code !== t.currency_code && rate && parseRate(rate) ? { currency: payout.currency_code, rate } : null,
    },
  };
}

/**
 * What an adjustment tells of money going back, in the vocabulary of processor-refunds.ts: a refund waiting for
 * approval counts nothing, approved it counts, rejected it is undone for good; a chargeback takes the money (final);
 * its reversal gives it back; a chargeback warning is an inquiry. Credits to the customer's balance move no money
 * of the sale. `statusAt` is the notification's time (the created notification's `updated_at` is a zero date).
 */
export function paddleMovementOf(a: PaddleAdjustment, programId: number, occurredAt: Date): { movement: ProcessorMovement } | { ignored: string } {
  const base = { programId, movementId: a.id, chargeId: a.transaction_id, paymentIntentId: null, amountCents: a.totals.total, createdAt: new Date(a.created_at), statusAt: occurredAt };
  const refundStatus: Record<string, string> = { pending_approval: "awaiting_approval", approved: "succeeded", rejected: "canceled", reversed: "canceled" };
  if (a.action === "refund" && Object.hasOwn(refundStatus, a.status)) return { movement: { ...base, kind: "refund", status: refundStatus[a.status] } };
  // A chargeback is created approved; `reversed` once its reversal exists, which counts on its own (below).
  if (a.action === "chargeback" && (a.status === "approved" || a.status === "reversed")) return { movement: { ...base, kind: "dispute", status: "lost" } };
  if (a.action === "chargeback_reverse" && a.status === "approved") return { movement: { ...base, kind: "reversal", status: "succeeded" } };
  if (a.action === "chargeback_warning") return { movement: { ...base, kind: "dispute", status: "warning_needs_response" } };
  return { ignored: `adjustment action '${a.action}' with status '${a.status}' moves no money of the sale` };
}
