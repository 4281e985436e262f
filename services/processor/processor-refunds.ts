import { mulDivRound } from "../../shared/domain/money";

/**
 * What the processor tells us about money going back on a sale's charges, one
 * record per processor object: a refund, a dispute, a charge's cumulative
 * `amount_refunded` (the "charge" snapshot, for accounts whose events carry no
 * refund objects), or a chargeback's reversal (Paddle's `chargeback_reverse`
 * adjustment: money a lost chargeback took, given back). Amounts are in the
 * charged unit (tax included).
 */
export type MovementKind = "refund" | "dispute" | "charge" | "reversal";

export interface ProcessorMovement {
  programId: number;
  /** The processor's id: `re_...`, `dp_...`, or the charge id for a snapshot. */
  movementId: string;
  kind: MovementKind;
  chargeId: string;
  paymentIntentId: string | null;
  amountCents: number;
  /**
   * The processor's status (`succeeded`, `needs_response`, ...; `snapshot` for a charge); a refund waiting for the
   * platform's approval (Paddle's `pending_approval`) is `awaiting_approval`: it counts nothing until approved.
   */
  status: string;
  /** When the processor created the object (Unix time of a refund matters against snapshots). */
  createdAt: Date;
  /** The time of the event that told us this status: newer news wins. */
  statusAt: Date;
}

/** Refund statuses that are final and give the money back to the merchant. */
const REFUND_UNDONE = new Set(["failed", "canceled"]);
/** Refund statuses that take nothing: undone, or not approved yet. */
const REFUND_UNCOUNTED = new Set([...REFUND_UNDONE, "awaiting_approval"]);
/** Dispute statuses where the processor has withdrawn the money (inquiries, `warning_*`, withdraw nothing). */
const DISPUTE_WITHDRAWN = new Set(["needs_response", "under_review", "lost"]);
const DISPUTE_FINAL = new Set(["won", "lost", "warning_closed", "prevented"]);

/** Whether a status can never change again: a later-dated older status must not overwrite it. */
export function isFinalStatus(kind: MovementKind, status: string): boolean {
  if (kind === "refund") return REFUND_UNDONE.has(status);
  if (kind === "dispute") return DISPUTE_FINAL.has(status);
  if (kind === "reversal") return status === "succeeded";
  return false;
}

/**
 * Orders two reports of the same object, so events may arrive in any order:
 * a final status beats any other, then the newer event, then (same second)
 * the further status, or for a charge snapshot the larger refunded amount.
 * Returns true when `next` should replace `current`.
 */
export function supersedes(
  current: Pick<ProcessorMovement, "kind" | "status" | "statusAt" | "amountCents">,
  next: Pick<ProcessorMovement, "kind" | "status" | "statusAt" | "amountCents">,
): boolean {
  const finalNow = isFinalStatus(current.kind, current.status);
  const finalNext = isFinalStatus(next.kind, next.status);
  if (finalNow !== finalNext) return finalNext;
  if (finalNow) return false;
  const dt = next.statusAt.getTime() - current.statusAt.getTime();
  if (dt !== 0) return dt > 0;
  return progress(next) > progress(current);
}

const STATUS_PROGRESS: Record<string, number> = {
  awaiting_approval: 0,
  requires_action: 0,
  pending: 1,
  succeeded: 2,
  warning_needs_response: 0,
  warning_under_review: 1,
  needs_response: 2,
  under_review: 3,
};
const progress = (m: Pick<ProcessorMovement, "kind" | "status" | "amountCents">) => (m.kind === "charge" ? m.amountCents : (STATUS_PROGRESS[m.status] ?? 0));

/**
 * How much of the charged amount has gone back, from everything known, capped
 * at the charged amount. Per charge: the refunds that are not failed or
 * canceled (pending ones count, as in the processor's `amount_refunded`; ones
 * awaiting approval do not), or the charge's own cumulative figure when it is
 * larger (refund objects we never saw), less refunds that failed after that
 * figure was taken; plus disputes whose money is withdrawn, less chargebacks
 * reversed (never below zero: a reversal known before its chargeback nets out
 * once both are). A won dispute or a closed inquiry counts nothing.
 */
export function refundedOnChargesCents(movements: readonly ProcessorMovement[], chargedAmountCents: number): number {
  const charges = new Map<string, ProcessorMovement[]>();
  for (const m of movements) charges.set(m.chargeId, [...(charges.get(m.chargeId) ?? []), m]);
  let total = 0;
  for (const list of charges.values()) {
    const refunds = list.filter((m) => m.kind === "refund");
    const counted = refunds.filter((r) => !REFUND_UNCOUNTED.has(r.status)).reduce((sum, r) => sum + r.amountCents, 0);
    const snapshot = list.find((m) => m.kind === "charge");
    const undoneSinceSnapshot = snapshot
      ? refunds.filter((r) => REFUND_UNDONE.has(r.status) && r.statusAt > snapshot.statusAt && r.createdAt <= snapshot.statusAt).reduce((sum, r) => sum + r.amountCents, 0)
      : 0;
    const fromSnapshot = snapshot ? Math.max(0, snapshot.amountCents - undoneSinceSnapshot) : 0;
    const disputed = list.filter((m) => m.kind === "dispute" && DISPUTE_WITHDRAWN.has(m.status)).reduce((sum, d) => sum + d.amountCents, 0);
    const reversed = list.filter((m) => m.kind === "reversal" && m.status === "succeeded").reduce((sum, r) => sum + r.amountCents, 0);
    total += Math.max(0, Math.max(counted, fromSnapshot) + disputed - reversed);
  }
  return Math.min(total, chargedAmountCents);
}

/**
 * The processor refunds what it charged (tax included); our sale is the net
 * amount. The sale's refunded part is always computed from the cumulative
 * figure, round(sale x refunded / charged), never summed per refund, so the
 * order in which refunds arrive cannot change it by a cent, and a charge
 * refunded in full refunds exactly the whole sale.
 */
export function saleRefundedCents(p: { saleAmountCents: number; chargedAmountCents: number; refundedOnChargesCents: number }): number {
  const refunded = Math.min(Math.max(p.refundedOnChargesCents, 0), p.chargedAmountCents);
  return mulDivRound(p.saleAmountCents, refunded, p.chargedAmountCents);
}
