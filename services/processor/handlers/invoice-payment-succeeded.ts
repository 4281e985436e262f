import type Stripe from "stripe";
import { subscriptionDetailsOf, type InvoiceLike } from "../../../sdk/src/invoice";
import { eventTime, idOf, ignored, processed, type HandlerContext, type HandlerResult } from "../handler";
import { linkPayment } from "../payments";
import { recordSaleOnce } from "./checkout-session-completed";

type InvoiceWithLegacyFields = Stripe.Invoice &
  InvoiceLike & { payment_intent?: string | { id: string } | null; charge?: string | { id: string } | null; tax?: number | null };

/**
 * Subscription renewals (spec 6.1, 6.2). The first invoice is counted at
 * checkout; renewals are attributed only with the Subscription's own metadata
 * (when it is empty the renewal is recorded unattributed).
 */
export async function handleInvoicePaymentSucceeded(h: HandlerContext): Promise<HandlerResult> {
  const invoice = h.event.data.object as InvoiceWithLegacyFields;
  const { subscriptionId, metadata } = subscriptionDetailsOf(invoice);
  if (!subscriptionId) return ignored("not a subscription invoice");
  if (metadata.program_id && metadata.program_id !== String(h.program.id)) {
    return ignored(`subscription metadata program_id ${metadata.program_id} is not the connected account's program ${h.program.id}`);
  }
  const references = [invoice.id, idOf(invoice.payment_intent), idOf(invoice.charge), ...paymentIntentsOf(invoice)];

  if (invoice.billing_reason === "subscription_create") {
    // Counted at checkout.session.completed; remember its references so its refunds find that sale.
    const checkout = await h.repo.findPayment(h.program.id, `subscription:${subscriptionId}`);
    if (checkout) {
      const { transactionId, saleAmountCents, chargedAmountCents } = checkout;
      await linkPayment(h, references, { transactionId, saleAmountCents, chargedAmountCents });
    }
    return ignored("first invoice of a subscription: counted at checkout");
  }
  if (invoice.billing_reason !== "subscription_cycle") return ignored(`billing_reason '${invoice.billing_reason}' is not a renewal`);
  const chargedAmountCents = invoice.amount_paid ?? 0;
  const amountCents = chargedAmountCents - taxOf(invoice);
  if (amountCents <= 0) return ignored("nothing was paid");

  const processorCustomerId = idOf(invoice.customer);
  const sale = await recordSaleOnce(h, {
    programId: h.program.id,
    transactionId: invoice.id,
    amountCents,
    currency: invoice.currency ?? h.program.currency,
    attributionHints: { clickId: metadata.svc_click_id || null, customerKey: metadata.svc_customer_key || null },
    isRecurring: true,
    subscriptionId,
    processorCustomerId,
    occurredAt: eventTime(h.event).toISOString(),
  });
  await linkPayment(h, references, { transactionId: invoice.id, saleAmountCents: amountCents, chargedAmountCents });
  return processed({ transactionId: invoice.id, subscriptionId, ...sale });
}

/** Tax: `total_taxes` from 2025-03-31, `tax` before. */
function taxOf(invoice: InvoiceWithLegacyFields): number {
  const totalTaxes = (invoice as { total_taxes?: Array<{ amount: number }> | null }).total_taxes;
  if (Array.isArray(totalTaxes)) return totalTaxes.reduce((sum, t) => sum + (t.amount ?? 0), 0);
  return invoice.tax ?? 0;
}

/** From 2025-03-31 an invoice lists its payments instead of carrying `payment_intent`. */
function paymentIntentsOf(invoice: InvoiceWithLegacyFields): string[] {
  const payments = (invoice as { payments?: { data?: Array<{ payment?: { payment_intent?: string | { id: string } | null } }> } }).payments;
  return (payments?.data ?? []).map((p) => idOf(p.payment?.payment_intent)).filter((id): id is string => !!id);
}
