/** The commissions service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { csvExample, exportDescription } from "../../shared/csv-export";
import type { Jsonified } from "../../shared/dto";
import { declareActions, programRoutes } from "../../shared/endpoint";
import { COMMISSIONS_CSV, WITHDRAWALS_CSV } from "./export";
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
  amountCents: 2000,
  refundedCents: 3000,
  deductedCents: 600,
  netCents: 1400,
  groupId: null,
  rewardLines: null,
  status: "refunded",
  reason: "customer asked",
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
  createdAt: "2026-02-01T10:00:00.000Z",
  paidAt: null,
  cancelledAt: null,
};
const NEXT_CURSOR = "MjAyNi0wMS0wMVQxMDowMDowMC4wMDBafDc";
const PAGING = "Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.";

export const COMMISSIONS = declareActions("commissions", {
  list: {
    input: S.ListCommissionsInput,
    http: [
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
  reverseLead: {
    input: S.ReverseLeadInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/commissions/:commissionId/reverse",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Reverse a lead commission",
      description:
        "Takes back a commission a lead reward paid (a fake signup, say): reversed in full, deducted from the partner's balance when it was already credited, and the partner is notified. A sale's commission is reversed by refunding the sale instead (conflict). Reversing it again is skipped.",
      example: { programId: 1, commissionId: 12, reason: "Fake signup" },
      errors: ["not_found", "conflict"],
      response: { description: "What the reversal did.", example: { success: true, status: "reversed", deductionAmount: 5, commission_id: 12 } },
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
