/**
 * The API answers in snake_case (spec 2.x); the SDK answers in camelCase,
 * with the SDK's own names where the input has them (`invoiceId`, `amount`).
 * Pure functions from a response body to a typed result.
 */
import { AffiliateApiError } from "./errors.js";

/** `sale_id` -> `saleId`; deeply, through arrays and plain objects. Keys already camelCase stay as they are. */
export function camelizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelizeKeys);
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = camelizeKeys(v);
  return out;
}

/** What a partner's group gives the customers it refers (a double-sided reward), for your checkout to apply. */
export interface ReferredDiscount {
  /** `stripe`: a coupon (Checkout's `discounts: [{ coupon: id }]`); `paddle`: a discount (Paddle.js's `discountId`). */
  platform: "stripe" | "paddle";
  id: string;
  /** A code the customer could type instead, or null. */
  code: string | null;
  /** In plain words, to show the visitor. */
  description: string;
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
  /** Integer minor units of the program's currency: as sent, or converted when the sale was in another currency. */
  amount: number;
  currency: string;
  /** A sale in another currency than the program's: what was paid and the rate it was converted at; null otherwise. */
  conversion: SaleConversion | null;
  test: boolean;
  attributed: boolean;
  partnerId: number | null;
  /** How the sale was attributed (for example `customer_key` or `click_id`), or null. */
  attributionMethod: string | null;
  commissionId: number | null;
  /** `pending` once created; `processing` while it is still being created; null without a commission. */
  commissionStatus: string | null;
}

/** How a sale in another currency was converted into the program's (docs/currencies.md). */
export interface SaleConversion {
  /** What was paid, in minor units of `originalCurrency`: refunds of the sale are in these. */
  originalAmount: number;
  originalCurrency: string;
  /** Units of the program's currency per unit of the original, as a decimal text. */
  rate: string;
  /** `processor`, `ecb` or `manual`. */
  source: string;
  /** YYYY-MM-DD. */
  rateDay: string;
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

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const unexpected = (message: string) => new AffiliateApiError(0, "unexpected_response", message);

/** The answer's fields, camelCase; an answer that is not a JSON object is not one of the API's. */
function fieldsOf(body: unknown): Record<string, unknown> {
  const b = camelizeKeys(body);
  if (!isJsonObject(b)) throw unexpected("The API's answer is not a JSON object.");
  return b;
}

/** The value of a field the result needs, of the type the API documents; anything else is an unexpected answer. */
function field<T>(b: Record<string, unknown>, key: string, what: string, is: (v: unknown) => v is T): T {
  const value = b[key];
  if (!is(value)) throw unexpected(`Expected ${what} for '${key}' in the API's answer, got ${value === undefined ? "nothing" : JSON.stringify(value)}.`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === "string";
const isNumber = (v: unknown): v is number => typeof v === "number";
const isBoolean = (v: unknown): v is boolean => typeof v === "boolean";
const string = (b: Record<string, unknown>, key: string) => field(b, key, "a string", isString);
const number = (b: Record<string, unknown>, key: string) => field(b, key, "a number", isNumber);
const boolean = (b: Record<string, unknown>, key: string) => field(b, key, "true or false", isBoolean);
/** A field that may be null or left out (both read as null). */
const orNull = <T>(b: Record<string, unknown>, key: string, what: string, is: (v: unknown) => v is T): T | null =>
  field(b, key, `${what} or null`, (v: unknown): v is T | null | undefined => v === null || v === undefined || is(v)) ?? null;

export function toClickResult(body: unknown): TrackClickResult {
  const b = fieldsOf(body);
  return { clickId: string(b, "clickId"), id: number(b, "id"), test: b.test === true };
}

export function toLeadResult(body: unknown): TrackLeadResult {
  const b = fieldsOf(body);
  return {
    leadId: number(b, "leadId"),
    customerExternalId: string(b, "customerKey"),
    created: boolean(b, "created"),
    attributed: boolean(b, "attributed"),
    partnerId: orNull(b, "partnerId", "a number", isNumber),
    test: b.test === true,
  };
}

export function toSaleResult(body: unknown): TrackSaleRecorded {
  const b = fieldsOf(body);
  return {
    status: "recorded",
    saleId: number(b, "saleId"),
    invoiceId: string(b, "transactionId"),
    amount: number(b, "amountCents"),
    currency: string(b, "currency"),
    conversion: conversionOf(b.conversion),
    test: b.test === true,
    attributed: boolean(b, "attributed"),
    partnerId: orNull(b, "partnerId", "a number", isNumber),
    attributionMethod: orNull(b, "attributionMethod", "a string", isString),
    commissionId: orNull(b, "commissionId", "a number", isNumber),
    commissionStatus: orNull(b, "commissionStatus", "a string", isString),
  };
}

function conversionOf(value: unknown): SaleConversion | null {
  if (value === null || value === undefined) return null;
  const c = fieldsOf(value);
  return {
    originalAmount: number(c, "originalAmountCents"),
    originalCurrency: string(c, "originalCurrency"),
    rate: string(c, "rate"),
    source: string(c, "source"),
    rateDay: string(c, "rateDay"),
  };
}

export function toRefundResult(body: unknown): TrackRefundResult {
  const b = fieldsOf(body);
  switch (b.status) {
    case "refunded":
    case "reversed":
      return { status: b.status, deductionAmount: number(b, "deductionAmount"), commissionId: number(b, "commissionId") };
    case "skipped":
      return { status: "skipped", reason: string(b, "reason"), commissionId: number(b, "commissionId") };
    case "no_commission":
      return { status: "no_commission", message: string(b, "message") };
    default:
      throw new AffiliateApiError(0, "unexpected_response", `Unexpected refund status '${String(b.status)}' in the API's answer.`);
  }
}
