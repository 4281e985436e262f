/** The commissions service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { csvExample, exportDescription, type CsvLayout } from "../../shared/csv-export";
import type { Jsonified } from "../../shared/dto";
import { declareActions, programRoutes, programApiRoute } from "../../shared/endpoint";
import { BANK_FILE_CSV, COMMISSIONS_CSV, PAYPAL_FILE_CSV, RUN_PAYOUTS_CSV, runFileExample, WITHDRAWALS_CSV, type RunFileRow } from "./export";
import type { CommissionListItem } from "./list-views";
import type { Withdrawal } from "./repository";
import * as S from "./schemas";

const refundItemExample = { id: 4, refundId: "re_1", amountCents: 3000, deductionCents: 600, reasonCode: "refund", reason: "customer asked", createdAt: "2026-01-03T09:00:00.000Z" };
const commissionItemExample: Jsonified<CommissionListItem> = {
  id: 7,
  programId: 1,
  partnerId: 3,
  kind: "sale",
  saleId: 9,
  transactionId: "order-1001",
  currency: "usd",
  saleAmountCents: 10000,
  saleOriginal: null,
  amountCents: 2000,
  refundedCents: 3000,
  deductedCents: 600,
  netCents: 1400,
  groupId: null,
  rewardLines: null,
  status: "refunded",
  reason: "customer asked",
  description: null,
  heldAt: null,
  holdReason: null,
  approvableAt: "2026-01-31T10:00:00.000Z",
  creditedAt: null,
  paidOutAt: null,
  createdAt: "2026-01-01T10:00:00.000Z",
  refunds: [refundItemExample],
};
const withdrawalItemExample: Jsonified<Withdrawal> = {
  id: 2,
  partnerId: 3,
  programId: 1,
  currency: "usd",
  requestedCents: 1000,
  amountCents: 1000,
  status: "open",
  idempotencyKey: "payout-2030-01-partner-3",
  runId: null,
  method: null,
  transferId: null,
  attempts: 0,
  failureCode: null,
  failureReason: null,
  createdAt: "2026-02-01T10:00:00.000Z",
  processingAt: null,
  paidAt: null,
  failedAt: null,
  cancelledAt: null,
};
const NEXT_CURSOR = "MjAyNi0wMS0wMVQxMDowMDowMC4wMDBafDc";
const PAGING = "Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.";

/** A payout run's CSV file, read in batches by the gateway: every payout (all who read the program), or a bank or PayPal file (payouts:write: it holds account details). */
function runFile(file: "payouts" | "bank" | "paypal", layout: CsvLayout<RunFileRow>, summary: string, rows: string) {
  return {
    input: S.ExportPayoutRunInput,
    http: programRoutes({
      method: "GET",
      path: `/:programId/payout-runs/:runId/${file}.csv`,
      ...(file === "payouts" ? {} : { permission: "payouts:write" as const }),
      tag: "Payouts",
      summary,
      description: exportDescription(rows),
      example: { programId: 1, runId: 4 },
      errors: ["not_found"],
      response: { description: "The CSV file (Content-Disposition: attachment).", contentType: "text/csv", example: csvExample(layout, runFileExample) },
    }),
  };
}

const fraudReviewExample = {
  id: 4,
  programId: 1,
  partnerId: 3,
  partnerName: "Jane Doe",
  commissionId: 12,
  kind: "sale",
  status: "pending",
  flags: [{ rule: "partner_identity", evidence: { sameEmail: true, sameAddress: false }, description: "The customer's email or network address is the partner's own." }],
  commission: { amountCents: 2000, currency: "usd", status: "pending", transactionId: "order_1001" },
  createdAt: "2026-01-02T10:00:00.000Z",
  decidedAt: null,
  decisionReason: null,
};

export const COMMISSIONS = declareActions("commissions", {
  list: {
    input: S.ListCommissionsInput,
    http: [
      programApiRoute({
        method: "GET",
        path: "/commissions",
        scope: "commissions:read",
        summary: "The program's commissions, with their refunds",
        description: `Commissions of the program, each with the refunds applied to it (amount, deduction, reason), filtered by partner, state and creation date. ${PAGING}`,
        example: { partnerId: 3, status: "refunded", from: "2026-01-01", limit: 25 },
        response: { description: "A page of commissions.", example: { data: [commissionItemExample], nextCursor: NEXT_CURSOR } },
      }),
      {
        method: "GET",
        path: "/api/programs/:programId/commissions",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "The program's commissions, with their refunds",
        description: `Commissions of the program, each with the refunds applied to it (amount, deduction, reason), filtered by partner, state and creation date. ${PAGING} For members of the program's workspace whose role grants programs:read.`,
        example: { programId: 1, partnerId: 3, status: "refunded", from: "2026-01-01", limit: 25 },
        response: { description: "A page of commissions.", example: { data: [commissionItemExample], nextCursor: NEXT_CURSOR } },
      },
      {
        method: "GET",
        path: "/api/admin/commissions",
        route: "admin",
        tag: "Operator",
        summary: "A program's commissions, with their refunds",
        description: `Commissions of one program (programId is required), each with its refunds, filtered by partner, state and creation date. ${PAGING}`,
        example: { programId: 1, status: "approved", limit: 50 },
        errors: ["not_found"],
        response: { description: "A page of commissions.", example: { data: [commissionItemExample], nextCursor: null } },
      },
    ],
  },
  listWithdrawals: {
    input: S.ListWithdrawalsInput,
    http: [
      programApiRoute({
        method: "GET",
        path: "/withdrawals",
        scope: "payouts:read",
        summary: "The program's withdrawals",
        description: `Withdrawals (payouts) of the program's partners, filtered by partner, state and creation date. ${PAGING}`,
        example: { status: "open" },
        response: { description: "A page of withdrawals.", example: { data: [withdrawalItemExample], nextCursor: null } },
      }),
      {
        method: "GET",
        path: "/api/programs/:programId/withdrawals",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "The program's withdrawals",
        description: `Withdrawals (payouts) of the program's partners, filtered by partner, state and creation date. ${PAGING} For members of the program's workspace whose role grants programs:read.`,
        example: { programId: 1, status: "open" },
        response: { description: "A page of withdrawals.", example: { data: [withdrawalItemExample], nextCursor: null } },
      },
      {
        method: "GET",
        path: "/api/admin/withdrawals",
        route: "admin",
        tag: "Operator",
        summary: "A program's withdrawals",
        description: `Withdrawals of one program (programId is required), filtered by partner, state and creation date. ${PAGING}`,
        example: { programId: 1, partnerId: 3 },
        errors: ["not_found"],
        response: { description: "A page of withdrawals.", example: { data: [withdrawalItemExample], nextCursor: null } },
      },
    ],
  },
  export: {
    input: S.ExportCommissionsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/commissions.csv",
      scope: "commissions:read",
      tag: "Dashboard",
      summary: "The program's commissions as a CSV file",
      description: exportDescription(
        "The commissions of the program, filtered like the commissions list (partner, state, creation date), one row per commission: what it earned, what refunds took back (refunded, deducted, net) and how many refunds it had.",
      ),
      example: { programId: 1, status: "approved", from: "2026-01-01" },
      response: { description: "The CSV file (Content-Disposition: attachment).", contentType: "text/csv", example: csvExample(COMMISSIONS_CSV, commissionItemExample) },
    }),
  },
  exportWithdrawals: {
    input: S.ExportWithdrawalsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/withdrawals.csv",
      scope: "payouts:read",
      tag: "Dashboard",
      summary: "The program's withdrawals (payouts) as a CSV file",
      description: exportDescription("The withdrawals of the program's partners, filtered like the withdrawals list (partner, state, creation date), one row per withdrawal."),
      example: { programId: 1, status: "paid" },
      response: { description: "The CSV file (Content-Disposition: attachment).", contentType: "text/csv", example: csvExample(WITHDRAWALS_CSV, withdrawalItemExample) },
    }),
  },
  get: {
    input: S.CommissionIdInput,
    http: {
      method: "GET",
      path: "/api/admin/commissions/:commissionId",
      route: "admin",
      tag: "Operator",
      summary: "A commission with its refunds and events",
      description: "The commission, every refund applied to it, and the events it produced with their delivery state.",
      example: { commissionId: 7 },
      errors: ["not_found"],
      response: {
        description: "The commission.",
        example: {
          id: 7,
          status: "refunded",
          amountCents: 2000,
          refunds: [{ refundId: "re_1", deductionCents: 600 }],
          outbox: [{ id: 2, type: "commission.refunded", status: "dispatched" }],
        },
      },
    },
  },
  approveDue: {
    input: S.ApproveDueInput,
    http: {
      method: "POST",
      path: "/api/admin/commissions/approve-due",
      route: "admin",
      tag: "Operator",
      summary: "Credit commissions whose hold has passed",
      description: "Approves every pending commission whose hold period is over, crediting the partners' balances. The server also does this periodically; this runs it now.",
      example: { programId: 1 },
      response: { description: "What was approved.", example: { approved: 1, commissionIds: [7] } },
    },
  },
  balance: {
    input: S.BalanceKeyInput,
    http: {
      method: "GET",
      path: "/api/admin/programs/:programId/partners/:partnerId/balance",
      route: "admin",
      tag: "Operator",
      summary: "A partner's balance, with withdrawals",
      description: "Credited, deducted and paid amounts and the available balance, in minor units of one currency.",
      example: { programId: 1, partnerId: 3, currency: "usd" },
      errors: ["not_found"],
      response: {
        description: "The balance in minor units.",
        example: { partnerId: 3, programId: 1, currency: "usd", balanceCents: 1400, creditedCents: 2000, deductedCents: 600, paidCents: 0, withdrawals: [] },
      },
    },
  },
  createWithdrawal: {
    input: S.CreateWithdrawalInput,
    http: {
      method: "POST",
      path: "/api/admin/programs/:programId/partners/:partnerId/withdrawals",
      route: "admin",
      tag: "Operator",
      summary: "Create a withdrawal",
      description:
        "Takes the amount (default: the whole available balance) out of the partner's balance for a payout. With an idempotency key, the same request again returns the same withdrawal; another request with that key is 409.",
      example: { programId: 1, partnerId: 3, amountCents: 1000, idempotencyKey: "payout-2030-01-partner-3" },
      errors: ["not_found", "conflict"],
      response: {
        description: "The withdrawal (for a key already used with the same request, the earlier withdrawal as it is now; another request with the key is 409).",
        example: { id: 2, partnerId: 3, programId: 1, currency: "usd", requestedCents: 1000, amountCents: 1000, status: "open", idempotencyKey: "payout-2030-01-partner-3" },
      },
    },
  },
  payWithdrawal: {
    input: S.WithdrawalIdInput,
    http: {
      method: "POST",
      path: "/api/admin/withdrawals/:withdrawalId/pay",
      route: "admin",
      tag: "Operator",
      summary: "Mark a withdrawal paid",
      description: "Records that the payout was sent. A withdrawal is paid once (409 otherwise).",
      example: { withdrawalId: 2 },
      errors: ["not_found", "conflict"],
      response: { description: "The paid withdrawal.", example: { id: 2, status: "paid", amountCents: 1000 } },
    },
  },
  createProgramWithdrawal: {
    input: S.CreateWithdrawalInput,
    http: {
      method: "POST",
      path: "/api/programs/:programId/partners/:partnerId/withdrawals",
      route: "program-dashboard",
      permission: "payouts:write",
      tag: "Dashboard",
      summary: "Create a partner's withdrawal",
      description:
        "Takes the amount (default: the whole available balance) out of the partner's balance for a payout. Same rules as the operator's route: with an idempotency key, the same request again returns the same withdrawal; another request with that key is 409. For members whose role grants payouts:write.",
      example: { programId: 1, partnerId: 3, amountCents: 1000, idempotencyKey: "payout-2030-01-partner-3" },
      errors: ["forbidden", "not_found", "conflict"],
      response: {
        description: "The withdrawal.",
        example: { id: 2, partnerId: 3, programId: 1, currency: "usd", requestedCents: 1000, amountCents: 1000, status: "open", idempotencyKey: "payout-2030-01-partner-3" },
      },
    },
  },
  payProgramWithdrawal: {
    input: S.ProgramWithdrawalIdInput,
    http: {
      method: "POST",
      path: "/api/programs/:programId/withdrawals/:withdrawalId/pay",
      route: "program-dashboard",
      permission: "payouts:write",
      tag: "Dashboard",
      summary: "Mark a withdrawal paid",
      description: "Records that the payout was sent. A withdrawal is paid once (409 otherwise); one of another program is not found. For members whose role grants payouts:write.",
      example: { programId: 1, withdrawalId: 2 },
      errors: ["forbidden", "not_found", "conflict"],
      response: { description: "The paid withdrawal.", example: { id: 2, programId: 1, status: "paid", amountCents: 1000 } },
    },
  },
  previewPayoutRun: {
    input: S.PreviewPayoutRunInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/payout-runs/preview",
      scope: "payouts:write",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Preview a payout run",
      description:
        "Who a run would pay now (one payout per payable partner: available balance at or above their group's minimum, a ready payout method) and who it would skip, with the reason. Nothing is written. existingRunId names the run already made for this period, if any.",
      example: { programId: 1, periodKey: "2026-11" },
      errors: ["not_found"],
      response: {
        description: "The preview.",
        example: {
          programId: 1,
          currency: "usd",
          periodKey: "2026-11",
          existingRunId: null,
          totalCents: 45000,
          payouts: [{ partnerId: 3, partnerName: "Jane Doe", method: "bank", amountCents: 45000, minPayoutCents: 5000, commissions: 12 }],
          skipped: [{ partnerId: 4, partnerName: "Sam Lee", availableCents: 1200, code: "below_minimum", reason: "Available 12.00 USD is below the group's minimum payout of 50.00 USD." }],
        },
      },
    }),
  },
  startPayoutRun: {
    input: S.StartPayoutRunInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/payout-runs",
      scope: "payouts:write",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Start a payout run",
      description:
        "Makes one payout per payable partner, in one transaction, for the period (default: today, UTC). Starting the same period again returns the run already made (created false) and pays nobody twice. With the preview's expectedTotalCents, a run whose total moved since (a refund, a new credit) is refused with 409 payout_preview_changed and nothing is made. Stripe payouts are then sent by transfer; PayPal and bank payouts are processing until marked paid after the run's file was uploaded.",
      example: { programId: 1, periodKey: "2026-11", expectedTotalCents: 45000, trigger: "console" },
      errors: ["not_found", "payout_preview_changed"],
      response: { description: "The run.", example: { created: true, run: { id: 4, programId: 1, currency: "usd", periodKey: "2026-11", status: "processing" } } },
    }),
  },
  listPayoutRuns: {
    input: S.ListPayoutRunsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/payout-runs",
      scope: "payouts:read",
      tag: "Payouts",
      summary: "The program's payout runs",
      description: `Payout runs with their totals (payouts, amount, open, processing, paid, failed) and skipped partners. ${PAGING}`,
      example: { programId: 1, limit: 10 },
      errors: ["not_found"],
      response: {
        description: "A page of runs.",
        example: { data: [{ id: 4, periodKey: "2026-11", status: "completed", totals: { payouts: 2, amountCents: 45000, paid: 2, paidCents: 45000 } }], nextCursor: null },
      },
    }),
  },
  getPayoutRun: {
    input: S.PayoutRunIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/payout-runs/:runId",
      scope: "payouts:read",
      tag: "Payouts",
      summary: "A payout run with its payouts",
      description: "The run, its totals, skipped partners with reasons, and each payout with the partner's name, method, state, transfer and failure reason.",
      example: { programId: 1, runId: 4 },
      errors: ["not_found"],
      response: {
        description: "The run.",
        example: { id: 4, periodKey: "2026-11", status: "processing", payouts: [{ id: 9, partnerId: 3, partnerName: "Jane Doe", method: "bank", status: "processing", amountCents: 45000 }] },
      },
    }),
  },
  exportPayoutRun: runFile(
    "payouts",
    RUN_PAYOUTS_CSV,
    "A payout run's payouts as a CSV file",
    "Every payout of the run, one row each: partner, method, amount, state, transfer, failure reason.",
  ),
  exportPayoutRunBank: runFile(
    "bank",
    BANK_FILE_CSV,
    "A payout run's bank batch file",
    "The run's bank payouts still to send (processing), for a bank's or Wise's batch upload: name, country, IBAN or account and routing number, SWIFT, amount in major units, currency, and the reference payout-<id>.",
  ),
  exportPayoutRunPaypal: runFile(
    "paypal",
    PAYPAL_FILE_CSV,
    "A payout run's PayPal Payouts file",
    "The run's PayPal payouts still to send (processing), in the columns of PayPal's Payouts upload: email, amount in major units, currency, reference payout-<id>, note. Payouts sent through the PayPal Payouts API are not in it.",
  ),
  markPayoutRunPaid: {
    input: S.MarkRunPaidInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/payout-runs/:runId/mark-paid",
      scope: "payouts:write",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Mark a run's PayPal or bank payouts paid",
      description:
        "After the run's file was uploaded: every processing payout of the run with this method becomes paid (its amount leaves the balance, its commissions are paid, the partner is emailed). Those already paid or failed are left as they are.",
      example: { programId: 1, runId: 4, method: "bank" },
      errors: ["not_found"],
      response: { description: "How many were paid.", example: { paid: 3 } },
    }),
  },
  failProgramWithdrawal: {
    input: S.FailWithdrawalInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/withdrawals/:withdrawalId/fail",
      scope: "payouts:write",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Mark a payout failed or returned",
      description:
        "The payout could not be sent, or came back (a bank return): its amount is in the partner's balance again, its commissions are payable in the next run, the partner is emailed with the reason. Failing it again changes nothing; a cancelled one is 409.",
      example: { programId: 1, withdrawalId: 9, reason: "The bank returned the transfer: account closed." },
      errors: ["not_found", "conflict"],
      response: { description: "The payout.", example: { id: 9, status: "failed", failureCode: "marked_failed", failureReason: "The bank returned the transfer: account closed." } },
    }),
  },
  getPayoutSchedule: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/payout-schedule",
      scope: "payouts:read",
      tag: "Payouts",
      summary: "The program's payout schedule",
      description: "manual (the default), monthly on a day or weekly on a weekday (UTC), with when the next run starts.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: { description: "The schedule.", example: { programId: 1, kind: "monthly", dayOfMonth: 1, weekday: null, nextRunAt: "2026-12-01T00:00:00.000Z" } },
    }),
  },
  setPayoutSchedule: {
    input: S.PayoutScheduleInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/payout-schedule",
      scope: "payouts:write",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Set the program's payout schedule",
      description:
        "Runs start by themselves on the day (UTC) and are named by their month (2026-11) or ISO week (2026-W48), so each period is paid once. A schedule set after this period's day starts with the next period.",
      example: { programId: 1, kind: "monthly", dayOfMonth: 1 },
      errors: ["not_found"],
      response: { description: "The schedule.", example: { programId: 1, kind: "monthly", dayOfMonth: 1, weekday: null, nextRunAt: "2026-12-01T00:00:00.000Z" } },
    }),
  },
  returnPayout: {
    input: S.ReturnPayoutInput,
  },
  partnerPayout: {
    input: S.PartnerPayoutInput,
  },
  partnerStatement: {
    input: S.PartnerStatementInput,
  },
  outboxBacklog: {
    input: S.NoInput,
    http: {
      method: "GET",
      path: "/api/admin/outbox",
      route: "admin",
      tag: "Operator",
      summary: "Commission events not yet delivered",
      description: "How many commission events still wait to become notifications and webhook deliveries. A number that keeps growing means their delivery is stuck.",
      response: { description: "The backlog.", example: { pending: 0 } },
    },
  },
  reconcile: {
    input: S.NoInput,
    http: {
      method: "GET",
      path: "/api/admin/reconcile",
      route: "admin",
      tag: "Operator",
      summary: "Check that the books add up",
      description: "Checks that balances, commissions, refunds and withdrawals agree, over one consistent snapshot. ok is false and violations lists them when any rule is broken.",
      response: { description: "The report.", example: { ok: true, violations: [], violationsNotShown: 0, checkedAt: "2026-01-01T00:00:00.000Z", durationMs: 12 } },
    },
  },
  createForSale: {
    input: S.CreateForSaleInput,
  },
  createForLead: {
    input: S.CreateForLeadInput,
  },
  voidUncredited: {
    input: S.VoidUncreditedInput,
  },
  getProgramCommission: {
    input: S.ProgramCommissionInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/commissions/:commissionId",
      scope: "commissions:read",
      tag: "Rewards",
      summary: "One commission",
      description: "One commission of the program with its refund entries, as the commissions list shows it (another program's is not found).",
      example: { programId: 1, commissionId: 7 },
      errors: ["not_found"],
      response: { description: "The commission.", example: commissionItemExample },
    }),
  },
  createManual: {
    input: S.CreateManualCommissionInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/commissions",
      scope: "commissions:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Pay a bonus or claw money back",
      description:
        "A manual commission for a partner enrolled in the program, in the program's currency, with a description the partner sees. A bonus is handled like any commission: pending for the hold period of the partner's group, credited by the credit run, paid by the next payout, and it can be voided. A clawback is a commission of minus the amount, credited at once: the partner's balance drops now and may go below zero, and the next payout run pays only what their other earnings make up beyond it. 404 when the partner is not enrolled.",
      example: { programId: 1, partnerId: 3, type: "bonus", amountCents: 5000, description: "Launch week bonus" },
      errors: ["not_found"],
      response: {
        status: 201,
        description: "The commission, as the commissions list shows it.",
        example: {
          ...commissionItemExample,
          kind: "manual",
          saleId: null,
          transactionId: "manual:bonus",
          saleAmountCents: 5000,
          amountCents: 5000,
          refundedCents: 0,
          deductedCents: 0,
          netCents: 5000,
          status: "pending",
          reason: null,
          description: "Launch week bonus",
          refunds: [],
        },
      },
    }),
  },
  voidCommission: {
    input: S.VoidCommissionInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/commissions/:commissionId/void",
      scope: "commissions:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Void a commission",
      description:
        "Takes a commission back in full with a reason the partner is told (a fake signup, a fraudulent order): reversed, its refund entry has reasonCode void, and what it had added to the partner's balance is taken back (voiding a clawback gives back what it took). The sale itself is not refunded. Voiding a reversed commission again is skipped.",
      example: { programId: 1, commissionId: 12, reason: "Fake signup" },
      errors: ["not_found"],
      response: { description: "What the reversal did.", example: { success: true, status: "reversed", deductionAmount: 5, commission_id: 12 } },
    }),
  },
  holdCommission: {
    input: S.HoldCommissionInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/commissions/:commissionId/hold",
      scope: "commissions:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Hold a commission back",
      description:
        "A commission not yet credited stays pending, whatever its hold period says, until it is released (or voided): for an order under review, say. The reason is the team's. Holding a held commission changes nothing (changed false); a credited or reversed one cannot be held (409).",
      example: { programId: 1, commissionId: 12, reason: "Order under fraud review" },
      errors: ["not_found", "conflict"],
      response: {
        description: "The commission after the call.",
        example: { commission: { ...commissionItemExample, heldAt: "2026-01-02T10:00:00.000Z", holdReason: "Order under fraud review" }, changed: true },
      },
    }),
  },
  releaseCommission: {
    input: S.ProgramCommissionInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/commissions/:commissionId/release",
      scope: "commissions:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Release a held commission",
      description:
        "A held commission goes back to waiting for its hold period: the credit run (hourly) credits it once that is over. Releasing a commission that is not held changes nothing (changed false).",
      example: { programId: 1, commissionId: 12 },
      errors: ["not_found"],
      response: { description: "The commission after the call.", example: { commission: commissionItemExample, changed: true } },
    }),
  },
  listFraudReviews: {
    input: S.ListFraudReviewsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/fraud/reviews",
      scope: "fraud:read",
      tag: "Risk",
      summary: "The program's fraud reviews",
      description: `Conversions the program's fraud rules flagged, newest first, filtered by state (pending, cleared, rejected), partner and creation date: each with its rules (their evidence, and what each means) and its commission, which stays held (pending, not credited, not payable) while the review is pending. Evidence never holds a network address: addresses are compared as hashes of their day. ${PAGING}`,
      example: { programId: 1, status: "pending", limit: 25 },
      response: { description: "A page of reviews.", example: { data: [fraudReviewExample], nextCursor: NEXT_CURSOR } },
    }),
  },
  clearFraudReview: {
    input: S.ClearFraudReviewInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/fraud/reviews/:reviewId/clear",
      scope: "fraud:write",
      permission: "programs:write",
      tag: "Risk",
      summary: "Clear a fraud review",
      description:
        "The conversion is fine: its commission is no longer held and proceeds as usual, its hold period counting again from now. Clearing a cleared review changes nothing (changed false); a rejected one cannot be cleared (409).",
      example: { programId: 1, reviewId: 4 },
      errors: ["conflict"],
      response: { description: "The review after the decision.", example: { review: { ...fraudReviewExample, status: "cleared", decidedAt: "2026-01-03T09:00:00.000Z" }, changed: true } },
    }),
  },
  rejectFraudReview: {
    input: S.RejectFraudReviewInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/fraud/reviews/:reviewId/reject",
      scope: "fraud:write",
      permission: "programs:write",
      tag: "Risk",
      summary: "Reject a fraud review",
      description:
        "The conversion does not earn: its commission is voided, and the partner is told why in plain words (what the rules that fired mean for them, then your reason if you give one), never the rules' thresholds or evidence. The sale itself is not refunded. Rejecting a rejected review changes nothing (changed false); a cleared one cannot be rejected (409). To ban the partner as well, use the partner's ban.",
      example: { programId: 1, reviewId: 4, reason: "Orders from your own account do not earn commissions." },
      errors: ["conflict"],
      response: {
        description: "The review after the decision.",
        example: {
          review: { ...fraudReviewExample, status: "rejected", decidedAt: "2026-01-03T09:00:00.000Z", decisionReason: "Orders from your own account do not earn commissions." },
          changed: true,
        },
      },
    }),
  },
  tierStats: {
    input: S.TierStatsInput,
  },
  reverseForSale: {
    input: S.ReverseForSaleInput,
  },
  settleProcessorForSale: {
    input: S.SettleProcessorForSaleInput,
  },
  stats: {
    input: S.StatsInput,
  },
});
