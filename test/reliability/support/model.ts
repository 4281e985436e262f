/**
 * A simple reference model of the ledger, written from the rules in
 * docs/architecture.md ("Refunds", "Commission lifecycle"), independently of
 * services/commissions/ledger.ts and shared/domain: plain arrays, BigInt
 * rounding, no storage. The property tests run the same random operations on
 * the model and on the real ledger and compare every outcome and the final
 * state.
 */

/** round(a x b / c), half up, exact. */
export function roundMulDiv(a: number, b: number, c: number): number {
  const p = BigInt(a) * BigInt(b);
  const q = p / BigInt(c);
  return Number((p % BigInt(c)) * 2n >= BigInt(c) ? q + 1n : q);
}

export interface ModelEntry {
  refundId: string | null;
  requested: number;
  applied: number;
}

export interface ModelCommission {
  partner: number;
  saleAmount: number;
  amount: number;
  refunded: number;
  deducted: number;
  credited: boolean;
  paidOut: boolean;
  status: "pending" | "approved" | "paid" | "refunded" | "reversed";
  entries: ModelEntry[];
}

export interface ModelWithdrawal {
  partner: number;
  requested: number;
  amount: number;
  status: "open" | "paid" | "cancelled";
  /** Indexes of the commissions it holds. */
  holds: number[];
}

export type RefundOutcome = { kind: "skipped" } | { kind: "applied"; deduction: number; status: "refunded" | "reversed" };

export class LedgerModel {
  readonly commissions: ModelCommission[] = [];
  readonly withdrawals: ModelWithdrawal[] = [];
  private readonly balances = new Map<number, { balance: number; paid: number }>();

  balanceOf(partner: number): { balance: number; paid: number } {
    let b = this.balances.get(partner);
    if (!b) this.balances.set(partner, (b = { balance: 0, paid: 0 }));
    return b;
  }

  /** A new commission of `amount` on a sale of `saleAmount`; returns its index. */
  sale(partner: number, saleAmount: number, amount: number): number {
    this.commissions.push({ partner, saleAmount, amount, refunded: 0, deducted: 0, credited: false, paidOut: false, status: "pending", entries: [] });
    return this.commissions.length - 1;
  }

  /** One refund call: `amount` undefined or 0 refunds the rest (and ignores the refund id). */
  refund(index: number, amount: number | undefined, refundId: string | undefined): RefundOutcome {
    const c = this.commissions[index];
    if (c.status === "reversed") return { kind: "skipped" };
    const rest = !amount;
    const id = rest ? null : refundId || null;
    if (id !== null && c.entries.some((e) => e.refundId === id)) return { kind: "skipped" };
    if (!rest && id === null && c.entries.some((e) => e.requested === amount)) return { kind: "skipped" };
    const requested = rest ? c.saleAmount - c.refunded : (amount as number);
    const after = Math.min(c.refunded + requested, c.saleAmount);
    const applied = after - c.refunded;
    if (applied <= 0) return { kind: "skipped" };
    const deduction = roundMulDiv(c.amount, after, c.saleAmount) - roundMulDiv(c.amount, c.refunded, c.saleAmount);
    c.entries.push({ refundId: id, requested: rest ? 0 : requested, applied });
    c.refunded = after;
    c.deducted += deduction;
    c.status = after >= c.saleAmount ? "reversed" : "refunded";
    if (c.credited && deduction > 0) {
      this.balanceOf(c.partner).balance -= deduction;
      this.fitOpenWithdrawals(c.partner);
    }
    return { kind: "applied", deduction, status: c.status };
  }

  /** A won dispute: gives back what the entry `refundId` applied. */
  restore(index: number, refundId: string): { kind: "skipped" } | { kind: "restored"; restored: number } {
    const c = this.commissions[index];
    const original = c.entries.find((e) => e.refundId === refundId);
    const restoreId = `${refundId}:restored`;
    if (!original || c.entries.some((e) => e.refundId === restoreId)) return { kind: "skipped" };
    const after = c.refunded - original.applied;
    const restored = roundMulDiv(c.amount, c.refunded, c.saleAmount) - roundMulDiv(c.amount, after, c.saleAmount);
    c.entries.push({ refundId: restoreId, requested: -original.applied, applied: -original.applied });
    c.refunded = after;
    c.deducted -= restored;
    c.status = after > 0 ? "refunded" : c.paidOut ? "paid" : c.credited ? "approved" : "pending";
    if (c.credited) this.balanceOf(c.partner).balance += restored;
    return { kind: "restored", restored };
  }

  /** Credits the commission (its hold has passed); false when already credited or reversed. */
  approve(index: number): boolean {
    const c = this.commissions[index];
    if (c.credited || c.status === "reversed") return false;
    c.credited = true;
    if (c.status === "pending") c.status = "approved";
    this.balanceOf(c.partner).balance += c.amount - c.deducted;
    return true;
  }

  withdraw(partner: number, amount: number | undefined): { kind: "conflict" } | { kind: "invalid" } | { kind: "created"; index: number; amount: number } {
    const b = this.balanceOf(partner);
    const open = this.withdrawals.filter((w) => w.partner === partner && w.status === "open");
    const available = b.balance - open.reduce((s, w) => s + w.amount, 0);
    if (available <= 0) return { kind: "conflict" };
    if (amount !== undefined && amount > available) return { kind: "invalid" };
    const value = amount ?? available;
    const held = new Set(this.withdrawals.filter((w) => w.status !== "cancelled").flatMap((w) => w.holds));
    const payable = this.commissions.map((c, i) => ({ c, i })).filter(({ c, i }) => c.partner === partner && c.credited && !c.paidOut && c.status !== "reversed" && !held.has(i));
    let holds: number[];
    if (value === available) {
      holds = payable.map((p) => p.i);
    } else {
      holds = [];
      let total = 0;
      for (const { c, i } of payable) {
        const net = c.amount - c.deducted;
        if (total + net > value) continue;
        total += net;
        holds.push(i);
      }
    }
    this.withdrawals.push({ partner, requested: value, amount: value, status: "open", holds });
    return { kind: "created", index: this.withdrawals.length - 1, amount: value };
  }

  pay(index: number): { kind: "conflict" } | { kind: "paid" } {
    const w = this.withdrawals[index];
    if (w.status !== "open") return { kind: "conflict" };
    const b = this.balanceOf(w.partner);
    b.balance -= w.amount;
    b.paid += w.amount;
    w.status = "paid";
    for (const i of w.holds) {
      const c = this.commissions[i];
      if (c.paidOut || c.status === "reversed") continue;
      c.paidOut = true;
      if (c.status === "approved") c.status = "paid";
    }
    return { kind: "paid" };
  }

  /** Open withdrawals must fit max(balance, 0): the newest are cut first, one cut to zero is cancelled. */
  private fitOpenWithdrawals(partner: number): void {
    const open = this.withdrawals.filter((w) => w.partner === partner && w.status === "open");
    let excess = open.reduce((s, w) => s + w.amount, 0) - Math.max(this.balanceOf(partner).balance, 0);
    for (const w of open.reverse()) {
      if (excess <= 0) break;
      const cut = Math.min(w.amount, excess);
      excess -= cut;
      w.amount -= cut;
      if (w.amount === 0) {
        w.status = "cancelled";
        w.holds = [];
      }
    }
  }
}
