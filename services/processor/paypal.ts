/**
 * Paying partners through PayPal's Payouts API (docs/payouts.md, "PayPal"): the rules, without I/O. Where PayPal's
 * API is for a mode, how a program's credentials are shown, the batch a run sends (named `run-<runId>`, its items
 * `payout-<payoutId>`, so a retry is recognised by PayPal and an item by us), what PayPal's item statuses mean for
 * a payout, and what PayPal's answers mean for the caller. The calls are in ./paypal-api.ts.
 */
import { currencyExponent } from "../../shared/domain/money";
import type { PaypalCredentialsState, PaypalPayoutItemResult } from "./contract";
import type { PaypalCredentials, PaypalMode } from "./repository";

/** PayPal's REST API of each mode; `PAYPAL_API_URL` replaces both (the tests' local double). */
export const PAYPAL_API_URLS: Record<PaypalMode, string> = { sandbox: "https://api-m.sandbox.paypal.com", live: "https://api-m.paypal.com" };

export const paypalApiUrl = (mode: PaypalMode, override: string | null) => (override ?? PAYPAL_API_URLS[mode]).replace(/\/+$/, "");

/** The scope PayPal grants an app's token when the app has Payouts enabled. */
export const PAYOUTS_SCOPE = "https://uri.paypal.com/payments/payouts";

/** `AZDx…Kq3w`: enough to tell apps apart, never the whole id. The secret is never shown at all. */
export const clientIdHint = (clientId: string) => `${clientId.slice(0, 4)}…${clientId.slice(-4)}`;

export function paypalCredentialsState(programId: number, credentials: PaypalCredentials | null): PaypalCredentialsState {
  return {
    programId,
    configured: credentials !== null,
    mode: credentials?.mode ?? null,
    clientIdHint: credentials ? clientIdHint(credentials.clientId) : null,
    setAt: credentials ? credentials.setAt.toISOString() : null,
    failedAt: credentials?.failedAt ? credentials.failedAt.toISOString() : null,
    failure: credentials?.failure ?? null,
  };
}

/** The run's batch at PayPal: its sender_batch_id and its PayPal-Request-Id (PayPal answers a repeat with the first answer). */
export const senderBatchId = (runId: number) => `run-${runId}`;

/** A payout's item in the batch: the reference it carries everywhere (the PayPal file, the bank file, Stripe's transfer group). */
export const senderItemId = (payoutId: number) => `payout-${payoutId}`;

/** The payout an item of our batch pays, from its sender_item_id; null for anything else. */
export function payoutIdOf(itemId: unknown): number | null {
  const match = typeof itemId === "string" ? /^payout-([1-9][0-9]{0,15})$/.exec(itemId) : null;
  const id = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(id) ? id : null;
}

/** Minor units as PayPal's amount value: major units with the currency's digits, exact (1250 usd -> "12.50", 1250 jpy -> "1250"). */
export function majorUnitsValue(amountCents: number, currency: string): string {
  if (!Number.isSafeInteger(amountCents) || amountCents < 0) throw new RangeError(`amount must be a non-negative safe integer of minor units, got ${amountCents}`);
  const digits = currencyExponent(currency);
  if (digits === 0) return String(amountCents);
  const text = String(amountCents).padStart(digits + 1, "0");
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

export interface PaypalPayoutItemInput {
  payoutId: number;
  email: string;
  amountCents: number;
  /** Lower-case ISO 4217, as everywhere in the system. */
  currency: string;
}

/** The body of POST /v1/payments/payouts for a run's PayPal payouts. */
export function paypalBatchBody(runId: number, items: readonly PaypalPayoutItemInput[]) {
  return {
    sender_batch_header: {
      sender_batch_id: senderBatchId(runId),
      email_subject: "You have a commission payout",
      email_message: "Your commission payout was sent to your PayPal account. The partner portal lists the commissions it pays.",
    },
    items: items.map((item) => ({
      recipient_type: "EMAIL",
      receiver: item.email,
      amount: { value: majorUnitsValue(item.amountCents, item.currency), currency: item.currency.toUpperCase() },
      sender_item_id: senderItemId(item.payoutId),
      note: `Commission payout ${senderItemId(item.payoutId)}`,
    })),
  };
}

/** PayPal's item statuses (transaction_status) and what each means for the payout. */
export const PAID_STATUSES = ["SUCCESS"] as const;
export const FAILED_STATUSES = ["FAILED", "RETURNED", "BLOCKED", "REFUNDED", "REVERSED", "DENIED"] as const;
/** Still on its way: UNCLAIMED waits for the receiver to claim it (PayPal returns it after 30 days: RETURNED). */
export const PENDING_STATUSES = ["PENDING", "UNCLAIMED", "ONHOLD", "NEW"] as const;

/** What a failed status means, for a person, when PayPal gives no error of its own. */
const FAILED_REASONS: Record<(typeof FAILED_STATUSES)[number], string> = {
  FAILED: "PayPal could not send the payout.",
  RETURNED: "PayPal returned the payout: the receiver did not claim it within 30 days, or could not receive it.",
  BLOCKED: "PayPal blocked the payout.",
  REFUNDED: "PayPal refunded the payout to the sender.",
  REVERSED: "PayPal reversed the payout.",
  DENIED: "PayPal denied the payout.",
};

/** The fields of a batch item of GET /v1/payments/payouts/{id} that we read. */
export interface PaypalBatchItemFields {
  payout_item_id?: unknown;
  transaction_status?: unknown;
  payout_item?: { sender_item_id?: unknown } | null;
  errors?: { name?: unknown; message?: unknown } | null;
}

const text = (value: unknown, max = 500) => (typeof value === "string" && value.trim() ? value.trim().slice(0, max) : null);

/**
 * A payout's outcome from its item: SUCCESS paid; FAILED, RETURNED, BLOCKED, REFUNDED, REVERSED, DENIED failed
 * with PayPal's error name and message (or the status); every other status (PENDING, UNCLAIMED, ONHOLD, NEW, or
 * one PayPal adds later) pending. Null for an item that is not one of our payouts.
 */
export function itemOutcome(item: PaypalBatchItemFields): PaypalPayoutItemResult | null {
  const payoutId = payoutIdOf(item.payout_item?.sender_item_id);
  if (payoutId === null) return null;
  const status = typeof item.transaction_status === "string" ? item.transaction_status.toUpperCase() : "";
  const itemId = text(item.payout_item_id, 64);
  if ((PAID_STATUSES as readonly string[]).includes(status)) return { payoutId, outcome: "paid", itemId, code: null, reason: null };
  if ((FAILED_STATUSES as readonly string[]).includes(status)) {
    const reason = text(item.errors?.message) ?? FAILED_REASONS[status as (typeof FAILED_STATUSES)[number]];
    return { payoutId, outcome: "failed", itemId, code: text(item.errors?.name, 100) ?? status, reason };
  }
  return { payoutId, outcome: "pending", itemId, code: null, reason: null };
}

/**
 * What a PayPal answer means for the caller: `token` (the access token expired or is unknown: get a new one and
 * try once more), `credentials` (PayPal refuses the client id and secret, or the app may not make payouts),
 * `temporary` (not reached, timed out, rate limited, a 5xx, or a request with the same id still in flight: try
 * again later, nothing is known to have happened), `refused` (any other 4xx: PayPal's answer for good).
 */
export type PaypalFailure = "token" | "credentials" | "temporary" | "refused";

export function paypalFailure(status: number | null, body: unknown): PaypalFailure {
  if (status === null || status === 408 || status === 409 || status === 429 || status >= 500) return "temporary";
  const b = (body ?? {}) as { error?: unknown };
  if (status === 401 && b.error === "invalid_token") return "token";
  if (status === 401 || status === 403 || b.error === "invalid_client") return "credentials";
  return "refused";
}

/** PayPal's error name and message, from its REST shape ({ name, message, details }) or its OAuth shape ({ error, error_description }). */
export function paypalError(status: number | null, body: unknown): { name: string; message: string } {
  const b = (body ?? {}) as { name?: unknown; message?: unknown; error?: unknown; error_description?: unknown; details?: unknown };
  const name = text(b.name, 100) ?? text(b.error, 100) ?? (status === null ? "UNREACHABLE" : `HTTP_${status}`);
  const issues = Array.isArray(b.details)
    ? b.details
        .map((d: { field?: unknown; issue?: unknown; description?: unknown }) => [text(d?.field, 100), text(d?.issue, 200) ?? text(d?.description, 200)].filter(Boolean).join(": "))
        .filter(Boolean)
    : [];
  const message = text(b.message) ?? text(b.error_description) ?? "PayPal gave no message.";
  return { name, message: issues.length ? `${message} (${issues.join("; ")})`.slice(0, 500) : message };
}

/** A PayPal HATEOAS link. */
interface Link {
  href?: unknown;
  rel?: unknown;
}

/** The batch id of the link in a path like /v1/payments/payouts/<id>, or null. */
function batchIdOfLink(href: unknown): string | null {
  if (typeof href !== "string" || !URL.canParse(href, "http://paypal.invalid")) return null;
  const match = /^\/v1\/payments\/payouts\/([A-Za-z0-9]{1,64})$/.exec(new URL(href, "http://paypal.invalid").pathname);
  return match ? match[1] : null;
}

/**
 * The batch PayPal already has for the sender_batch_id, from its refusal of a duplicate (400 USER_BUSINESS_ERROR
 * naming SENDER_BATCH_ID, with a link to the original batch); null for any other answer. PayPal makes a batch at
 * most once per sender_batch_id within 30 days, so this is the run's batch.
 */
export function duplicateBatchIdOf(body: unknown): string | null {
  const b = (body ?? {}) as { name?: unknown; details?: unknown };
  if (b.name !== "USER_BUSINESS_ERROR" || !Array.isArray(b.details)) return null;
  for (const detail of b.details as Array<{ field?: unknown; link?: unknown; links?: unknown }>) {
    if (typeof detail?.field !== "string" || detail.field.toUpperCase() !== "SENDER_BATCH_ID") continue;
    const links = [detail.link, detail.links].flatMap((l) => (Array.isArray(l) ? (l as Link[]) : []));
    for (const link of links) {
      const id = batchIdOfLink(link?.href);
      if (id) return id;
    }
  }
  return null;
}

/**
 * The path and query of the next page of a batch's items (its `next` link), or null on the last page. Only the
 * path is taken: the next request goes to the same PayPal host as the first, whatever host the link names.
 */
export function nextPagePath(links: unknown, batchId: string): string | null {
  if (!Array.isArray(links)) return null;
  const next = (links as Link[]).find((l) => l?.rel === "next");
  if (typeof next?.href !== "string" || batchIdOfLink(next.href) !== batchId) return null;
  const url = new URL(next.href, "http://paypal.invalid");
  return `${url.pathname}${url.search}`;
}

/** Whether a token's scope lets the app make payouts; a token without a scope list is taken at its word. */
export const canMakePayouts = (scope: unknown) => typeof scope !== "string" || scope.split(/\s+/).includes(PAYOUTS_SCOPE);

/** Until when a token is used: shortly before it expires (5 minutes, or half its life for a short one). */
export function tokenUsableUntil(now: Date, expiresInSeconds: number): Date {
  const life = Number.isFinite(expiresInSeconds) && expiresInSeconds > 0 ? expiresInSeconds : 0;
  return new Date(now.getTime() + Math.max(life / 2, life - 300) * 1000);
}
