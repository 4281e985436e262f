import type Stripe from "stripe";
import { eventTime, idOf, ignored, processed, type HandlerContext, type HandlerResult } from "../handler";
import { linkPayment } from "../payments";

/**
 * First payment of a one-time or subscription checkout (spec 6.1): records the
 * sale (net of tax) and attributes it by click id, email, processor customer,
 * then customer key.
 */
export async function handleCheckoutSessionCompleted(h: HandlerContext): Promise<HandlerResult> {
  const session = h.event.data.object as Stripe.Checkout.Session;
  const metadata = session.metadata ?? {};
  if (metadata.program_id && metadata.program_id !== String(h.program.id)) {
    return ignored(`metadata program_id ${metadata.program_id} is not the connected account's program ${h.program.id}`);
  }
  if (session.mode !== "payment" && session.mode !== "subscription") return ignored(`checkout mode '${session.mode}' takes no payment`);
  if (session.payment_status !== "paid") return ignored(`payment_status is '${session.payment_status}'`);
  const chargedAmountCents = session.amount_total ?? 0;
  const amountCents = chargedAmountCents - (session.total_details?.amount_tax ?? 0);
  if (amountCents <= 0) return ignored("nothing was paid");

  const subscriptionId = idOf(session.subscription);
  const processorCustomerId = idOf(session.customer);
  const sale = await recordSaleOnce(h, {
    programId: h.program.id,
    transactionId: session.id,
    amountCents,
    currency: session.currency ?? h.program.currency,
    attributionHints: {
      clickId: metadata.svc_click_id || null,
      email: session.customer_details?.email ?? session.customer_email ?? null,
      processorCustomerId,
      customerKey: metadata.svc_customer_key || null,
    },
    isRecurring: false,
    subscriptionId,
    processorCustomerId,
    occurredAt: eventTime(h.event).toISOString(),
  });
  // Refunds and disputes refer to the payment intent (one-time) or the invoice (subscription);
  // the subscription link lets its first invoice be matched to this sale.
  await linkPayment(h, [idOf(session.payment_intent), idOf(session.invoice), subscriptionId && `subscription:${subscriptionId}`], {
    transactionId: session.id,
    saleAmountCents: amountCents,
    chargedAmountCents,
  });
  return processed({ transactionId: session.id, ...sale });
}

/** A sale already recorded (a redelivery, or processing retried after a failure) is fine. */
export async function recordSaleOnce(h: HandlerContext, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  try {
    const { sale, commissionId } = await h.ctx.call<{ sale: { id: number; partnerId: number | null; attributionMethod: string | null }; commissionId: number | null }, unknown>(
      "sales.recordProcessorSale",
      input,
    );
    return { saleId: sale.id, partnerId: sale.partnerId, attributionMethod: sale.attributionMethod, commissionId };
  } catch (err) {
    if ((err as { type?: string }).type === "already_recorded") return { alreadyRecorded: true };
    throw err;
  }
}
