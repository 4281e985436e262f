/**
 * The API answers in snake_case (spec 2.x); the SDK answers in camelCase,
 * with the SDK's own names where the input has them (`invoiceId`, `amount`).
 * Pure functions from a response body to a typed result.
 */
import { AffiliateApiError } from "./errors.js";

/** `sale_id` -> `saleId`; deeply, through arrays and plain objects. Keys already camelCase stay as they are. */
export function camelizeKeys(value: unknown): any {
  if (Array.isArray(value)) return value.map(camelizeKeys);
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = camelizeKeys(v);
  return out;
}

export interface TrackClickResult {
  /** Keep it in the `svc_click_id` cookie and send it as `clickId` with the lead. */
  clickId: string;
  id: number;
  test: boolean;
}

export interface TrackLeadResult {
  leadId: number;
  customerExternalId: string;
  /** False when the customer was already known (leads are first touch). */
  created: boolean;
  attributed: boolean;
  partnerId: number | null;
  test: boolean;
}

export interface TrackSaleRecorded {
  status: "recorded";
  saleId: number;
  invoiceId: string;
  /** Integer minor units, as sent. */
  amount: number;
  currency: string;
  test: boolean;
  attributed: boolean;
  partnerId: number | null;
  /** How the sale was attributed (for example `customer_key` or `click_id`), or null. */
  attributionMethod: string | null;
  commissionId: number | null;
  /** `pending` once created; `processing` while it is still being created; null without a commission. */
  commissionStatus: string | null;
}

export interface TrackSaleAlreadyRecorded {
  status: "already_recorded";
  invoiceId: string;
}

export type TrackSaleResult = TrackSaleRecorded | TrackSaleAlreadyRecorded;

export type TrackRefundResult =
  /** `deductionAmount` is in major units of the commission's currency (spec 2.2), e.g. 6 for 6.00 USD. */
  | { status: "refunded" | "reversed"; deductionAmount: number; commissionId: number }
  | { status: "skipped"; reason: string; commissionId: number }
  | { status: "no_commission"; message: string };

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

export function toClickResult(body: unknown): TrackClickResult {
  const b = camelizeKeys(body);
  return { clickId: b.clickId, id: b.id, test: b.test === true };
}

export function toLeadResult(body: unknown): TrackLeadResult {
  const b = camelizeKeys(body);
  return { leadId: b.leadId, customerExternalId: b.customerKey, created: b.created, attributed: b.attributed, partnerId: orNull(b.partnerId), test: b.test === true };
}

export function toSaleResult(body: unknown): TrackSaleRecorded {
  const b = camelizeKeys(body);
  return {
    status: "recorded",
    saleId: b.saleId,
    invoiceId: b.transactionId,
    amount: b.amountCents,
    currency: b.currency,
    test: b.test === true,
    attributed: b.attributed,
    partnerId: orNull(b.partnerId),
    attributionMethod: orNull(b.attributionMethod),
    commissionId: orNull(b.commissionId),
    commissionStatus: orNull(b.commissionStatus),
  };
}

export function toRefundResult(body: unknown): TrackRefundResult {
  const b = camelizeKeys(body);
  switch (b.status) {
    case "refunded":
    case "reversed":
      return { status: b.status, deductionAmount: b.deductionAmount, commissionId: b.commissionId };
    case "skipped":
      return { status: "skipped", reason: b.reason, commissionId: b.commissionId };
    case "no_commission":
      return { status: "no_commission", message: b.message };
    default:
      throw new AffiliateApiError(0, "unexpected_response", `Unexpected refund status '${String(b.status)}' in the API's answer.`);
  }
}
