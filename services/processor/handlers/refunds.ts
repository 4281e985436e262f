import type Stripe from "stripe";
import { idOf, processed, ignored, type HandlerContext, type HandlerResult } from "../handler";
import { applyReversals, requirePayment } from "../payments";

/** Only money that actually went back counts; a pending refund is applied when it succeeds. */
const settled = (refund: Stripe.Refund) => refund.status === "succeeded";

/**
 * `charge.refunded` (with the charge's refund list, when the API version
 * includes it) and `refund.created` / `refund.updated` (one refund object):
 * each refund object is recorded once by its id and applied in order.
 */
export async function handleChargeRefunded(h: HandlerContext): Promise<HandlerResult> {
  const charge = h.event.data.object as Stripe.Charge & { invoice?: string | { id: string } | null };
  const payment = await requirePayment(h, [idOf(charge.payment_intent), idOf(charge.invoice), charge.id]);
  const refunds = (charge.refunds?.data ?? []).filter(settled);
  for (const refund of refunds) await recordRefund(h, payment.transactionId, refund);
  const applied = await applyReversals(h, payment);
  return processed({ transactionId: payment.transactionId, amountRefunded: charge.amount_refunded, refundsListed: refunds.length, applied });
}

export async function handleRefundObject(h: HandlerContext): Promise<HandlerResult> {
  const refund = h.event.data.object as Stripe.Refund;
  if (!settled(refund)) return ignored(`refund status is '${refund.status}'`);
  const payment = await requirePayment(h, [idOf(refund.payment_intent), idOf(refund.charge)]);
  await recordRefund(h, payment.transactionId, refund);
  return processed({ transactionId: payment.transactionId, applied: await applyReversals(h, payment) });
}

function recordRefund(h: HandlerContext, transactionId: string, refund: Stripe.Refund) {
  return h.repo.recordRefund({
    programId: h.program.id,
    refundId: refund.id,
    transactionId,
    amountCents: refund.amount,
    kind: "refund",
    createdAt: new Date(refund.created * 1000),
  });
}
