/** The commissions and withdrawals exports' columns (docs/dashboard-api.md, "Exports (CSV)"): rows of the lists, money in minor units. */
import { csvDate, csvLayout } from "../../shared/csv-export";
import type { Jsonified } from "../../shared/dto";
import type { CommissionListItem } from "./list-views";
import type { CommissionWithRefunds, Withdrawal } from "./repository";

type CommissionFields =
  | "id"
  | "createdAt"
  | "kind"
  | "partnerId"
  | "saleId"
  | "transactionId"
  | "currency"
  | "saleAmountCents"
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
