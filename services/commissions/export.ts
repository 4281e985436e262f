/** The commissions and withdrawals exports' columns (docs/dashboard-api.md, "Exports (CSV)"): rows of the lists, money in minor units. */
import { csvDate, csvLayout } from "../../shared/csv-export";
import type { Jsonified } from "../../shared/dto";
import type { CommissionListItem } from "./list-views";
import type { CommissionWithRefunds, Withdrawal } from "./repository";
import type { PayoutRecipient } from "../programs/contract";
import { currencyExponent, toMajorUnits } from "../../shared/domain/money";

type CommissionFields =
  | "id"
  | "createdAt"
  | "kind"
  | "partnerId"
  | "saleId"
  | "transactionId"
  | "currency"
  | "saleAmountCents"
  | "saleOriginal"
  | "amountCents"
  | "refundedCents"
  | "deductedCents"
  | "status"
  | "reason"
  | "groupId"
  | "approvableAt"
  | "creditedAt"
  | "paidOutAt"
  | "refunds";
/** A commission as read (the export), or as the list shows it (the reference's example). */
type CommissionItem = Pick<CommissionWithRefunds, CommissionFields> | Pick<Jsonified<CommissionListItem>, CommissionFields>;

export const COMMISSIONS_CSV = csvLayout<CommissionItem>({
  id: (c) => c.id,
  created_at: (c) => csvDate(c.createdAt),
  kind: (c) => c.kind,
  partner_id: (c) => c.partnerId,
  sale_id: (c) => c.saleId,
  transaction_id: (c) => c.transactionId,
  currency: (c) => c.currency,
  sale_amount_cents: (c) => c.saleAmountCents,
  amount_cents: (c) => c.amountCents,
  refunded_cents: (c) => c.refundedCents,
  deducted_cents: (c) => c.deductedCents,
  // What the commission is worth now, as the list's netCents.
  net_cents: (c) => c.amountCents - c.deductedCents,
  status: (c) => c.status,
  reason: (c) => c.reason,
  group_id: (c) => c.groupId,
  approvable_at: (c) => csvDate(c.approvableAt),
  credited_at: (c) => csvDate(c.creditedAt),
  paid_out_at: (c) => csvDate(c.paidOutAt),
  refund_count: (c) => c.refunds.length,
  // A sale paid in another currency (docs/currencies.md): what was paid; refunded_cents is in that currency.
  sale_original_amount_cents: (c) => c.saleOriginal?.amountCents ?? null,
  sale_original_currency: (c) => c.saleOriginal?.currency ?? null,
});

/** A withdrawal as read, or as the list shows it. */
type WithdrawalItem = Withdrawal | Jsonified<Withdrawal>;

export const WITHDRAWALS_CSV = csvLayout<WithdrawalItem>({
  id: (w) => w.id,
  created_at: (w) => csvDate(w.createdAt),
  partner_id: (w) => w.partnerId,
  currency: (w) => w.currency,
  requested_cents: (w) => w.requestedCents,
  amount_cents: (w) => w.amountCents,
  status: (w) => w.status,
  idempotency_key: (w) => w.idempotencyKey,
  paid_at: (w) => csvDate(w.paidAt),
  cancelled_at: (w) => csvDate(w.cancelledAt),
});

/** A row of a run's files: the payout, and the partner's details (programs.payoutRecipients; null if no longer enrolled). */
export interface RunFileRow {
  payout: Withdrawal | Jsonified<Withdrawal>;
  recipient: Pick<PayoutRecipient, "name" | "email" | "country" | "paypalEmail" | "bank"> | null;
}

/** The reference a payout carries everywhere (bank statement line, PayPal item, Stripe transfer group). */
export const payoutReference = (payoutId: number) => `payout-${payoutId}`;

const major = (r: RunFileRow) => toMajorUnits(r.payout.amountCents, r.payout.currency).toFixed(currencyExponent(r.payout.currency));

export const RUN_PAYOUTS_CSV = csvLayout<RunFileRow>({
  id: (r) => r.payout.id,
  partner_id: (r) => r.payout.partnerId,
  partner_name: (r) => r.recipient?.name ?? null,
  method: (r) => r.payout.method,
  currency: (r) => r.payout.currency,
  amount_cents: (r) => r.payout.amountCents,
  status: (r) => r.payout.status,
  transfer_id: (r) => r.payout.transferId,
  failure_code: (r) => r.payout.failureCode,
  failure_reason: (r) => r.payout.failureReason,
  created_at: (r) => csvDate(r.payout.createdAt),
  paid_at: (r) => csvDate(r.payout.paidAt),
  failed_at: (r) => csvDate(r.payout.failedAt),
});

export const BANK_FILE_CSV = csvLayout<RunFileRow>({
  name: (r) => r.recipient?.bank?.accountHolder ?? r.recipient?.name ?? null,
  country: (r) => r.recipient?.country ?? null,
  iban: (r) => r.recipient?.bank?.iban ?? null,
  account_number: (r) => r.recipient?.bank?.accountNumber ?? null,
  routing_number: (r) => r.recipient?.bank?.routingNumber ?? null,
  swift: (r) => r.recipient?.bank?.swift ?? null,
  amount: major,
  currency: (r) => r.payout.currency.toUpperCase(),
  reference: (r) => payoutReference(r.payout.id),
});

/** PayPal's Payouts upload: recipient, amount, currency, the sender's item id, and a note to the recipient. */
export const PAYPAL_FILE_CSV = csvLayout<RunFileRow>({
  email: (r) => r.recipient?.paypalEmail ?? null,
  amount: major,
  currency: (r) => r.payout.currency.toUpperCase(),
  reference: (r) => payoutReference(r.payout.id),
  note: (r) => `Commission payout ${payoutReference(r.payout.id)}`,
});

export const runFileExample: RunFileRow = {
  payout: {
    id: 9,
    partnerId: 3,
    programId: 1,
    currency: "eur",
    requestedCents: 45000,
    amountCents: 45000,
    status: "processing",
    idempotencyKey: "run-4-partner-3",
    runId: 4,
    method: "bank",
    transferId: null,
    attempts: 0,
    failureCode: null,
    failureReason: null,
    createdAt: "2026-12-01T00:00:00.000Z",
    processingAt: "2026-12-01T00:00:00.000Z",
    paidAt: null,
    failedAt: null,
    cancelledAt: null,
  },
  recipient: {
    name: "Jane Doe",
    email: "jane@example.com",
    country: "DE",
    paypalEmail: "jane@example.com",
    bank: { accountHolder: "Jane Doe", iban: "DE89370400440532013000", accountNumber: null, routingNumber: null, swift: "COBADEFFXXX" },
  },
};

/** The partner's statement: one row per commission of each of their payouts (docs/payouts.md). */
export interface StatementRow {
  payout: Withdrawal;
  commission: Pick<CommissionWithRefunds, "id" | "kind" | "transactionId" | "amountCents" | "deductedCents" | "createdAt"> | null;
}

export const STATEMENT_CSV = csvLayout<StatementRow>({
  payout_id: (r) => r.payout.id,
  payout_status: (r) => r.payout.status,
  method: (r) => r.payout.method,
  payout_created_at: (r) => csvDate(r.payout.createdAt),
  paid_at: (r) => csvDate(r.payout.paidAt),
  currency: (r) => r.payout.currency,
  payout_amount_cents: (r) => r.payout.amountCents,
  commission_id: (r) => r.commission?.id ?? null,
  commission_kind: (r) => r.commission?.kind ?? null,
  transaction_id: (r) => r.commission?.transactionId ?? null,
  commission_created_at: (r) => csvDate(r.commission?.createdAt ?? null),
  commission_net_cents: (r) => (r.commission ? r.commission.amountCents - r.commission.deductedCents : null),
  failure_reason: (r) => r.payout.failureReason,
});
