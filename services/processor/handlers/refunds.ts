import type { ProcessorMovement } from "../processor-refunds";
import { eventTime, processed, type HandlerContext, type HandlerResult } from "../handler";
import { Charge, objectOf, Refund } from "../objects";
import { recordMovements } from "../payments";
import { InvalidRequestError } from "../../../shared/errors";

type RefundObject = ReturnType<typeof Refund.parse>;

function refundMovement(h: HandlerContext, refund: RefundObject, chargeId: string | null): ProcessorMovement {
  const charge = refund.charge ?? chargeId;
  if (!charge) throw new InvalidRequestError(`Refund ${refund.id} names no charge.`);
  return {
    programId: h.program.id,
    movementId: refund.id,
    kind: "refund",
    chargeId: charge,
    paymentIntentId: refund.payment_intent,
    amountCents: refund.amount,
    status: refund.status ?? "succeeded",
    createdAt: new Date(refund.created * 1000),
    statusAt: eventTime(h.event),
  };
}

/**
 * `refund.created`, `refund.updated`, `refund.failed`, `charge.refund.updated`:
 * one refund object with its latest status. A failed or canceled refund gives
 * back what it took (an opposite ledger entry).
 */
export async function handleRefundObject(h: HandlerContext): Promise<HandlerResult> {
  const refund = objectOf(Refund, h.event);
  const movement = refundMovement(h, refund, null);
  return processed({ refundId: refund.id, status: movement.status, ...(await recordMovements(h, [movement], [])) });
}

/**
 * `charge.refunded`: the charge's cumulative `amount_refunded` (the measure
 * when no refund objects are seen), and the refunds it lists (API versions
 * before 2022-11-15, or expanded).
 */
export async function handleChargeRefunded(h: HandlerContext): Promise<HandlerResult> {
  const charge = objectOf(Charge, h.event);
  const at = eventTime(h.event);
  const refunds = (charge.refunds?.data ?? []).map((r) => refundMovement(h, r, charge.id));
  const snapshot: ProcessorMovement = {
    programId: h.program.id,
    movementId: charge.id,
    kind: "charge",
    chargeId: charge.id,
    paymentIntentId: charge.payment_intent,
    amountCents: charge.amount_refunded ?? refunds.filter((r) => r.status !== "failed" && r.status !== "canceled").reduce((s, r) => s + r.amountCents, 0),
    status: "snapshot",
    createdAt: at,
    statusAt: at,
  };
  // The newest listed refund names the ledger entry; the snapshot, when none is listed.
  const newestFirst = [...refunds].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const movements = [...newestFirst, snapshot];
  return processed({ amountRefunded: snapshot.amountCents, refundsListed: refunds.length, ...(await recordMovements(h, movements, [charge.invoice])) });
}
