import type { SnapshotCommission, SnapshotRefund, Violate } from "./snapshot";

const RESTORED_SUFFIX = ":restored";

/** refund.unique_id, refund.entry and refund.balance_deduction for one commission's entries. */
export function checkRefundEntries(c: SnapshotCommission, entries: readonly SnapshotRefund[], violate: Violate): void {
  const seen = new Map<string, number>();
  for (const e of entries) {
    if (e.refundId === null) continue;
    const first = seen.get(e.refundId);
    if (first !== undefined) {
      violate("refund.unique_id", { commission: c.id, refundEntries: [first, e.id], refundId: e.refundId }, `refund id '${e.refundId}' is applied more than once`);
    } else {
      seen.set(e.refundId, e.id);
    }
  }

  for (const e of entries) {
    const eIds = { commission: c.id, refundEntry: e.id };
    if (e.appliedCents === 0) violate("refund.entry", eIds, "an entry that applies nothing");
    if (e.appliedCents < 0) {
      const originalId = e.refundId?.endsWith(RESTORED_SUFFIX) ? e.refundId.slice(0, -RESTORED_SUFFIX.length) : null;
      const original = originalId === null ? undefined : entries.find((o) => o.refundId === originalId && o.appliedCents > 0);
      if (!original) violate("refund.entry", eIds, `negative entry '${e.refundId}' restores no entry of this commission`);
      else if (original.appliedCents !== -e.appliedCents) {
        violate("refund.entry", { ...eIds, original: original.id }, `restoration gives back ${-e.appliedCents}, the original applied ${original.appliedCents}`);
      }
    }
    if (e.balanceDeductionCents !== 0 && e.balanceDeductionCents !== e.deductionCents) {
      violate("refund.balance_deduction", eIds, `took ${e.balanceDeductionCents} from the balance for a deduction of ${e.deductionCents}`);
    } else if (e.balanceDeductionCents !== 0 && !c.creditedAt) {
      violate("refund.balance_deduction", eIds, `took ${e.balanceDeductionCents} from the balance of a commission that was never credited`);
    }
  }
}

/** refund.entry: every entry belongs to a known commission. */
export function checkRefundOwners(refunds: readonly SnapshotRefund[], commissions: ReadonlyMap<number, SnapshotCommission>, violate: Violate): void {
  for (const e of refunds) {
    if (!commissions.has(e.commissionId)) violate("refund.entry", { commission: e.commissionId, refundEntry: e.id }, "entry of an unknown commission");
  }
}
