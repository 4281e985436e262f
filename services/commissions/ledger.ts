/**
 * The commissions ledger: every money-moving operation, written once against
 * the transaction contract so both storage adapters share the same rules.
 * Each function runs inside one `CommissionsRepository.transaction` and has no
 * effect outside it (the transaction may be retried).
 *
 * Lock order, the same everywhere so transactions never deadlock: the
 * partner's balance row first, then the commission, then withdrawals.
 */
import { planRefund, refundBaseCents, type RefundReasonCode } from "../../shared/domain/refunds";
import { idempotentWithdrawalMismatch, reduceOpenWithdrawals } from "./withdrawals";
import { belowMinimum, moneyText } from "./payout-runs";
import { mulDivRound, toMajorUnits } from "../../shared/domain/money";
import { AppError, ConflictError, InvalidRequestError, NotFoundError } from "../../shared/errors";
import { rejectionForPartner, type FraudFlag } from "../../shared/domain/fraud-rules";
import type {
  BalanceKey,
  Commission,
  CommissionsTx,
  FraudReview,
  NewCommission,
  PayableCommission,
  PayoutMethod,
  PayoutRun,
  PayoutRunTrigger,
  SkippedPartner,
  Withdrawal,
} from "./repository";

export const balanceKeyOf = (c: Pick<Commission, "partnerId" | "programId" | "currency">): BalanceKey => ({
  partnerId: c.partnerId,
  programId: c.programId,
  currency: c.currency,
});

/** The facts every commission event carries to consumers (notifications, webhooks). */
function commissionEvent(c: Commission, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    commissionId: c.id,
    programId: c.programId,
    partnerId: c.partnerId,
    kind: c.kind,
    saleId: c.saleId,
    transactionId: c.transactionId,
    status: c.status,
    currency: c.currency,
    amountCents: c.amountCents,
    netCents: c.amountCents - c.deductedCents,
    saleOriginal: c.saleOriginal,
    reason: c.reason,
    creditedAt: c.creditedAt?.toISOString() ?? null,
    paidOutAt: c.paidOutAt?.toISOString() ?? null,
    ...extra,
  };
}

/** The commission already paying for this sale or lead, if any. */
const findSame = (tx: CommissionsTx, c: Pick<NewCommission, "saleId" | "programId" | "leadKey">) =>
  c.saleId !== null ? tx.findCommissionBySale(c.saleId) : tx.findLeadCommission(c.programId, c.leadKey!);

/**
 * Idempotent on the sale (a lead commission: on the program and customer): a second call returns the existing
 * commission. With `flags` (the program's fraud rules fired: docs/fraud.md), it is created held for review, in the
 * same transaction: its review, and the fraud.flagged and commission.held events.
 */
export async function createCommission(tx: CommissionsTx, input: NewCommission, now: Date, flags: readonly FraudFlag[] = []): Promise<{ commission: Commission; created: boolean }> {
  const existing = await findSame(tx, input);
  if (existing) return { commission: existing, created: false };
  const commission = await tx.insertCommission(input, now);
  if (!commission) {
    // Lost a race with a concurrent creation for the same sale or lead.
    const winner = await findSame(tx, input);
    return { commission: winner!, created: false };
  }
  await tx.enqueue("commission.created", commission.id, commissionEvent(commission), now);
  if (!flags.length) return { commission, created: true };
  return { commission: await holdForReview(tx, commission, flags, now), created: true };
}

/** What a commission held for review says why (the merchant's Risk screen names the rules; the partner sees it pending). */
export const REVIEW_HOLD_REASON = "Held for review";

async function holdForReview(tx: CommissionsTx, commission: Commission, flags: readonly FraudFlag[], now: Date): Promise<Commission> {
  const patch = { heldAt: now, holdReason: REVIEW_HOLD_REASON };
  await tx.updateCommission(commission.id, patch, now);
  const held = { ...commission, ...patch, updatedAt: now };
  const kind = commission.kind === "lead" ? "lead" : "sale";
  const review = await tx.insertFraudReview({ programId: commission.programId, partnerId: commission.partnerId, commissionId: commission.id, kind, flags: [...flags] }, now);
  await tx.enqueue("fraud.flagged", commission.id, fraudReviewEvent(review, held), now);
  await tx.enqueue("commission.held", commission.id, commissionEvent(held, { heldAt: now.toISOString(), holdReason: REVIEW_HOLD_REASON, reviewId: review.id }), now);
  return held;
}

/** The facts a fraud.flagged event carries (shared/events.ts): the review, its rules and evidence, its commission. */
function fraudReviewEvent(review: FraudReview, c: Commission): Record<string, unknown> {
  return {
    reviewId: review.id,
    programId: review.programId,
    partnerId: review.partnerId,
    commissionId: c.id,
    kind: review.kind,
    status: review.status,
    rules: review.flags.map((f) => f.rule),
    flags: review.flags,
    transactionId: c.transactionId,
    currency: c.currency,
    amountCents: c.amountCents,
    createdAt: review.createdAt.toISOString(),
  };
}

/** The merchant's decision on a review: clear (the commission proceeds) or reject (it is voided), with their words. */
export type ReviewDecision = { status: "cleared" } | { status: "rejected"; reason: string };

/**
 * Decides a pending review in one transaction with the ledger. Cleared: the commission's hold for review is lifted
 * and its hold period counts again from now (as long as it had from its creation); rejected: the commission is voided
 * (reverseCommission, reason code void) with `reason`, which the partner sees. A review already decided the same way
 * changes nothing (changed false); the other way is a conflict. Null when there is no such review in the program.
 */
export async function decideFraudReview(
  tx: CommissionsTx,
  programId: number,
  reviewId: number,
  decision: ReviewDecision,
  now: Date,
): Promise<{ review: FraudReview; changed: boolean } | null> {
  const first = await tx.getFraudReviewForUpdate(reviewId);
  if (!first || first.programId !== programId) return null;
  const found = (await tx.getCommission(first.commissionId))!;
  // The lock order: the balance, then the commission, then (here) the review read again under them.
  await tx.getBalanceForUpdate(balanceKeyOf(found));
  const c = (await tx.getCommissionForUpdate(found.id))!;
  const review = (await tx.getFraudReviewForUpdate(reviewId))!;
  if (review.status !== "pending") {
    if (review.status === decision.status) return { review, changed: false };
    throw new ConflictError(`Review ${reviewId} was ${review.status} already; a decided review is not decided again.`);
  }
  const decided = { status: decision.status, decisionReason: decision.status === "rejected" ? decision.reason : null, decidedAt: now };
  await tx.updateFraudReview(review.id, decided);
  if (decision.status === "cleared") {
    if (c.status !== "reversed" && c.heldAt) {
      const holdMs = c.approvableAt.getTime() - c.createdAt.getTime();
      await tx.updateCommission(c.id, { heldAt: null, holdReason: null, approvableAt: new Date(now.getTime() + Math.max(holdMs, 0)) }, now);
    }
  } else {
    await reverseCommission(tx, { commissionId: c.id, reasonCode: "void", reason: decision.reason }, now);
  }
  return { review: { ...review, ...decided }, changed: true };
}

/**
 * A banned partner's commission not yet credited, voided with the ban's reason, in the caller's transaction. One held
 * for review is voided by rejecting its review (the partner is told the rules' plain words, then the reason), so a
 * ban leaves none of the partner's reviews pending; if the review was decided meanwhile, the commission is voided as
 * any other. Whether this call voided it (false: it was reversed already).
 */
export async function voidForBan(tx: CommissionsTx, programId: number, commissionId: number, reason: string, now: Date): Promise<boolean> {
  const review = await tx.findFraudReviewByCommission(commissionId);
  if (review?.status === "pending") {
    try {
      const decided = await decideFraudReview(tx, programId, review.id, { status: "rejected", reason: rejectionForPartner(review.flags, reason) }, now);
      if (decided?.changed) return true;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  return (await reverseCommission(tx, { commissionId, reasonCode: "void", reason }, now)).kind === "applied";
}

/**
 * A manual commission (docs/api.md, "Manual commissions"), in the caller's transaction. A bonus (positive amount)
 * waits out its hold like any commission; a clawback (negative) is credited at once, so the partner's balance drops
 * now (it may go below zero: the next payout run pays only what the rest of the balance makes up for).
 */
export async function createManualCommission(tx: CommissionsTx, input: NewCommission, now: Date): Promise<Commission> {
  const commission = await tx.insertCommission(input, now);
  if (!commission) throw new Error("A manual commission has no unique key to collide on.");
  await tx.enqueue("commission.created", commission.id, commissionEvent(commission, { description: commission.description }), now);
  return commission.amountCents < 0 ? ((await approveCommission(tx, commission.id, now)) ?? commission) : commission;
}

/**
 * Holds back a commission not yet credited from the credit run (a sale under review, say), or releases it: credited
 * by the next run once its hold period is over. Changes nothing (changed false) when it is already so.
 */
export async function setCommissionHeld(tx: CommissionsTx, commissionId: number, hold: { reason: string } | null, now: Date): Promise<{ commission: Commission; changed: boolean } | null> {
  const found = await tx.getCommission(commissionId);
  if (!found) return null;
  await tx.getBalanceForUpdate(balanceKeyOf(found));
  const c = (await tx.getCommissionForUpdate(commissionId))!;
  if ((c.heldAt !== null) === (hold !== null)) return { commission: c, changed: false };
  if (!hold && (await tx.findFraudReviewByCommission(c.id))?.status === "pending") {
    throw new ConflictError(`Commission ${commissionId} is held for review: clear or reject its review instead of releasing it.`);
  }
  if (hold && (c.creditedAt || c.status === "reversed")) {
    throw new ConflictError(`Commission ${commissionId} is ${c.status === "reversed" ? "reversed" : "credited already"}; only a commission not yet credited can be held.`);
  }
  const patch = { heldAt: hold ? now : null, holdReason: hold?.reason ?? null };
  await tx.updateCommission(c.id, patch, now);
  return { commission: { ...c, ...patch, updatedAt: now }, changed: true };
}

export interface ReversalRequest {
  /** The sale whose commission is reversed; or, for a lead commission, `commissionId`. */
  saleId?: number;
  commissionId?: number;
  amountCents?: number;
  refundId?: string;
  reasonCode: RefundReasonCode;
  reason: string;
}

export type ReversalOutcome =
  { kind: "no_commission" } | { kind: "skipped"; commissionId: number; reason: string } | { kind: "applied"; commission: Commission; deductionCents: number; balanceDeductionCents: number };

/**
 * Applies one refund or chargeback to the sale's commission (spec 3.1): the
 * status change, the refund entry, the balance deduction when credited, the
 * withdrawal reduction and the outbox event, all in the caller's transaction.
 */
export async function reverseCommission(tx: CommissionsTx, req: ReversalRequest, now: Date): Promise<ReversalOutcome> {
  const found = req.commissionId !== undefined ? await tx.getCommission(req.commissionId) : await tx.findCommissionBySale(req.saleId!);
  if (!found) return { kind: "no_commission" };
  const key = balanceKeyOf(found);
  const balance = await tx.getBalanceForUpdate(key);
  const commission = (await tx.getCommissionForUpdate(found.id))!;

  const previousRefunds = await tx.listRefunds(commission.id);
  const plan = planRefund(
    {
      commissionCents: commission.amountCents,
      saleAmountCents: refundBaseCents(commission),
      refundedCents: commission.refundedCents,
      status: commission.status,
      previousRefunds,
    },
    { amountCents: req.amountCents, refundId: req.refundId },
  );
  if (plan.kind === "skip") return { kind: "skipped", commissionId: commission.id, reason: plan.reason };

  // Only a credited commission has money in the balance to take back.
  const balanceDeductionCents = commission.creditedAt ? plan.deductionCents : 0;
  await tx.insertRefund(
    {
      commissionId: commission.id,
      refundId: plan.refundId,
      requestedCents: plan.requestedCents,
      appliedCents: plan.appliedCents,
      deductionCents: plan.deductionCents,
      balanceDeductionCents,
      reasonCode: req.reasonCode,
      reason: req.reason,
    },
    now,
  );
  const updated: Commission = {
    ...commission,
    status: plan.nextStatus,
    refundedCents: plan.refundedAfterCents,
    deductedCents: commission.deductedCents + plan.deductionCents,
    reason: req.reason,
    updatedAt: now,
  };
  await tx.updateCommission(commission.id, { status: updated.status, refundedCents: updated.refundedCents, deductedCents: updated.deductedCents, reason: updated.reason }, now);

  if (balanceDeductionCents !== 0) {
    // Negative when a credited clawback is voided: what it took from the balance comes back.
    const balanceAfter = balance.balanceCents - balanceDeductionCents; // may go negative (spec 3.1)
    await tx.changeBalance(key, { balanceCents: -balanceDeductionCents, deductedCents: balanceDeductionCents });
    if (balanceDeductionCents > 0) await fitOpenWithdrawals(tx, key, balanceAfter, now);
  }

  await tx.enqueue(
    `commission.${plan.nextStatus}`,
    commission.id,
    commissionEvent(updated, {
      deductionCents: plan.deductionCents,
      deductionAmount: toMajorUnits(plan.deductionCents, updated.currency),
      balanceDeductionCents,
      refundedCents: updated.refundedCents,
      saleAmountCents: updated.saleAmountCents,
      reasonCode: req.reasonCode,
      refundId: plan.refundId,
      wasPaidOut: updated.paidOutAt !== null,
    }),
    now,
  );
  return { kind: "applied", commission: updated, deductionCents: plan.deductionCents, balanceDeductionCents };
}

export type RestoreOutcome = { kind: "no_commission" } | { kind: "skipped"; commissionId: number; reason: string } | { kind: "restored"; commission: Commission; restoredCents: number };

/**
 * Undoes one applied reversal (a chargeback whose dispute was won) with a new,
 * opposite refund entry; the original entry is never edited. The deduction
 * given back keeps the ledger's invariant: deducted = round(C x refunded / S).
 */
export async function restoreReversal(tx: CommissionsTx, req: { saleId: number; refundId: string; reason: string }, now: Date): Promise<RestoreOutcome> {
  const found = await tx.findCommissionBySale(req.saleId);
  if (!found) return { kind: "no_commission" };
  const key = balanceKeyOf(found);
  await tx.getBalanceForUpdate(key);
  const c = (await tx.getCommissionForUpdate(found.id))!;
  const entries = await tx.listRefunds(c.id);
  const original = entries.find((e) => e.refundId === req.refundId);
  const restoreId = `${req.refundId}:restored`;
  if (!original) return { kind: "skipped", commissionId: c.id, reason: `No reversal '${req.refundId}' was applied to this sale.` };
  if (entries.some((e) => e.refundId === restoreId)) return { kind: "skipped", commissionId: c.id, reason: `Reversal '${req.refundId}' was already restored.` };

  const refundedAfter = c.refundedCents - original.appliedCents;
  const base = refundBaseCents(c);
  const restoredCents = mulDivRound(c.amountCents, c.refundedCents, base) - mulDivRound(c.amountCents, refundedAfter, base);
  // Money goes back to the balance only if the commission is credited now.
  const balanceCents = c.creditedAt ? restoredCents : 0;
  await tx.insertRefund(
    {
      commissionId: c.id,
      refundId: restoreId,
      requestedCents: -original.appliedCents,
      appliedCents: -original.appliedCents,
      deductionCents: -restoredCents,
      balanceDeductionCents: -balanceCents,
      reasonCode: original.reasonCode,
      reason: req.reason,
    },
    now,
  );
  const status = refundedAfter > 0 ? "refunded" : c.paidOutAt ? "paid" : c.creditedAt ? "approved" : "pending";
  const updated: Commission = { ...c, status, refundedCents: refundedAfter, deductedCents: c.deductedCents - restoredCents, reason: req.reason, updatedAt: now };
  await tx.updateCommission(c.id, { status, refundedCents: updated.refundedCents, deductedCents: updated.deductedCents, reason: req.reason }, now);
  if (balanceCents > 0) {
    // Give back what was taken from the balance; what was never taken is a new credit.
    const takenBack = Math.min(balanceCents, original.balanceDeductionCents);
    await tx.changeBalance(key, { balanceCents, deductedCents: -takenBack, creditedCents: balanceCents - takenBack });
  }
  await tx.enqueue("commission.restored", c.id, commissionEvent(updated, { restoredCents, balanceCreditCents: balanceCents, refundId: restoreId }), now);
  return { kind: "restored", commission: updated, restoredCents };
}

/** Entries the processor's settlements write carry this prefix (the refund endpoint refuses it in `refund_id`). */
export const PROCESSOR_ENTRY_PREFIX = "processor:";
const RESTORED_SUFFIX = ":restored";

export interface ProcessorSettlement {
  saleId: number;
  /** Grows with every change the processor reported on the sale; a settlement older than the last one is stale. */
  revision: number;
  /** The sale's refunded part (in the sale's unit) that the processor's cumulative figures call for. */
  targetRefundedCents: number;
  /** The processor object (refund, dispute, charge) whose news caused this settlement: names the entries. */
  causeId: string;
  reasonCode: RefundReasonCode;
  /** Reason recorded on a new reversal. */
  reason: string;
  /** Reason recorded when part of what the processor reversed is given back. */
  restoreReason: string;
}

export type SettlementOutcome =
  | { kind: "no_commission" }
  | { kind: "stale"; commissionId: number; revision: number }
  | { kind: "settled"; commission: Commission; restored: string[]; applied: string | null; deductionCents: number };

/**
 * Brings what the processor's entries have refunded on a sale to the target
 * its cumulative figures give (refunds, withdrawn disputes), in one
 * transaction. Going up adds one reversal entry; going down restores whole
 * entries with opposite ones (the cause's own entry first, then the newest),
 * then tops up any rounding remainder. Idempotent: the same or an older
 * revision changes nothing, so concurrent or reordered events cannot undo
 * newer news.
 */
export async function settleProcessorReversal(tx: CommissionsTx, req: ProcessorSettlement, now: Date): Promise<SettlementOutcome> {
  const found = await tx.findCommissionBySale(req.saleId);
  if (!found) return { kind: "no_commission" };
  await tx.getBalanceForUpdate(balanceKeyOf(found));
  const locked = (await tx.getCommissionForUpdate(found.id))!;
  if (req.revision <= locked.processorRevision) return { kind: "stale", commissionId: locked.id, revision: locked.processorRevision };

  const entries = await tx.listRefunds(locked.id);
  const restoredIds = new Set(entries.filter((e) => e.refundId?.endsWith(RESTORED_SUFFIX)).map((e) => e.refundId!.slice(0, -RESTORED_SUFFIX.length)));
  const live = entries.filter((e) => e.appliedCents > 0 && e.refundId?.startsWith(PROCESSOR_ENTRY_PREFIX) && !restoredIds.has(e.refundId));
  let appliedCents = live.reduce((sum, e) => sum + e.appliedCents, 0);
  const target = Math.min(Math.max(req.targetRefundedCents, 0), refundBaseCents(locked));
  const causeOf = (refundId: string) => refundId.slice(PROCESSOR_ENTRY_PREFIX.length).replace(/@\d+$/, "");

  const restored: string[] = [];
  let deductionCents = 0;
  const byCauseThenNewest = [...live].sort((a, b) => Number(causeOf(b.refundId!) === req.causeId) - Number(causeOf(a.refundId!) === req.causeId) || b.id - a.id);
  for (const entry of byCauseThenNewest) {
    if (appliedCents <= target) break;
    const outcome = await restoreReversal(tx, { saleId: req.saleId, refundId: entry.refundId!, reason: req.restoreReason }, now);
    if (outcome.kind !== "restored") continue;
    appliedCents -= entry.appliedCents;
    deductionCents -= outcome.restoredCents;
    restored.push(entry.refundId!);
  }

  let applied: string | null = null;
  if (target > appliedCents) {
    const plain = `${PROCESSOR_ENTRY_PREFIX}${req.causeId}`;
    const refundId = entries.some((e) => e.refundId === plain) ? `${plain}@${req.revision}` : plain;
    const outcome = await reverseCommission(tx, { saleId: req.saleId, amountCents: target - appliedCents, refundId, reasonCode: req.reasonCode, reason: req.reason }, now);
    if (outcome.kind === "applied") {
      applied = refundId;
      deductionCents += outcome.deductionCents;
    }
  }
  await tx.updateCommission(locked.id, { processorRevision: req.revision }, now);
  const commission = (await tx.getCommission(locked.id))!;
  return { kind: "settled", commission, restored, applied, deductionCents };
}

/**
 * Open withdrawals never exceed what the balance holds beyond the processing ones (already on their way, they are
 * not reduced): reduce the newest, cancel those reduced to zero.
 */
async function fitOpenWithdrawals(tx: CommissionsTx, key: BalanceKey, balanceCents: number, now: Date): Promise<void> {
  const unsettled = await tx.listUnsettledWithdrawalsForUpdate(key);
  const open = unsettled.filter((w) => w.status === "open");
  const processingCents = sumAmounts(unsettled.filter((w) => w.status === "processing"));
  for (const change of reduceOpenWithdrawals(open, balanceCents - processingCents)) {
    if (change.cancelled) {
      await tx.updateWithdrawal(change.id, { amountCents: 0, status: "cancelled", cancelledAt: now });
      await tx.detachFromWithdrawal(change.id);
    } else {
      await tx.updateWithdrawal(change.id, { amountCents: change.amountCents });
    }
  }
}

/** Credits a commission whose hold has passed: its net amount joins the partner's balance. */
export async function approveCommission(tx: CommissionsTx, commissionId: number, now: Date): Promise<Commission | null> {
  const found = await tx.getCommission(commissionId);
  if (!found) return null;
  const key = balanceKeyOf(found);
  await tx.getBalanceForUpdate(key);
  const c = (await tx.getCommissionForUpdate(commissionId))!;
  if (c.creditedAt || c.status === "reversed" || c.heldAt || c.approvableAt > now) return null;
  const netCents = c.amountCents - c.deductedCents;
  const status = c.status === "pending" ? "approved" : c.status;
  await tx.updateCommission(c.id, { status, creditedAt: now }, now);
  // A clawback's credit is a deduction from the balance.
  await tx.changeBalance(key, netCents < 0 ? { balanceCents: netCents, deductedCents: -netCents } : { balanceCents: netCents, creditedCents: netCents });
  const credited: Commission = { ...c, status, creditedAt: now, updatedAt: now };
  await tx.enqueue("commission.credited", c.id, commissionEvent(credited, { creditedCents: netCents }), now);
  return credited;
}

/**
 * Opens a withdrawal of `requestedCents` (default: everything available) and
 * attaches the payable commissions it covers, which become paid when it is
 * paid: oldest first, each one whose net amount still fits in what the
 * withdrawal has left; a withdrawal of everything available takes all.
 *
 * With an idempotency key already used in the program, nothing is opened:
 * the earlier withdrawal is returned as it is now when the request matches
 * it, and refused (409) when it asks for something else.
 */
export async function createWithdrawal(
  tx: CommissionsTx,
  key: BalanceKey,
  requestedCents: number | undefined,
  now: Date,
  idempotencyKey?: string,
  payout: { runId: number | null; method: PayoutMethod | null } = { runId: null, method: null },
): Promise<Withdrawal> {
  const balance = await tx.getBalanceForUpdate(key);
  const replay = async () => {
    const earlier = idempotencyKey === undefined ? null : await tx.findWithdrawalByIdempotencyKey(key.programId, idempotencyKey);
    if (!earlier) return null;
    const mismatch = idempotentWithdrawalMismatch(earlier, { ...key, requestedCents });
    if (mismatch) throw new ConflictError(`Idempotency key '${idempotencyKey}' was used for withdrawal ${earlier.id} (${mismatch}).`, { withdrawalId: earlier.id });
    return earlier;
  };
  const earlier = await replay();
  if (earlier) return earlier;
  const availableCents = balance.balanceCents - sumAmounts(await tx.listUnsettledWithdrawalsForUpdate(key));
  if (availableCents <= 0) throw new ConflictError(`Nothing available to withdraw: balance ${balance.balanceCents}, open and processing withdrawals take the rest.`);
  if (requestedCents !== undefined && requestedCents > availableCents) {
    throw new InvalidRequestError(`Invalid 'amountCents': ${requestedCents} exceeds the available ${availableCents}.`);
  }
  const amountCents = requestedCents ?? availableCents;
  const withdrawal = await tx.insertWithdrawal({ ...key, requestedCents: amountCents, amountCents, idempotencyKey: idempotencyKey ?? null, ...payout }, now);
  // Taken meanwhile by a request of another partner of the program with the same key (the balance lock
  // serialises those of the same partner): that one's withdrawal decides.
  if (!withdrawal) return (await replay())!;
  const payable = await tx.listPayableCommissions(key);
  const held = amountCents === availableCents ? payable.map((c) => c.id) : commissionsCovered(payable, amountCents);
  await tx.attachToWithdrawal(withdrawal.id, held);
  await tx.enqueue("withdrawal.created", null, withdrawalEvent(withdrawal, held), now);
  return withdrawal;
}

/** The facts of a withdrawal event (shared/events.ts): the withdrawal and the commissions it holds. */
function withdrawalEvent(w: Withdrawal, commissionIds: number[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    withdrawalId: w.id,
    programId: w.programId,
    partnerId: w.partnerId,
    currency: w.currency,
    requestedCents: w.requestedCents,
    amountCents: w.amountCents,
    status: w.status,
    runId: w.runId,
    method: w.method,
    commissionIds,
    createdAt: w.createdAt.toISOString(),
    ...extra,
  };
}

const sumAmounts = (ws: readonly Pick<Withdrawal, "amountCents">[]) => ws.reduce((sum, w) => sum + w.amountCents, 0);

function commissionsCovered(payable: readonly PayableCommission[], amountCents: number): number[] {
  const covered: number[] = [];
  let total = 0;
  for (const c of payable) {
    if (total + c.netCents > amountCents) continue;
    total += c.netCents;
    covered.push(c.id);
  }
  return covered;
}

/** The withdrawal locked after its partner's balance (the lock order); not found is a 404. */
async function lockWithdrawal(tx: CommissionsTx, withdrawalId: number): Promise<{ w: Withdrawal; key: BalanceKey }> {
  const found = await tx.getWithdrawal(withdrawalId);
  if (!found) throw new NotFoundError(`No withdrawal with id ${withdrawalId}.`);
  const key = balanceKeyOf(found);
  await tx.getBalanceForUpdate(key);
  return { w: (await tx.getWithdrawalForUpdate(withdrawalId))!, key };
}

/**
 * Pays an open or processing withdrawal: its amount leaves the balance and its commissions are paid. `transferId`
 * is the Stripe transfer that paid it. Paying one already paid by the same transfer changes nothing (a retry).
 */
export async function payWithdrawal(tx: CommissionsTx, withdrawalId: number, now: Date, transferId: string | null = null): Promise<Withdrawal> {
  const { w, key } = await lockWithdrawal(tx, withdrawalId);
  if (w.status === "paid" && transferId !== null && w.transferId === transferId) return w;
  if (w.status !== "open" && w.status !== "processing") throw new ConflictError(`Withdrawal ${withdrawalId} is ${w.status}; only open or processing withdrawals can be paid.`);
  await tx.changeBalance(key, { balanceCents: -w.amountCents, paidCents: w.amountCents });
  await tx.updateWithdrawal(w.id, { status: "paid", paidAt: now, transferId: transferId ?? w.transferId });
  const held = await tx.listWithdrawalCommissionIds(w.id);
  await tx.markCommissionsPaid(held, now);
  const paid: Withdrawal = { ...w, status: "paid", paidAt: now, transferId: transferId ?? w.transferId };
  await tx.enqueue("withdrawal.paid", null, withdrawalEvent(paid, held, { paidAt: now.toISOString(), transferId: paid.transferId }), now);
  // One commission.paid for each commission this payment paid out (not those a refund reversed meanwhile).
  for (const id of held) {
    const c = await tx.getCommission(id);
    if (c?.paidOutAt?.getTime() !== now.getTime()) continue;
    await tx.enqueue("commission.paid", c.id, commissionEvent(c, { withdrawalId: w.id, paidCents: c.amountCents - c.deductedCents }), now);
  }
  return paid;
}

/**
 * Pays a payout made as account credit (docs/rewards.md, "Rewards other than cash"): paid, and in the same transaction
 * the merchant's `reward.earned` with the amount to credit its user with, once (a repeat finds it paid and sends none).
 */
export async function payAsAccountCredit(
  tx: CommissionsTx,
  withdrawalId: number,
  recipient: { tenantId: string | null; email: string | null; stripeBalanceTransactionId: string | null },
  now: Date,
  creditId: string,
): Promise<Withdrawal> {
  const paid = await payWithdrawal(tx, withdrawalId, now, creditId);
  if (paid.paidAt?.getTime() !== now.getTime()) return paid;
  const earned = {
    withdrawalId: paid.id,
    programId: paid.programId,
    partnerId: paid.partnerId,
    ...recipient,
    currency: paid.currency,
    amountCents: paid.amountCents,
    commissionIds: await tx.listWithdrawalCommissionIds(paid.id),
    earnedAt: now.toISOString(),
  };
  await tx.enqueue("reward.earned", null, earned, now);
  return paid;
}

/**
 * Fails a payout, or records that a paid one came back (a reversed transfer, a bank return): the amount is in the
 * balance again (a paid one's leaves `paidCents`), its commissions are payable again (paid ones back to approved),
 * and it holds none. Failing a failed payout again changes nothing; a cancelled one cannot fail.
 */
export async function failWithdrawal(tx: CommissionsTx, withdrawalId: number, failure: { code: string; reason: string }, now: Date): Promise<{ withdrawal: Withdrawal; changed: boolean }> {
  const { w, key } = await lockWithdrawal(tx, withdrawalId);
  if (w.status === "failed") return { withdrawal: w, changed: false };
  if (w.status === "cancelled") throw new ConflictError(`Withdrawal ${withdrawalId} is cancelled; there is nothing to fail.`);
  const wasPaid = w.status === "paid";
  const held = await tx.listWithdrawalCommissionIds(w.id);
  if (wasPaid) {
    await tx.changeBalance(key, { balanceCents: w.amountCents, paidCents: -w.amountCents });
    // One commission.payout_returned for each commission this payout had paid out (not those a refund had reversed).
    for (const id of held) {
      const c = await tx.getCommission(id);
      if (c?.paidOutAt?.getTime() === w.paidAt?.getTime()) await tx.enqueue("commission.payout_returned", id, commissionEvent(c!, { withdrawalId: w.id }), now);
    }
    await tx.markCommissionsUnpaid(held, now);
  }
  await tx.detachFromWithdrawal(w.id);
  const failed: Withdrawal = { ...w, status: "failed", failedAt: now, failureCode: failure.code, failureReason: failure.reason };
  await tx.updateWithdrawal(w.id, { status: "failed", failedAt: now, failureCode: failure.code, failureReason: failure.reason });
  await tx.enqueue(
    "withdrawal.failed",
    null,
    withdrawalEvent(failed, [], { failureCode: failure.code, failureReason: failure.reason, failedAt: now.toISOString(), wasPaid, releasedCommissionIds: held }),
    now,
  );
  return { withdrawal: failed, changed: true };
}

/**
 * Claims a Stripe payout for a transfer attempt: an open one becomes processing; a processing one whose last claim
 * is older than `staleBefore` (its worker stopped or crashed) is claimed again. Returns null when it is not to be
 * transferred now (settled, or claimed by another worker moments ago).
 */
export async function claimTransfer(tx: CommissionsTx, withdrawalId: number, now: Date, staleBefore: Date): Promise<Withdrawal | null> {
  const { w } = await lockWithdrawal(tx, withdrawalId);
  const claimable = w.status === "open" || (w.status === "processing" && (w.processingAt === null || w.processingAt <= staleBefore));
  if (!claimable) return null;
  const claimed: Withdrawal = { ...w, status: "processing", processingAt: now, attempts: w.attempts + 1 };
  await tx.updateWithdrawal(w.id, { status: "processing", processingAt: now, attempts: claimed.attempts });
  return claimed;
}

/** What a run pays: per partner, the method (the amount is what is available when the run is made). */
export interface PayoutRunRequest {
  programId: number;
  currency: string;
  periodKey: string;
  trigger: PayoutRunTrigger;
  payouts: ReadonlyArray<{ partnerId: number; partnerName: string; method: PayoutMethod; minPayoutCents: number }>;
  skipped: SkippedPartner[];
  /** The preview's total: when what is available now adds up to something else, nothing is made (409). */
  expectedTotalCents?: number;
  /** The program sends PayPal payouts through the PayPal Payouts API (its credentials are set), not in a file. */
  paypalApi?: boolean;
}

/** The methods whose payouts the worker always sends: Stripe transfers and credit (in the merchant's app, on a Stripe balance). */
const WORKER_METHODS: ReadonlySet<PayoutMethod> = new Set(["stripe", "account_credit", "stripe_balance"]);

/**
 * Makes a payout run and its payouts in one transaction, idempotent on the period: a run of the same program,
 * currency and period already made is returned as it is (`created: false`) and nothing else happens. Each payout
 * takes what the partner has available now (under their balance lock, in partner order: concurrent runs never
 * deadlock); a partner whose available amount fell below the minimum since the plan is skipped instead. Bank
 * payouts, and PayPal ones without the PayPal API, are processing at once (they go into the run's files); Stripe
 * ones, and PayPal ones with the API, stay open for the worker (see `sentByWorker`).
 */
export async function createPayoutRun(tx: CommissionsTx, req: PayoutRunRequest, now: Date): Promise<{ run: PayoutRun; created: boolean }> {
  const run = await tx.insertPayoutRun({ programId: req.programId, currency: req.currency, periodKey: req.periodKey, trigger: req.trigger, skipped: [], createdAt: now });
  if (!run) return { run: (await tx.findPayoutRun(req.programId, req.currency, req.periodKey))!, created: false };
  const skipped = [...req.skipped];
  let totalCents = 0;
  for (const p of [...req.payouts].sort((a, b) => a.partnerId - b.partnerId)) {
    const key = { partnerId: p.partnerId, programId: req.programId, currency: req.currency };
    const balance = await tx.getBalanceForUpdate(key);
    const availableCents = balance.balanceCents - sumAmounts(await tx.listUnsettledWithdrawalsForUpdate(key));
    if (availableCents <= 0 || availableCents < p.minPayoutCents) {
      if (availableCents > 0)
        skipped.push({
          partnerId: p.partnerId,
          partnerName: p.partnerName,
          availableCents,
          ...belowMinimum(availableCents, p.minPayoutCents, req.currency),
        });
      continue;
    }
    const w = await createWithdrawal(tx, key, undefined, now, `run-${run.id}-partner-${p.partnerId}`, { runId: run.id, method: p.method });
    totalCents += w.amountCents;
    const byWorker = p.method === "paypal" ? req.paypalApi : WORKER_METHODS.has(p.method);
    if (!byWorker) await tx.updateWithdrawal(w.id, { status: "processing", processingAt: now });
  }
  if (req.expectedTotalCents !== undefined && req.expectedTotalCents !== totalCents) {
    throw new AppError(
      "payout_preview_changed",
      `Balances changed since the preview: the run would pay ${moneyText(totalCents, req.currency)}, not the ${moneyText(req.expectedTotalCents, req.currency)} previewed. Preview the run again.`,
      { totalCents },
    );
  }
  await tx.setPayoutRunSkipped(run.id, skipped);
  return { run: { ...run, skipped }, created: true };
}

/**
 * Whether the worker sends the payout (a Stripe transfer, or a PayPal Payouts API batch) rather than the merchant
 * (a line of the run's bank or PayPal file). A payout the worker sends is claimed before it is sent (claimTransfer
 * counts the attempt); one in a file is processing from the start and never claimed.
 */
export const sentByWorker = (w: Pick<Withdrawal, "method" | "status" | "attempts">): boolean =>
  (w.method !== null && WORKER_METHODS.has(w.method)) || (w.method === "paypal" && (w.status === "open" || w.attempts > 0));
