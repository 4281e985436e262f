import { cleanAttributionHints } from "../attribution-hints";
import { discountHintsOf, discountIdsOf, promotionCodeIdsOf } from "../discounts";
import { eventTime, ignored, processed, type HandlerContext, type HandlerResult } from "../handler";
import { CheckoutSession, objectOf } from "../objects";
import { linkSale } from "../payments";
import { checkoutLines } from "../product-lines";
import { recordSaleOnce } from "../record-sale";
import { settlementOf } from "../settlement";

/**
 * `checkout.session.completed`, and `checkout.session.async_payment_succeeded`
 * for delayed payment methods (bank debits: the session completes `unpaid`,
 * the money arrives days later). First payment of a one-time or subscription
 * checkout (spec 6.1): records the sale (net of tax) once it is paid, and
 * attributes it by click id, email, processor customer, then customer key,
 * then a partner's promotion code among its discounts (coupon codes).
 */
export async function handleCheckoutSessionPaid(h: HandlerContext): Promise<HandlerResult> {
  const session = objectOf(CheckoutSession, h.event);
  const metadata = session.metadata;
  if (metadata.program_id !== undefined && String(metadata.program_id) !== String(h.program.id)) {
    return ignored(`metadata program_id ${String(metadata.program_id).slice(0, 64)} is not the event's program ${h.program.id}`);
  }
  if (session.mode !== "payment" && session.mode !== "subscription") return ignored(`checkout mode '${session.mode}' takes no payment`);
  if (session.payment_status !== "paid") {
    return ignored(`payment_status is '${session.payment_status}'${session.payment_status === "unpaid" ? ": recorded at checkout.session.async_payment_succeeded" : ""}`);
  }
  const chargedAmountCents = session.amount_total ?? 0;
  const amountCents = chargedAmountCents - (session.total_details?.amount_tax ?? 0);
  if (amountCents <= 0) return ignored("nothing was paid");

  const email = session.customer_details?.email ?? session.customer_email;
  const { hints, dropped } = cleanAttributionHints({ clickId: metadata.svc_click_id, email, customerKey: metadata.svc_customer_key });
  if (dropped.length) h.logger.warn(`Processor event ${h.event.id}: attribution hints dropped (${dropped.join("; ")}).`);
  const { lines, linesUnavailable } = await checkoutLines(h, session.id, amountCents);
  const currency = session.currency ?? h.program.currency;
  const { settlement, settlementUnavailable } = await settlementOf(h, session.payment_intent, currency);
  const sale = await recordSaleOnce(h, {
    programId: h.program.id,
    transactionId: session.id,
    amountCents,
    currency,
    settlement,
    attributionHints: { ...hints, processorCustomerId: session.customer, ...discountHintsOf({ promotionCodeIds: promotionCodeIdsOf(session.discounts) }) },
    isRecurring: false,
    isTest: h.testMode,
    subscriptionId: session.subscription,
    processorCustomerId: session.customer,
    occurredAt: eventTime(h.event).toISOString(),
    lines,
    discountIds: discountIdsOf(session.discounts),
  });
  // Refunds and disputes refer to the payment intent (one-time) or, through the invoice, to the subscription's
  // first payment; `subscription:` lets a first invoice that names no session find this sale.
  const settled = await linkSale(h, [session.id, session.payment_intent, session.invoice, session.subscription && `subscription:${session.subscription}`], {
    transactionId: session.id,
    saleAmountCents: amountCents,
    chargedAmountCents,
  });
  return processed({
    transactionId: session.id,
    ...sale,
    ...(lines ? { lines: lines.length } : {}),
    ...(linesUnavailable ? { linesUnavailable } : {}),
    ...(settlementUnavailable ? { settlementUnavailable } : {}),
    ...(dropped.length ? { droppedHints: dropped } : {}),
    ...(settled ? { settled } : {}),
  });
}

/** The delayed payment failed: nothing was paid, nothing is recorded. */
export async function handleCheckoutSessionPaymentFailed(h: HandlerContext): Promise<HandlerResult> {
  const session = objectOf(CheckoutSession, h.event);
  return ignored(`the delayed payment of checkout session ${session.id} failed: no sale`);
}
