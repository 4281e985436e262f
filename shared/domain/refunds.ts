import { mulDivRound } from "./money";

/** Commission states. `approved` and `paid` are "past pending": credited to the balance. */
export type CommissionStatus = "pending" | "approved" | "paid" | "refunded" | "reversed";

/** Why a commission was taken back: the sale was refunded, charged back, or the merchant voided the commission. */
export type RefundReasonCode = "refund" | "chargeback" | "void";

/**
 * The base refunds of a commission are counted against: its sale's amount as paid. A sale converted from another
 * currency is refunded in that currency (docs/currencies.md), so its base is the original amount, and the
 * deductions stay that share of the commission whatever the rate does since.
 */
export function refundBaseCents(c: { saleAmountCents: number; saleOriginal?: { amountCents: number } | null }): number {
  return c.saleOriginal?.amountCents ?? c.saleAmountCents;
}

/** What the reversal logic needs to know about one commission and its sale. */
export interface CommissionRefundState {
  commissionCents: number;
  saleAmountCents: number;
  refundedCents: number;
  status: CommissionStatus;
  previousRefunds: ReadonlyArray<{ refundId: string | null; requestedCents: number }>;
}

export interface RefundRequest {
  /** This refund's amount; `undefined` or 0 means "refund what is left". */
  amountCents?: number;
  refundId?: string;
}

export type RefundPlan =
  | { kind: "skip"; reason: string }
  | {
      kind: "apply";
      /** The part of the sale this call refunds after capping at the sale amount. */
      appliedCents: number;
      /** The amount this call asked for (0 for "the rest"); used to detect retries without an id. */
      requestedCents: number;
      refundedAfterCents: number;
      deductionCents: number;
      nextStatus: "refunded" | "reversed";
      /** The idempotency key recorded with the refund (null when none applies). */
      refundId: string | null;
    };

/**
 * round(C * R / S): the part of commission C that refunding R of base S takes back. A clawback (a manual commission
 * of negative C) is taken back the same way: the share has C's sign and the size of |C|'s share.
 */
export function shareOf(commissionCents: number, refundedCents: number, baseCents: number): number {
  return commissionCents < 0 ? -mulDivRound(-commissionCents, refundedCents, baseCents) : mulDivRound(commissionCents, refundedCents, baseCents);
}

/**
 * Decides what one refund call does to a commission (spec 3.1, 4.1).
 *
 * Deduction = round(C * R_after / S) - round(C * R_before / S), so the sum of
 * all deductions is exactly round(C * R / S) and a full refund deducts C.
 */
export function planRefund(state: CommissionRefundState, request: RefundRequest): RefundPlan {
  if (state.status === "reversed") return { kind: "skip", reason: "Commission already reversed." };

  const refundRest = !request.amountCents;
  // The spec ignores refund_id when refunding the rest: that call is already safe to retry.
  const refundId = refundRest ? null : request.refundId || null;

  if (refundId !== null && state.previousRefunds.some((r) => r.refundId === refundId)) {
    return { kind: "skip", reason: `Refund '${refundId}' was already applied to this sale.` };
  }
  if (!refundRest && refundId === null && state.previousRefunds.some((r) => r.requestedCents === request.amountCents)) {
    return {
      kind: "skip",
      reason: `A refund of ${request.amountCents} was already applied to this sale; without refund_id a repeat of the same amount is treated as a retry.`,
    };
  }

  const { saleAmountCents: S, commissionCents: C, refundedCents: before } = state;
  const requested = refundRest ? S - before : (request.amountCents as number);
  const after = Math.min(before + requested, S);
  const appliedCents = after - before;
  if (appliedCents <= 0) return { kind: "skip", reason: "The sale is already fully refunded." };

  const deductionCents = shareOf(C, after, S) - shareOf(C, before, S);
  return {
    kind: "apply",
    appliedCents,
    requestedCents: refundRest ? 0 : requested,
    refundedAfterCents: after,
    deductionCents,
    nextStatus: after >= S ? "reversed" : "refunded",
    refundId,
  };
}

/** The reason recorded on the commission: `refund_reason` when non-empty, else `reason`, else "refund". */
export function recordedReason(refundReason: string | undefined, reason: RefundReasonCode | undefined): string {
  const text = refundReason?.trim();
  return text ? text : (reason ?? "refund");
}
