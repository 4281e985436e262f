import { InvalidRequestError } from "../../../shared/errors";
import { eventTime, processed, type HandlerContext, type HandlerResult } from "../handler";
import { Dispute, objectOf } from "../objects";
import { recordMovements } from "../payments";

/**
 * Every `charge.dispute.*` event: the dispute's latest status. Money counts as
 * reversed only while the processor has withdrawn it (`needs_response`,
 * `under_review`, `lost`); an inquiry (`warning_*`) moves none, and `won`
 * gives back what the chargeback reversed (an opposite ledger entry).
 */
export async function handleDispute(h: HandlerContext): Promise<HandlerResult> {
  const dispute = objectOf(Dispute, h.event);
  if (!dispute.charge) throw new InvalidRequestError(`Dispute ${dispute.id} names no charge.`);
  const movement = {
    programId: h.program.id,
    movementId: dispute.id,
    kind: "dispute" as const,
    chargeId: dispute.charge,
    paymentIntentId: dispute.payment_intent,
    amountCents: dispute.amount,
    status: dispute.status,
    createdAt: new Date(dispute.created * 1000),
    statusAt: eventTime(h.event),
  };
  return processed({ disputeId: dispute.id, status: dispute.status, ...(await recordMovements(h, [movement], [])) });
}
