import type Stripe from "stripe";
import { idOf, ignored, processed, type HandlerContext, type HandlerResult } from "../handler";
import { applyReversals, requirePayment } from "../payments";

/** A chargeback reverses the commission like a refund, with reason `chargeback`. */
export async function handleDisputeCreated(h: HandlerContext): Promise<HandlerResult> {
  const dispute = h.event.data.object as Stripe.Dispute;
  const payment = await requirePayment(h, [idOf(dispute.payment_intent), idOf(dispute.charge)]);
  await h.repo.recordRefund({
    programId: h.program.id,
    refundId: dispute.id,
    transactionId: payment.transactionId,
    amountCents: dispute.amount,
    kind: "dispute",
    createdAt: new Date(dispute.created * 1000),
  });
  return processed({ transactionId: payment.transactionId, applied: await applyReversals(h, payment) });
}

/** A dispute won gives back what its chargeback reversed, as a new opposite entry; a lost one changes nothing. */
export async function handleDisputeClosed(h: HandlerContext): Promise<HandlerResult> {
  const dispute = h.event.data.object as Stripe.Dispute;
  if (dispute.status !== "won") return ignored(`dispute closed as '${dispute.status}': the reversal stands`);
  const payment = await requirePayment(h, [idOf(dispute.payment_intent), idOf(dispute.charge)]);
  const restored = await h.ctx.call<Record<string, unknown>, unknown>("sales.restoreTransaction", {
    programId: h.program.id,
    transactionId: payment.transactionId,
    refundId: dispute.id,
    reason: "Chargeback won: commission restored",
  });
  return processed({ transactionId: payment.transactionId, ...restored });
}
