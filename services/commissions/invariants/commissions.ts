import { refundBaseCents, shareOf } from "../../../shared/domain/refunds";
import type { SnapshotCommission, SnapshotRefund, Violate } from "./snapshot";

function expectedStatus(c: SnapshotCommission): string {
  if (c.refundedCents >= refundBaseCents(c)) return "reversed";
  if (c.refundedCents > 0) return "refunded";
  return c.paidOutAt ? "paid" : c.creditedAt ? "approved" : "pending";
}

/** commission.refunded_within_sale, deducted_proportional, entries_sum and status, for one commission and its entries. */
export function checkCommission(c: SnapshotCommission, entries: readonly SnapshotRefund[], violate: Violate): void {
  const ids = { commission: c.id };
  // A converted sale's refunds are in its own currency, against the amount paid (refundBaseCents).
  const base = refundBaseCents(c);
  if (c.refundedCents < 0 || c.refundedCents > base) {
    violate("commission.refunded_within_sale", ids, `refunded ${c.refundedCents} is outside [0, sale amount ${base}]`);
  } else if (base > 0 && (c.amountCents >= 0 || c.kind === "manual")) {
    const expected = shareOf(c.amountCents, c.refundedCents, base);
    if (c.deductedCents !== expected) {
      violate("commission.deducted_proportional", ids, `deducted ${c.deductedCents} != round(${c.amountCents} x ${c.refundedCents} / ${base}) = ${expected}`);
    }
  } else {
    violate("commission.deducted_proportional", ids, `amount ${c.amountCents} or sale amount ${base} is not valid`);
  }

  const applied = entries.reduce((s, e) => s + e.appliedCents, 0);
  const deducted = entries.reduce((s, e) => s + e.deductionCents, 0);
  if (applied !== c.refundedCents || deducted !== c.deductedCents) {
    violate(
      "commission.entries_sum",
      { commission: c.id, refundEntries: entries.map((e) => e.id) },
      `entries apply ${applied} and deduct ${deducted}; the commission says refunded ${c.refundedCents}, deducted ${c.deductedCents}`,
    );
  }

  // Rewards (docs/rewards.md): a commission is the sum of its frozen reward lines; a lead's has no sale and is its own base.
  if (c.rewardLines) {
    const lines = c.rewardLines.reduce((s, l) => s + l.commissionCents, 0);
    if (lines !== c.amountCents) violate("commission.reward_lines", ids, `reward lines add up to ${lines}; the commission is ${c.amountCents}`);
  }
  const kind = c.kind ?? "sale";
  if (kind === "lead" && (c.saleId != null || !c.leadKey || c.saleAmountCents !== c.amountCents)) {
    violate("commission.origin", ids, `a lead commission has no sale, a customer key and its own amount as base (sale ${c.saleId}, base ${c.saleAmountCents}, amount ${c.amountCents})`);
  }
  if (kind === "sale" && c.saleId === null) violate("commission.origin", ids, "a sale's commission without its sale");
  if (kind === "manual" && (c.saleId != null || c.leadKey || c.rewardLines || c.saleAmountCents !== Math.abs(c.amountCents))) {
    violate("commission.origin", ids, `a manual commission has no sale, customer or reward lines and the size of its amount as base (base ${c.saleAmountCents}, amount ${c.amountCents})`);
  }

  const status = expectedStatus(c);
  if (c.status !== status) violate("commission.status", ids, `status '${c.status}' with refunded ${c.refundedCents} of ${c.saleAmountCents}; expected '${status}'`);
  if (c.paidOutAt && !c.creditedAt) violate("commission.status", ids, "paid out but never credited");
}
