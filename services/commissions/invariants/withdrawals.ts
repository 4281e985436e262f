import { keyOf, type SnapshotCommission, type SnapshotPayoutRun, type SnapshotRefund, type SnapshotWithdrawal, type Violate } from "./snapshot";

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
    if (!["open", "processing", "paid", "failed", "cancelled"].includes(w.status)) violate("withdrawal.state", ids, `unknown status '${w.status}'`);
    if (w.status === "cancelled" && (w.amountCents !== 0 || w.commissionIds.length > 0)) {
      violate("withdrawal.state", ids, `cancelled with amount ${w.amountCents}, holding ${w.commissionIds.length} commission(s)`);
    }
    // A failed payout's amount is back in the balance (balance.ledger counts only paid ones) and its commissions are free.
    if (w.status === "failed" && (w.commissionIds.length > 0 || !w.failureReason)) {
      violate("withdrawal.state", ids, `failed ${w.failureReason ? "" : "without a reason "}holding ${w.commissionIds.length} commission(s)`);
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
  // The other way round: a paid-out commission was paid by a paid withdrawal (a returned payout un-pays its commissions).
  const paidBy = new Set(withdrawals.filter((w) => w.status === "paid").flatMap((w) => w.commissionIds));
  for (const c of commissions.values()) {
    if (c.paidOutAt && !paidBy.has(c.id)) violate("withdrawal.state", { commission: c.id }, "a paid-out commission that no paid withdrawal holds");
  }
}

/** payout_run.payouts: a run's payouts are of its program and currency, one per partner, and every run named is known. */
export function checkPayoutRuns(withdrawals: readonly SnapshotWithdrawal[], runs: readonly SnapshotPayoutRun[], violate: Violate): void {
  const runOf = new Map(runs.map((r) => [r.id, r]));
  const partnersOf = new Map<number, Set<number>>();
  for (const w of withdrawals) {
    if (w.runId === undefined || w.runId === null) continue;
    const run = runOf.get(w.runId);
    const ids = { withdrawal: w.id, run: w.runId };
    if (!run) {
      violate("payout_run.payouts", ids, "payout of an unknown run");
      continue;
    }
    if (run.programId !== w.programId || run.currency !== w.currency)
      violate("payout_run.payouts", ids, `payout of program ${w.programId} in ${w.currency}; the run is program ${run.programId} in ${run.currency}`);
    const partners = partnersOf.get(run.id) ?? new Set<number>();
    if (partners.has(w.partnerId)) violate("payout_run.payouts", { ...ids, partner: w.partnerId }, "two payouts of one partner in a run");
    partners.add(w.partnerId);
    partnersOf.set(run.id, partners);
  }
}
