import { saleRefundCents } from "../../shared/domain/processor-refunds";
import type { HandlerContext } from "./handler";
import { RetryLaterError } from "./handler";
import type { ProcessorPayment } from "./repository";

/** The sale a charge, payment intent or invoice belongs to; a refund may arrive before it (then: retry later). */
export async function requirePayment(h: HandlerContext, references: Array<string | null | undefined>): Promise<ProcessorPayment> {
  for (const reference of references) {
    if (!reference) continue;
    const payment = await h.repo.findPayment(h.program.id, reference);
    if (payment) return payment;
  }
  throw new RetryLaterError(`No sale recorded yet for ${references.filter(Boolean).join(" / ")}.`);
}

export async function linkPayment(h: HandlerContext, references: Array<string | null | undefined>, sale: Omit<ProcessorPayment, "reference" | "programId">) {
  for (const reference of new Set(references.filter((r): r is string => !!r))) {
    await h.repo.linkPayment({ ...sale, programId: h.program.id, reference });
  }
}

/**
 * Applies every refund and dispute seen for the sale, in the processor's
 * order, through the same reversal as the refund endpoint. Each carries its
 * processor id as refund_id, so repeated events change nothing and the sum
 * always matches the processor's cumulative refunded amount.
 */
export async function applyReversals(h: HandlerContext, payment: ProcessorPayment): Promise<Record<string, unknown>[]> {
  const results: Record<string, unknown>[] = [];
  let refundedBeforeCents = 0;
  for (const entry of await h.repo.listRefunds(h.program.id, payment.transactionId)) {
    const amountCents = saleRefundCents({
      saleAmountCents: payment.saleAmountCents,
      chargedAmountCents: payment.chargedAmountCents,
      refundedBeforeCents,
      refundCents: entry.amountCents,
    });
    refundedBeforeCents += entry.amountCents;
    if (amountCents <= 0) continue;
    const result = await h.ctx.call<Record<string, unknown>, unknown>("sales.refundTransaction", {
      programId: h.program.id,
      transactionId: payment.transactionId,
      amountCents,
      refundId: entry.refundId,
      reasonCode: entry.kind === "dispute" ? "chargeback" : "refund",
      reason: entry.kind === "dispute" ? "Chargeback at the processor" : "Refunded at the processor",
    });
    results.push({ refundId: entry.refundId, ...result });
  }
  return results;
}
