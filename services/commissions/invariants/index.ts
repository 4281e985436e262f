/**
 * The ledger's invariants, checked over one consistent snapshot of the
 * commissions service's data. Pure: the same function serves the property
 * tests, the reliability suite and `commissions.reconcile` (`cli reconcile`)
 * on a live database.
 *
 * The rules, as the ledger (services/commissions/ledger.ts) keeps them:
 *
 * - commission.refunded_within_sale: 0 <= refunded <= sale amount S.
 * - commission.deducted_proportional: deducted = round(C x refunded / S)
 *   (half up), C the commission as earned.
 * - commission.entries_sum: the refund entries add up to the commission:
 *   sum(applied) = refunded, sum(deduction) = deducted. Restorations of won
 *   disputes are negative entries, so they count too.
 * - commission.status: reversed iff refunded = S; refunded iff 0 < refunded < S;
 *   otherwise paid (paid out), approved (credited) or pending; paid out implies
 *   credited.
 * - refund.unique_id: every refund id is applied once per commission (no two
 *   entries share a non-null (commission, refund id)).
 * - refund.entry: an entry moves something (applied != 0); a negative entry is
 *   the restoration `<id>:restored` of a positive entry `<id>` of the same
 *   commission, giving back exactly what it applied; an entry belongs to a
 *   known commission.
 * - refund.balance_deduction: what an entry took from (or gave back to) the
 *   balance is 0 or its whole deduction, and 0 while the commission is not
 *   credited.
 * - balance.arithmetic: balance = credited - deducted - paid (the row's own columns).
 * - balance.ledger: balance = sum over the partner's credited commissions of
 *   (C - deducted) - sum of paid withdrawals, and paid = sum of paid
 *   withdrawals ("credited - deducted on credited - paid withdrawals",
 *   recomputed from the commissions, not read from the row).
 * - withdrawals.open_within_balance: open withdrawals <= max(balance, 0).
 * - withdrawal.state: 0 <= amount <= requested; a cancelled withdrawal is 0
 *   and holds nothing; what a withdrawal holds is a credited commission of
 *   the same partner, held by no other open or paid withdrawal; a paid
 *   withdrawal's commissions are paid out unless a refund reached them.
 * - outbox.event_per_change: every commission has one `commission.created`
 *   event, one `commission.refunded`/`commission.reversed` per positive entry
 *   and one `commission.restored` per negative entry; no event names an
 *   unknown commission; every event is of a known type and either dispatched
 *   or pending (nothing else exists: the relay delivers pending ones).
 */
import { mulDivRound } from "./money";

export interface SnapshotCommission {
  id: number;
  programId: number;
  partnerId: number;
  currency: string;
  saleAmountCents: number;
  amountCents: number;
  refundedCents: number;
  deductedCents: number;
  status: string;
  creditedAt: Date | string | null;
  paidOutAt: Date | string | null;
}

export interface SnapshotRefund {
  id: number;
  commissionId: number;
  refundId: string | null;
  appliedCents: number;
  deductionCents: number;
  balanceDeductionCents: number;
}

export interface SnapshotBalance {
  partnerId: number;
  programId: number;
  currency: string;
  balanceCents: number;
  creditedCents: number;
  deductedCents: number;
  paidCents: number;
}

export interface SnapshotWithdrawal {
  id: number;
  partnerId: number;
  programId: number;
  currency: string;
  requestedCents: number;
  amountCents: number;
  status: string;
  /** The commissions the withdrawal holds (paid out with it). */
  commissionIds: number[];
}

export interface SnapshotOutboxEvent {
  id: number;
  type: string;
  commissionId: number | null;
  dispatchedAt: Date | string | null;
}

/** Everything the commissions service owns that money depends on, read in one consistent snapshot. */
export interface LedgerSnapshot {
  commissions: SnapshotCommission[];
  refunds: SnapshotRefund[];
  balances: SnapshotBalance[];
  withdrawals: SnapshotWithdrawal[];
  outbox: SnapshotOutboxEvent[];
}

export type InvariantRule =
  | "commission.refunded_within_sale"
  | "commission.deducted_proportional"
  | "commission.entries_sum"
  | "commission.status"
  | "refund.unique_id"
  | "refund.entry"
  | "refund.balance_deduction"
  | "balance.arithmetic"
  | "balance.ledger"
  | "withdrawals.open_within_balance"
  | "withdrawal.state"
  | "outbox.event_per_change";

export interface Violation {
  rule: InvariantRule;
  /** The records involved: commission, refund entries, partner/program/currency, withdrawal, outbox event. */
  ids: Record<string, number | string | number[]>;
  detail: string;
}

export interface ReconcileReport {
  ok: boolean;
  checked: {
    commissions: number;
    refundEntries: number;
    restorations: number;
    refundIds: number;
    balances: number;
    withdrawals: { open: number; paid: number; cancelled: number };
    outboxEvents: { dispatched: number; pending: number };
    /** Money totals per currency (lowercase code): amounts in different currencies are never added together. */
    totalsByCurrency: Record<string, CurrencyTotals>;
    rules: InvariantRule[];
  };
  violations: Violation[];
  /** Violations beyond the reported ones (the list is capped). */
  violationsNotShown: number;
}

export interface CurrencyTotals {
  saleAmountCents: number;
  refundedCents: number;
  deductedCents: number;
  balanceCents: number;
  paidCents: number;
  openWithdrawalCents: number;
}

/** Sums the snapshot's money per currency, each figure in that currency's minor units. */
export function totalsByCurrency(snapshot: Pick<LedgerSnapshot, "commissions" | "balances" | "withdrawals">): Record<string, CurrencyTotals> {
  const totals = new Map<string, CurrencyTotals>();
  const of = (currency: string) => {
    let t = totals.get(currency);
    if (!t) totals.set(currency, (t = { saleAmountCents: 0, refundedCents: 0, deductedCents: 0, balanceCents: 0, paidCents: 0, openWithdrawalCents: 0 }));
    return t;
  };
  for (const c of snapshot.commissions) {
    const t = of(c.currency);
    t.saleAmountCents += c.saleAmountCents;
    t.refundedCents += c.refundedCents;
    t.deductedCents += c.deductedCents;
  }
  for (const b of snapshot.balances) {
    const t = of(b.currency);
    t.balanceCents += b.balanceCents;
    t.paidCents += b.paidCents;
  }
  for (const w of snapshot.withdrawals) if (w.status === "open") of(w.currency).openWithdrawalCents += w.amountCents;
  return Object.fromEntries([...totals].sort(([a], [b]) => (a < b ? -1 : 1)));
}

export const INVARIANT_RULES: readonly InvariantRule[] = [
  "commission.refunded_within_sale",
  "commission.deducted_proportional",
  "commission.entries_sum",
  "commission.status",
  "refund.unique_id",
  "refund.entry",
  "refund.balance_deduction",
  "balance.arithmetic",
  "balance.ledger",
  "withdrawals.open_within_balance",
  "withdrawal.state",
  "outbox.event_per_change",
];

const REFUND_EVENTS = new Set(["commission.refunded", "commission.reversed"]);
const KNOWN_EVENTS = new Set(["commission.created", "commission.refunded", "commission.reversed", "commission.restored"]);
const RESTORED_SUFFIX = ":restored";

const keyOf = (k: { partnerId: number; programId: number; currency: string }) => `${k.partnerId}|${k.programId}|${k.currency}`;
const keyIds = (k: { partnerId: number; programId: number; currency: string }) => ({ partner: k.partnerId, program: k.programId, currency: k.currency });

function expectedStatus(c: SnapshotCommission): string {
  if (c.refundedCents >= c.saleAmountCents) return "reversed";
  if (c.refundedCents > 0) return "refunded";
  return c.paidOutAt ? "paid" : c.creditedAt ? "approved" : "pending";
}

function groupBy<T>(items: readonly T[], key: (t: T) => string | number): Map<string | number, T[]> {
  const out = new Map<string | number, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** Checks every invariant; `maxViolations` caps the list (the rest are counted). */
export function checkLedgerInvariants(snapshot: LedgerSnapshot, maxViolations = 1000): ReconcileReport {
  const violations: Violation[] = [];
  let notShown = 0;
  const violate = (rule: InvariantRule, ids: Violation["ids"], detail: string) => {
    if (violations.length < maxViolations) violations.push({ rule, ids, detail });
    else notShown++;
  };

  const commissions = new Map(snapshot.commissions.map((c) => [c.id, c]));
  const entriesBy = groupBy(snapshot.refunds, (e) => e.commissionId);
  const eventsBy = groupBy(
    snapshot.outbox.filter((e) => e.commissionId !== null),
    (e) => e.commissionId as number,
  );

  // --- Commissions and their refund entries.
  for (const c of snapshot.commissions) {
    const ids = { commission: c.id };
    if (c.refundedCents < 0 || c.refundedCents > c.saleAmountCents) {
      violate("commission.refunded_within_sale", ids, `refunded ${c.refundedCents} is outside [0, sale amount ${c.saleAmountCents}]`);
    } else if (c.saleAmountCents > 0 && c.amountCents >= 0) {
      const expected = mulDivRound(c.amountCents, c.refundedCents, c.saleAmountCents);
      if (c.deductedCents !== expected) {
        violate(
          "commission.deducted_proportional",
          ids,
          `deducted ${c.deductedCents} != round(${c.amountCents} x ${c.refundedCents} / ${c.saleAmountCents}) = ${expected}`,
        );
      }
    } else {
      violate("commission.deducted_proportional", ids, `amount ${c.amountCents} or sale amount ${c.saleAmountCents} is not valid`);
    }

    const entries = entriesBy.get(c.id) ?? [];
    const applied = entries.reduce((s, e) => s + e.appliedCents, 0);
    const deducted = entries.reduce((s, e) => s + e.deductionCents, 0);
    if (applied !== c.refundedCents || deducted !== c.deductedCents) {
      violate(
        "commission.entries_sum",
        { commission: c.id, refundEntries: entries.map((e) => e.id) },
        `entries apply ${applied} and deduct ${deducted}; the commission says refunded ${c.refundedCents}, deducted ${c.deductedCents}`,
      );
    }

    const status = expectedStatus(c);
    if (c.status !== status) violate("commission.status", ids, `status '${c.status}' with refunded ${c.refundedCents} of ${c.saleAmountCents}; expected '${status}'`);
    if (c.paidOutAt && !c.creditedAt) violate("commission.status", ids, "paid out but never credited");

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

    // The outbox: one event per change.
    const events = eventsBy.get(c.id) ?? [];
    const created = events.filter((e) => e.type === "commission.created").length;
    const refundEvents = events.filter((e) => REFUND_EVENTS.has(e.type)).length;
    const restoredEvents = events.filter((e) => e.type === "commission.restored").length;
    const positive = entries.filter((e) => e.appliedCents > 0).length;
    const negative = entries.filter((e) => e.appliedCents < 0).length;
    if (created !== 1 || refundEvents !== positive || restoredEvents !== negative) {
      violate(
        "outbox.event_per_change",
        { commission: c.id, outboxEvents: events.map((e) => e.id) },
        `events: ${created} created, ${refundEvents} refunded/reversed, ${restoredEvents} restored; expected 1, ${positive} (refund entries), ${negative} (restorations)`,
      );
    }
  }

  for (const e of snapshot.refunds) {
    if (!commissions.has(e.commissionId)) violate("refund.entry", { commission: e.commissionId, refundEntry: e.id }, "entry of an unknown commission");
  }

  let dispatched = 0;
  let pending = 0;
  for (const e of snapshot.outbox) {
    if (e.dispatchedAt) dispatched++;
    else pending++;
    if (!KNOWN_EVENTS.has(e.type)) violate("outbox.event_per_change", { outboxEvent: e.id }, `unknown event type '${e.type}'`);
    if (e.commissionId === null || !commissions.has(e.commissionId)) {
      violate("outbox.event_per_change", { outboxEvent: e.id, commission: e.commissionId ?? "null" }, "event of an unknown commission");
    }
  }

  // --- Balances and withdrawals, per partner, program and currency.
  const balances = new Map(snapshot.balances.map((b) => [keyOf(b), b]));
  const creditedNet = new Map<string, number>();
  for (const c of snapshot.commissions) {
    if (c.creditedAt) creditedNet.set(keyOf(c), (creditedNet.get(keyOf(c)) ?? 0) + c.amountCents - c.deductedCents);
  }
  const withdrawalsBy = groupBy(snapshot.withdrawals, keyOf);
  const keys = new Set([...balances.keys(), ...creditedNet.keys(), ...withdrawalsBy.keys()].map(String));
  for (const key of keys) {
    const ws = withdrawalsBy.get(key) ?? [];
    const [partnerId, programId] = key.split("|").map(Number);
    const currency = key.split("|")[2];
    const stored = balances.get(key) ?? { partnerId, programId, currency, balanceCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 };
    const ids = keyIds(stored);
    if (stored.balanceCents !== stored.creditedCents - stored.deductedCents - stored.paidCents) {
      violate(
        "balance.arithmetic",
        ids,
        `balance ${stored.balanceCents} != credited ${stored.creditedCents} - deducted ${stored.deductedCents} - paid ${stored.paidCents}`,
      );
    }
    const paid = ws.filter((w) => w.status === "paid").reduce((s, w) => s + w.amountCents, 0);
    const net = creditedNet.get(key) ?? 0;
    if (stored.balanceCents !== net - paid || stored.paidCents !== paid) {
      violate(
        "balance.ledger",
        ids,
        `balance ${stored.balanceCents} (paid ${stored.paidCents}); the ledger says credited net ${net} - paid withdrawals ${paid} = ${net - paid}`,
      );
    }
    const open = ws.filter((w) => w.status === "open");
    const openTotal = open.reduce((s, w) => s + w.amountCents, 0);
    if (openTotal > Math.max(stored.balanceCents, 0)) {
      violate("withdrawals.open_within_balance", { ...ids, withdrawals: open.map((w) => w.id) }, `open withdrawals ${openTotal} > max(balance ${stored.balanceCents}, 0)`);
    }
  }

  const holder = new Map<number, number>();
  for (const w of snapshot.withdrawals) {
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

  const byStatus = (s: string) => snapshot.withdrawals.filter((w) => w.status === s).length;
  return {
    ok: violations.length === 0,
    checked: {
      commissions: snapshot.commissions.length,
      refundEntries: snapshot.refunds.length,
      restorations: snapshot.refunds.filter((e) => e.appliedCents < 0).length,
      refundIds: snapshot.refunds.filter((e) => e.refundId !== null).length,
      balances: snapshot.balances.length,
      withdrawals: { open: byStatus("open"), paid: byStatus("paid"), cancelled: byStatus("cancelled") },
      outboxEvents: { dispatched, pending },
      totalsByCurrency: totalsByCurrency(snapshot),
      rules: [...INVARIANT_RULES],
    },
    violations,
    violationsNotShown: notShown,
  };
}
