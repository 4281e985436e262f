/**
 * The ledger invariants (services/commissions/invariants/) on hand-made
 * snapshots: a consistent one passes, and one breaking each rule is reported
 * with that rule and the ids involved.
 */
import { checkLedgerInvariants, INVARIANT_RULES, type InvariantRule, type LedgerSnapshot } from "../../services/commissions/invariants";
import { withConversionDrift, withRollupDrift } from "../../services/commissions/invariants/rollups";

const T = "2030-01-01T00:00:00.000Z";
const key = { partnerId: 1, programId: 1, currency: "usd" };

/**
 * Partner 1 in program 1:
 * - commission 1: 2000 on 10000, credited, then refunded 3000 with re_1 (deducts 600 from the balance);
 * - commission 2: 1000 on 5000, credited, held by open withdrawal 1 (1000);
 * - commission 3: 200 on 1000, never credited, fully refunded without an id (reversed);
 * - commission 4: 1000 on 10000, credited, disputed (dp_1: 4000 -> 400) and the dispute won
 *   (dp_1:restored gives it back), then paid out by withdrawal 2 (1000);
 * - withdrawal 3: cancelled.
 * Balance: credited 2000 + 1000 + 1000 = 4000, deducted 600 + 400 - 400 = 600, paid 1000: 2400.
 */
function valid(): LedgerSnapshot {
  return {
    commissions: [
      { id: 1, ...key, saleAmountCents: 10_000, amountCents: 2000, refundedCents: 3000, deductedCents: 600, status: "refunded", creditedAt: T, paidOutAt: null },
      { id: 2, ...key, saleAmountCents: 5000, amountCents: 1000, refundedCents: 0, deductedCents: 0, status: "approved", creditedAt: T, paidOutAt: null },
      { id: 3, ...key, saleAmountCents: 1000, amountCents: 200, refundedCents: 1000, deductedCents: 200, status: "reversed", creditedAt: null, paidOutAt: null },
      { id: 4, ...key, saleAmountCents: 10_000, amountCents: 1000, refundedCents: 0, deductedCents: 0, status: "paid", creditedAt: T, paidOutAt: T },
    ],
    refunds: [
      { id: 1, commissionId: 1, refundId: "re_1", appliedCents: 3000, deductionCents: 600, balanceDeductionCents: 600 },
      { id: 2, commissionId: 3, refundId: null, appliedCents: 1000, deductionCents: 200, balanceDeductionCents: 0 },
      { id: 3, commissionId: 4, refundId: "dp_1", appliedCents: 4000, deductionCents: 400, balanceDeductionCents: 400 },
      { id: 4, commissionId: 4, refundId: "dp_1:restored", appliedCents: -4000, deductionCents: -400, balanceDeductionCents: -400 },
    ],
    balances: [{ ...key, balanceCents: 2400, creditedCents: 4000, deductedCents: 600, paidCents: 1000 }],
    withdrawals: [
      { id: 1, ...key, requestedCents: 1000, amountCents: 1000, status: "open", commissionIds: [2] },
      { id: 2, ...key, requestedCents: 1000, amountCents: 1000, status: "paid", commissionIds: [4] },
      { id: 3, ...key, requestedCents: 500, amountCents: 0, status: "cancelled", commissionIds: [] },
    ],
    outbox: [
      { id: 1, type: "commission.created", commissionId: 1, dispatchedAt: T },
      { id: 2, type: "commission.created", commissionId: 2, dispatchedAt: T },
      { id: 3, type: "commission.created", commissionId: 3, dispatchedAt: T },
      { id: 4, type: "commission.created", commissionId: 4, dispatchedAt: T },
      { id: 5, type: "commission.refunded", commissionId: 1, dispatchedAt: T },
      { id: 6, type: "commission.reversed", commissionId: 3, dispatchedAt: null },
      { id: 7, type: "commission.refunded", commissionId: 4, dispatchedAt: T },
      { id: 8, type: "commission.restored", commissionId: 4, dispatchedAt: null },
    ],
  };
}

/** The snapshot with its commissions' days and the commissions_daily rows they add up to (credited 1400 + 1000, paid 1000, reversed 600 + 200). */
function withCommissionDays(s: LedgerSnapshot): LedgerSnapshot {
  for (const c of s.commissions) c.createdAt = T;
  const figures = { day: "2030-01-01", commissions: 4, pendingCents: 0, creditedCents: 2400, paidCents: 1000, reversedCents: 800 };
  // The partner's row, and the program's row of all partners (partner 0).
  s.commissionDays = [
    { ...key, ...figures },
    { ...key, partnerId: 0, ...figures },
  ];
  // The monthly rollup: the partner's month (its first day), no program row.
  s.commissionMonths = [{ ...key, ...figures }];
  return s;
}

const rulesOf = (s: LedgerSnapshot) => [...new Set(checkLedgerInvariants(s).violations.map((v) => v.rule))].sort();

test("a consistent ledger passes every rule, and the report says what was checked", () => {
  const report = checkLedgerInvariants(valid());
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
  expect(report.checked).toEqual({
    commissions: 4,
    refundEntries: 4,
    restorations: 1,
    refundIds: 3,
    balances: 1,
    withdrawals: { open: 1, processing: 0, paid: 1, failed: 0, cancelled: 1 },
    payoutRuns: 0,
    fraudReviews: 0,
    outboxEvents: { dispatched: 6, pending: 2 },
    totalsByCurrency: { usd: { saleAmountCents: 26_000, refundedCents: 4000, deductedCents: 800, balanceCents: 2400, paidCents: 1000, openWithdrawalCents: 1000 } },
    rules: [...INVARIANT_RULES],
  });
});

test("totals are per currency, never added across currencies", () => {
  const s = valid();
  s.commissions.push({
    ...s.commissions[0],
    id: 99,
    partnerId: 77,
    currency: "jpy",
    saleAmountCents: 1000,
    amountCents: 100,
    refundedCents: 0,
    deductedCents: 0,
    status: "pending",
    creditedAt: null,
    paidOutAt: null,
  });
  s.outbox.push({ id: 999, type: "commission.created", commissionId: 99, dispatchedAt: null });
  const report = checkLedgerInvariants(s);
  expect(report.violations).toEqual([]);
  expect(Object.keys(report.checked.totalsByCurrency)).toEqual(["jpy", "usd"]);
  expect(report.checked.totalsByCurrency.jpy).toEqual({ saleAmountCents: 1000, refundedCents: 0, deductedCents: 0, balanceCents: 0, paidCents: 0, openWithdrawalCents: 0 });
  expect(report.checked.totalsByCurrency.usd.saleAmountCents).toBe(26_000);
});

test("an empty ledger passes", () => {
  expect(checkLedgerInvariants({ commissions: [], refunds: [], balances: [], withdrawals: [], outbox: [] }).ok).toBe(true);
});

type Case = [string, (s: LedgerSnapshot) => void, InvariantRule[], Record<string, unknown>?];

/** A review of commission `commissionId` with its two events (fraud.flagged, commission.held). */
function reviewOf(s: LedgerSnapshot, commissionId: number, status: string): void {
  s.fraudReviews = [{ id: 1, programId: key.programId, partnerId: key.partnerId, commissionId, status }];
  s.outbox.push({ id: 90, type: "fraud.flagged", commissionId, dispatchedAt: T }, { id: 91, type: "commission.held", commissionId, dispatchedAt: T });
}

const cases: Case[] = [
  ["a pending review whose commission was credited anyway", (s) => reviewOf(s, 2, "pending"), ["fraud_review.hold"], { review: 1, commission: 2 }],
  ["a rejected review whose commission was not voided", (s) => reviewOf(s, 1, "rejected"), ["fraud_review.hold"], { review: 1, commission: 1 }],
  [
    "refunded beyond the sale amount",
    (s) => {
      s.commissions[0].refundedCents = 10_001;
      s.refunds[0].appliedCents = 10_001;
    },
    ["commission.refunded_within_sale", "commission.status"],
    { commission: 1 },
  ],
  [
    "a deduction that is not round(C x refunded / S)",
    (s) => {
      s.commissions[0].deductedCents = 601;
      s.refunds[0].deductionCents = 601;
      s.refunds[0].balanceDeductionCents = 601;
      s.balances[0].deductedCents = 601;
      s.balances[0].balanceCents = 2399;
    },
    ["commission.deducted_proportional"],
    { commission: 1 },
  ],
  [
    "a refund entry lost (the commission says more than its entries)",
    (s) => {
      s.refunds.splice(1, 1);
    },
    ["commission.entries_sum", "outbox.event_per_change"],
    { commission: 3 },
  ],
  [
    "reversed while part of the sale is left",
    (s) => {
      s.commissions[0].status = "reversed";
    },
    ["commission.status"],
    { commission: 1 },
  ],
  [
    "approved without being credited",
    (s) => {
      s.commissions[1].creditedAt = null;
      s.withdrawals[0].commissionIds = [];
      s.balances[0].creditedCents -= 1000;
      s.balances[0].balanceCents -= 1000;
      s.withdrawals[0].amountCents = 0;
      s.withdrawals[0].status = "cancelled";
    },
    ["commission.status"],
    { commission: 2 },
  ],
  [
    "the same refund id applied twice",
    (s) => {
      s.refunds.push({ id: 9, commissionId: 1, refundId: "re_1", appliedCents: 1000, deductionCents: 200, balanceDeductionCents: 200 });
      s.commissions[0].refundedCents = 4000;
      s.commissions[0].deductedCents = 800;
      s.balances[0].deductedCents = 800;
      s.balances[0].balanceCents = 2200;
      s.outbox.push({ id: 9, type: "commission.refunded", commissionId: 1, dispatchedAt: null });
    },
    ["refund.unique_id"],
    { commission: 1, refundEntries: [1, 9], refundId: "re_1" },
  ],
  [
    "a negative entry that restores nothing",
    (s) => {
      s.refunds[3].refundId = "dp_2:restored";
    },
    ["refund.entry"],
    { commission: 4, refundEntry: 4 },
  ],
  [
    "a restoration giving back more than its original applied",
    (s) => {
      s.refunds[3].appliedCents = -5000;
      s.refunds[2].appliedCents = 5000;
      s.refunds[2].refundId = "dp_9";
    },
    ["refund.entry"],
    { commission: 4, refundEntry: 4 },
  ],
  [
    "an entry of an unknown commission",
    (s) => {
      s.refunds.push({ id: 9, commissionId: 99, refundId: null, appliedCents: 1, deductionCents: 0, balanceDeductionCents: 0 });
    },
    ["refund.entry"],
    { commission: 99, refundEntry: 9 },
  ],
  [
    "a balance deduction on a commission never credited",
    (s) => {
      s.refunds[1].balanceDeductionCents = 200;
      s.balances[0].deductedCents += 200;
      s.balances[0].balanceCents -= 200;
    },
    ["balance.ledger", "refund.balance_deduction"],
    { commission: 3, refundEntry: 2 },
  ],
  [
    "a balance deduction that is neither 0 nor the deduction",
    (s) => {
      s.refunds[0].balanceDeductionCents = 300;
    },
    ["refund.balance_deduction"],
    { commission: 1, refundEntry: 1 },
  ],
  [
    "a balance row whose columns do not add up",
    (s) => {
      s.balances[0].creditedCents += 5;
    },
    ["balance.arithmetic"],
    { partner: 1, program: 1, currency: "usd" },
  ],
  [
    "a balance that disagrees with the commissions (a credit applied twice)",
    (s) => {
      s.balances[0].creditedCents += 1000;
      s.balances[0].balanceCents += 1000;
    },
    ["balance.ledger"],
    { partner: 1, program: 1, currency: "usd" },
  ],
  [
    "a paid withdrawal missing from the balance",
    (s) => {
      s.balances[0].paidCents = 0;
      s.balances[0].balanceCents = 3400;
    },
    ["balance.ledger"],
    { partner: 1, program: 1, currency: "usd" },
  ],
  [
    "open withdrawals above the balance",
    (s) => {
      s.withdrawals[0].amountCents = 2500;
      s.withdrawals[0].requestedCents = 2500;
    },
    ["withdrawals.open_within_balance"],
    { partner: 1, program: 1, currency: "usd", withdrawals: [1] },
  ],
  [
    "an open withdrawal while the balance is negative (a paid-out commission refunded)",
    (s) => {
      // Commission 1 credited (1000), paid out by withdrawal 1, then fully refunded: the balance owes 1000.
      Object.assign(s, {
        commissions: [{ id: 1, ...key, saleAmountCents: 5000, amountCents: 1000, refundedCents: 5000, deductedCents: 1000, status: "reversed", creditedAt: T, paidOutAt: T }],
        refunds: [{ id: 1, commissionId: 1, refundId: null, appliedCents: 5000, deductionCents: 1000, balanceDeductionCents: 1000 }],
        balances: [{ ...key, balanceCents: -1000, creditedCents: 1000, deductedCents: 1000, paidCents: 1000 }],
        withdrawals: [
          { id: 1, ...key, requestedCents: 1000, amountCents: 1000, status: "paid", commissionIds: [1] },
          { id: 2, ...key, requestedCents: 10, amountCents: 1, status: "open", commissionIds: [] },
        ],
        outbox: [
          { id: 1, type: "commission.created", commissionId: 1, dispatchedAt: T },
          { id: 2, type: "commission.reversed", commissionId: 1, dispatchedAt: T },
        ],
      });
    },
    ["withdrawals.open_within_balance"],
    { withdrawals: [2] },
  ],
  [
    "a cancelled withdrawal still holding a commission",
    (s) => {
      s.withdrawals[2].commissionIds = [1];
    },
    ["withdrawal.state"],
    { withdrawal: 3 },
  ],
  [
    "a commission held by two withdrawals",
    (s) => {
      s.withdrawals[1].commissionIds = [2, 4];
    },
    ["withdrawal.state"],
    { withdrawals: [1, 2], commission: 2 },
  ],
  [
    "a withdrawal holding another partner's commission",
    (s) => {
      s.commissions[1].partnerId = 2;
      s.commissions.push({ ...s.commissions[1], id: 5, partnerId: 1, amountCents: 0, creditedAt: null, status: "pending" });
      s.outbox.push({ id: 9, type: "commission.created", commissionId: 5, dispatchedAt: null });
      s.balances[0].creditedCents -= 1000;
      s.balances[0].balanceCents -= 1000;
      s.balances.push({ partnerId: 2, programId: 1, currency: "usd", balanceCents: 1000, creditedCents: 1000, deductedCents: 0, paidCents: 0 });
    },
    ["withdrawal.state"],
    { withdrawal: 1, commission: 2 },
  ],
  [
    "a paid-out commission no paid withdrawal holds (its payout came back)",
    (s) => {
      s.withdrawals[1].status = "failed";
      s.withdrawals[1].failureReason = "returned";
      s.withdrawals[1].commissionIds = [];
      s.balances[0] = { ...key, balanceCents: 3400, creditedCents: 4000, deductedCents: 600, paidCents: 0 };
    },
    ["withdrawal.state"],
    { commission: 4 },
  ],
  [
    "a failed payout still holding its commission, without a reason",
    (s) => {
      s.withdrawals[0].status = "failed";
    },
    ["withdrawal.state"],
    { withdrawal: 1 },
  ],
  [
    "a payout of another program than its run's",
    (s) => {
      s.payoutRuns = [{ id: 7, programId: key.programId + 1, currency: key.currency }];
      s.withdrawals[0].runId = 7;
    },
    ["payout_run.payouts"],
    { withdrawal: 1, run: 7 },
  ],
  [
    "two payouts of one partner in a run",
    (s) => {
      s.payoutRuns = [{ id: 7, programId: key.programId, currency: key.currency }];
      s.withdrawals[0].runId = 7;
      s.withdrawals[2].runId = 7;
    },
    ["payout_run.payouts"],
    { withdrawal: 3, run: 7, partner: key.partnerId },
  ],
  [
    "a paid withdrawal whose commission was never paid out",
    (s) => {
      s.withdrawals[0].status = "paid";
      s.balances[0] = { ...key, balanceCents: 1400, creditedCents: 4000, deductedCents: 600, paidCents: 2000 };
    },
    ["withdrawal.state"],
    { withdrawal: 1, commission: 2 },
  ],
  [
    "a refund whose event was never written to the outbox",
    (s) => {
      s.outbox.splice(4, 1);
    },
    ["outbox.event_per_change"],
    { commission: 1 },
  ],
  [
    "a commission created twice in the outbox",
    (s) => {
      s.outbox.push({ id: 9, type: "commission.created", commissionId: 2, dispatchedAt: null });
    },
    ["outbox.event_per_change"],
    { commission: 2, outboxEvents: [2, 9] },
  ],
  [
    "a commissions_daily row that is not what its commissions add up to",
    (s) => {
      withCommissionDays(s).commissionDays![0].creditedCents += 1;
    },
    ["rollup.commissions_daily"],
    { program: 1, partner: 1, day: "2030-01-01", currency: "usd" },
  ],
  [
    "a commissions_monthly row that is not what its commissions add up to",
    (s) => {
      withCommissionDays(s).commissionMonths![0].paidCents -= 1;
    },
    ["rollup.commissions_monthly"],
    { program: 1, partner: 1, day: "2030-01-01", currency: "usd" },
  ],
  [
    "commissions of a day without their commissions_daily row",
    (s) => {
      withCommissionDays(s).commissions[3].createdAt = "2030-01-02T10:00:00.000Z";
    },
    ["rollup.commissions_daily"],
    { day: "2030-01-02" },
  ],
  [
    "an event of an unknown commission or type",
    (s) => {
      s.outbox.push({ id: 9, type: "commission.teleported", commissionId: 99, dispatchedAt: null });
    },
    ["outbox.event_per_change"],
    { outboxEvent: 9 },
  ],
];

test.each(cases)("detects %s", (_name, mutate, rules, ids) => {
  const s = valid();
  mutate(s);
  const report = checkLedgerInvariants(s);
  expect(report.ok).toBe(false);
  expect(rulesOf(s)).toEqual([...rules].sort());
  if (ids) expect(report.violations).toContainEqual(expect.objectContaining({ ids: expect.objectContaining(ids) }));
  for (const v of report.violations) expect(v.detail.length).toBeGreaterThan(0);
});

test("a commissions_daily that adds up passes", () => {
  expect(checkLedgerInvariants(withCommissionDays(valid())).violations).toEqual([]);
});

/** The owners' rollups (sales, attribution) drift as their rollupDrift actions report it, joined into the report. */
const OWNER_ROLLUPS = [
  "sales_daily",
  "clicks_daily",
  "sales_monthly",
  "leads_daily",
  "sales_running",
  "clicks_running",
  "leads_running",
  "sales_running_packed",
  "clicks_running_packed",
  "notifications_unread",
];

test("the owners' drifted rollup keys join the report as violations of their rule, capped with the rest", () => {
  const drift = OWNER_ROLLUPS.map((rollup) => ({ rollup, programId: 1, partnerId: 2, day: "2030-01-01", key: "live", stored: { n: 2 }, counted: { n: 1 } }));
  const report = withRollupDrift(checkLedgerInvariants(valid()), drift, 2);
  expect(report.ok).toBe(false);
  expect(report.violations).toEqual([
    { rule: "rollup.sales_daily", ids: { program: 1, partner: 2, day: "2030-01-01", key: "live" }, detail: "sales_daily holds n 2; the rows add up to n 1." },
    expect.objectContaining({ rule: "rollup.clicks_daily" }),
  ]);
  expect(report.violationsNotShown).toBe(OWNER_ROLLUPS.length - 2);
  expect(withRollupDrift(checkLedgerInvariants(valid()), [], 2).ok).toBe(true);
  // A counter kept per workspace and kind (the inbox's unread counts) names its key alone.
  const unread = { rollup: "notifications_unread", key: "workspace 3 partner_notice", stored: { unread: 3 }, counted: { unread: 1 } };
  expect(withRollupDrift(checkLedgerInvariants(valid()), [unread], 2).violations).toEqual([
    { rule: "rollup.notifications_unread", ids: { key: "workspace 3 partner_notice" }, detail: "notifications_unread holds unread 3; the rows add up to unread 1." },
  ]);
});

test("a converted sale's commission: its refunds count in the currency it was paid in, against what was paid", () => {
  const s = valid();
  // 1500 yen paid, converted to 1000 cents: all 1500 refunded reverses it; the totals keep the yen apart.
  Object.assign(s.commissions[2], { saleOriginal: { amountCents: 1500, currency: "jpy" }, refundedCents: 1500 });
  s.refunds[1].appliedCents = 1500;
  const report = checkLedgerInvariants(s);
  expect(report.violations).toEqual([]);
  expect(report.checked.totalsByCurrency.jpy).toMatchObject({ saleAmountCents: 1500, refundedCents: 1500, deductedCents: 0 });
  s.commissions[2].refundedCents = 1600;
  s.refunds[1].appliedCents = 1600;
  expect(checkLedgerInvariants(s).violations.map((v) => v.rule)).toEqual(["commission.refunded_within_sale"]);
});

test("the sales service's converted sales off their frozen rate join the report as sale.converted_at_rate", () => {
  const drift = { checked: 3, drift: [{ saleId: 9, programId: 1, detail: "9958 usd is not 9200 eur at 1.0823 (manual, 2030-01-01) = 9957" }] };
  const report = withConversionDrift(checkLedgerInvariants(valid()), drift, 10);
  expect(report).toMatchObject({ ok: false, checked: { convertedSales: 3 }, violations: [{ rule: "sale.converted_at_rate", ids: { sale: 9, program: 1 }, detail: drift.drift[0].detail }] });
  expect(withConversionDrift(checkLedgerInvariants(valid()), { checked: 3, drift: [] }, 10)).toMatchObject({ ok: true, checked: { convertedSales: 3 } });
});

test("every rule has a case that breaks it", () => {
  const covered = new Set([...cases.flatMap(([, , rules]) => rules), ...OWNER_ROLLUPS.map((r) => `rollup.${r}`), "sale.converted_at_rate"]);
  expect([...INVARIANT_RULES].filter((r) => !covered.has(r))).toEqual([]);
});

test("the violation list is capped and the rest counted", () => {
  const s = valid();
  for (const c of s.commissions) c.deductedCents += 1;
  const report = checkLedgerInvariants(s, 2);
  expect(report.violations).toHaveLength(2);
  expect(report.violationsNotShown).toBeGreaterThan(0);
});
