import { cleanAttributionHints } from "../attribution-hints";
import { discountHintsOf, invoicePromotionCodes } from "../discounts";
import { eventTime, ignored, processed, type HandlerContext, type HandlerResult } from "../handler";
import { subscriptionDetailsOf } from "../invoice";
import { Invoice, objectOf } from "../objects";
import { linkReferences, linkSale } from "../payments";
import { invoiceLines } from "../product-lines";
import { recordSaleOnce } from "../record-sale";
import { settlementOf } from "../settlement";

/**
 * `invoice.payment_succeeded` (and `invoice.paid`, the same news): subscription
 * renewals (spec 6.1, 6.2). The first invoice is counted at checkout; its
 * references join the checkout's sale. Renewals are attributed with the
 * Subscription's own metadata, the customer of an earlier attributed sale, or
 * a partner's promotion code among the invoice's discounts (coupon codes);
 * otherwise recorded unattributed. From API 2025-03-31 an invoice names no
 * payment intent or charge: those arrive with `invoice_payment.paid`.
 */
export async function handleInvoicePaid(h: HandlerContext): Promise<HandlerResult> {
  const invoice = objectOf(Invoice, h.event);
  const { subscriptionId, metadata } = subscriptionDetailsOf(invoice as Parameters<typeof subscriptionDetailsOf>[0]);
  if (!subscriptionId) return ignored("not a subscription invoice");
  if (metadata.program_id !== undefined && String(metadata.program_id) !== String(h.program.id)) {
    return ignored(`subscription metadata program_id ${String(metadata.program_id).slice(0, 64)} is not the event's program ${h.program.id}`);
  }
  const references = [invoice.id, invoice.payment_intent, invoice.charge, ...(invoice.payments?.data ?? []).flatMap((p) => [p.payment?.payment_intent, p.payment?.charge])];

  if (invoice.billing_reason === "subscription_create") {
    // Counted at checkout.session.completed (which may come later): the invoice joins the checkout's sale.
    const settled = await linkReferences(h, [`subscription:${subscriptionId}`, ...references]);
    return { status: "ignored", outcome: { reason: "first invoice of a subscription: counted at checkout", ...(settled ? { settled } : {}) } };
  }
  if (invoice.billing_reason !== "subscription_cycle") return ignored(`billing_reason '${invoice.billing_reason}' is not a renewal`);
  const chargedAmountCents = invoice.amount_paid ?? 0;
  const amountCents = chargedAmountCents - taxOf(invoice);
  if (amountCents <= 0) return ignored("nothing was paid");

  const { hints, dropped } = cleanAttributionHints({ clickId: metadata.svc_click_id, customerKey: metadata.svc_customer_key });
  if (dropped.length) h.logger.warn(`Processor event ${h.event.id}: attribution hints dropped (${dropped.join("; ")}).`);
  const { lines, linesUnavailable } = await invoiceLines(h, invoice, amountCents);
  const discounts = await invoicePromotionCodes(h, invoice);
  const currency = invoice.currency ?? h.program.currency;
  // The payment intent: on the invoice before API 2025-03-31, among its payments after (when the event carries them).
  const paymentIntent = invoice.payment_intent ?? invoice.payments?.data?.find((p) => p.payment?.payment_intent)?.payment?.payment_intent;
  const { settlement, settlementUnavailable } = await settlementOf(h, paymentIntent, currency);
  const sale = await recordSaleOnce(h, {
    programId: h.program.id,
    transactionId: invoice.id,
    amountCents,
    currency,
    settlement,
    attributionHints: { clickId: hints.clickId, customerKey: hints.customerKey, ...discountHintsOf(discounts) },
    isRecurring: true,
    isTest: h.testMode,
    subscriptionId,
    processorCustomerId: invoice.customer,
    occurredAt: eventTime(h.event).toISOString(),
    lines,
  });
  const settled = await linkSale(h, references, { transactionId: invoice.id, saleAmountCents: amountCents, chargedAmountCents });
  return processed({
    transactionId: invoice.id,
    subscriptionId,
    ...sale,
    ...(lines ? { lines: lines.length } : {}),
    ...(linesUnavailable ? { linesUnavailable } : {}),
    ...(settlementUnavailable ? { settlementUnavailable } : {}),
    ...(dropped.length ? { droppedHints: dropped } : {}),
    ...(settled ? { settled } : {}),
  });
}

/** Tax: `total_taxes` from 2025-03-31, `tax` before. */
function taxOf(invoice: { total_taxes?: Array<{ amount: number }> | null; tax?: number | null }): number {
  if (Array.isArray(invoice.total_taxes)) return invoice.total_taxes.reduce((sum, t) => sum + t.amount, 0);
  return invoice.tax ?? 0;
}
