import { keyOf, type SnapshotCommission, type SnapshotRefund, type SnapshotWithdrawal, type Violate } from "./snapshot";

/** withdrawal.state: amounts, statuses and the commissions each withdrawal holds. */
export function checkWithdrawals(
  withdrawals: readonly SnapshotWithdrawal[],
  commissions: ReadonlyMap<number, SnapshotCommission>,
  entriesBy: ReadonlyMap<string | number, readonly SnapshotRefund[]>,
  violate: Violate,
): void {
  const holder = new Map<number, number>();
  for (const w of withdrawals) {
    const ids = { withdrawal: w.id };
    if (w.amountCents < 0 || w.amountCents > w.requestedCents) violate("withdrawal.state", ids, `amount ${w.amountCents} outside [0, requested ${w.requestedCents}]`);
    if (!["open", "paid", "cancelled"].includes(w.status)) violate("withdrawal.state", ids, `unknown status '${w.status}'`);
    if (w.status === "cancelled" && (w.amountCents !== 0 || w.commissionIds.length > 0)) {
      violate("withdrawal.state", ids, `cancelled with amount ${w.amountCents}, holding ${w.commissionIds.length} commission(s)`);
    }
    for (const id of w.commissionIds) {
      const c = commissions.get(id);
      if (!c || keyOf(c) !== keyOf(w) || !c.creditedAt) {
        violate("withdrawal.state", { ...ids, commission: id }, "holds a commission that is unknown, of another partner, or not credited");
        continue;
      }
      if (w.status === "cancelled") continue;
      const other = holder.get(id);
      if (other !== undefined) violate("withdrawal.state", { withdrawals: [other, w.id], commission: id }, "a commission held by two withdrawals");
      else holder.set(id, w.id);
      if (w.status === "paid" && !c.paidOutAt && !entriesBy.has(id)) {
        violate("withdrawal.state", { ...ids, commission: id }, "paid withdrawal whose never-refunded commission is not paid out");
      }
    }
  }
}
