import { Errors } from "moleculer";

/**
 * The one error vocabulary of the system. Every error a caller can see has a
 * stable `code`; the gateway maps it once to an HTTP status and envelope.
 *
 * Errors travel between nodes as Moleculer errors: the stable code rides in
 * `type` (which Moleculer serialises and restores on every transporter), so a
 * remote caller can map the error without knowing our classes.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, envelope: "platform" },
  invalid_signature: { status: 400, envelope: "platform" },
  // A program's own Stripe webhook endpoint called before its signing secret was entered (docs/processor-webhooks.md).
  webhook_secret_missing: { status: 400, envelope: "platform" },
  // An event at a program's own webhook endpoint from a Stripe account that is not the program's linked one.
  processor_account_mismatch: { status: 400, envelope: "platform" },
  unauthorized: { status: 401, envelope: "platform" },
  // An embed token (docs/embedded-referrals.md) that was never issued, or whose 10 minutes are over: the merchant's
  // page asks its server for a new one (a reload does).
  embed_token_invalid: { status: 401, envelope: "platform" },
  embed_token_expired: { status: 401, envelope: "platform" },
  forbidden: { status: 403, envelope: "platform" },
  // An API key without the scope a request needs (docs/api.md, "Scopes"); the message and `scope` name it.
  insufficient_scope: { status: 403, envelope: "platform" },
  // A write with a session cookie from another site's page (docs/security.md, "Same-origin writes").
  cross_origin_write: { status: 403, envelope: "platform" },
  not_found: { status: 404, envelope: "platform" },
  method_not_allowed: { status: 405, envelope: "platform" },
  conflict: { status: 409, envelope: "platform" },
  already_recorded: { status: 409, envelope: "platform" },
  // A partner's application to a program (docs/dashboard-api.md, "Applications"): the program takes none now,
  // this email has an application waiting for the merchant's decision, or is already an approved or pending partner.
  applications_closed: { status: 409, envelope: "platform" },
  application_exists: { status: 409, envelope: "platform" },
  already_enrolled: { status: 409, envelope: "platform" },
  // A payout run confirmed with the preview's total after balances changed (docs/payouts.md, "Payout runs").
  payout_preview_changed: { status: 409, envelope: "platform" },
  // A coupon code (or Stripe promotion code) already live in the program, or taken at Stripe (docs/processor-webhooks.md).
  coupon_code_taken: { status: 409, envelope: "platform" },
  payload_too_large: { status: 413, envelope: "platform" },
  // An Idempotency-Key sent again with another request than its first (docs/api.md, "Idempotency").
  idempotency_key_reused: { status: 422, envelope: "platform" },
  // A reward's flat amount in another currency than its program pays commissions in (docs/rewards.md).
  currency_mismatch: { status: 422, envelope: "platform" },
  // A reward naming a product or price the program's processor account does not have (docs/rewards.md).
  unknown_product: { status: 422, envelope: "platform" },
  // A promotion code or coupon the program's Stripe account does not have (coupon codes, docs/processor-webhooks.md).
  unknown_promotion_code: { status: 422, envelope: "platform" },
  unknown_coupon: { status: 422, envelope: "platform" },
  // Something only an approved partner of the program may have (a coupon code) asked for a pending or declined one.
  partner_not_approved: { status: 422, envelope: "platform" },
  // Product ids need the program's restricted Stripe key to be checked; none is set (docs/rewards.md).
  processor_key_missing: { status: 409, envelope: "platform" },
  // Stripe refused the restricted key given for a program (revoked, another account, a permission missing).
  processor_key_refused: { status: 422, envelope: "platform" },
  // PayPal refused a program's API credentials, or their app may not make payouts (docs/payouts.md, "PayPal").
  paypal_credentials_refused: { status: 422, envelope: "platform" },
  // A webhook URL whose host is, or resolves to, a loopback, private or other non-public address (docs/security.md).
  webhook_target_not_allowed: { status: 422, envelope: "platform" },
  // A partner with as many postbacks in a program as one may have (docs/partners.md, "Postbacks").
  postback_limit_reached: { status: 409, envelope: "platform" },
  // A workspace invitation's token that is unknown, used, revoked (or replaced) or expired (docs/merchants.md, "Team").
  invitation_invalid: { status: 410, envelope: "platform" },
  unsupported_media_type: { status: 415, envelope: "platform" },
  internal_error: { status: 500, envelope: "platform" },
  service_unavailable: { status: 503, envelope: "platform" },
  // A sale in another currency than its program's, with no reference rate for its day (docs/currencies.md):
  // temporary until the day's rates are published or loaded; answered with Retry-After (EXCHANGE_RATE_RETRY_AFTER_SECONDS).
  exchange_rate_unavailable: { status: 503, envelope: "platform" },
  // The spec gives retired keys and rate limiting the "typed" envelope.
  api_key_retired: { status: 401, envelope: "typed", type: "authentication_error" },
  rate_limit_exceeded: { status: 429, envelope: "typed", type: "rate_limit_error" },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

export class AppError extends Errors.MoleculerError {
  readonly errorCode: ErrorCode;

  constructor(errorCode: ErrorCode, message: string, data?: Record<string, unknown>) {
    super(message, ERROR_CODES[errorCode].status, errorCode, data);
    this.errorCode = errorCode;
    // A client error must not be retried by the broker's retry policy.
    this.retryable = errorCode === "service_unavailable";
  }
}

export class InvalidRequestError extends AppError {
  constructor(message: string, data?: Record<string, unknown>) {
    super("invalid_request", message, data);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "Missing or invalid API key. Send 'Authorization: Bearer <API_KEY>'.") {
    super("unauthorized", message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super("forbidden", message);
  }
}

export class InsufficientScopeError extends AppError {
  constructor(scope: string) {
    super("insufficient_scope", `This API key lacks the '${scope}' scope this request needs: use a key that has it (Settings, API keys).`, { scope });
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super("not_found", message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, data?: Record<string, unknown>) {
    super("conflict", message, data);
  }
}

export class AlreadyRecordedError extends AppError {
  constructor(message: string, data?: Record<string, unknown>) {
    super("already_recorded", message, data);
  }
}

export class CurrencyMismatchError extends AppError {
  constructor(message: string, data?: Record<string, unknown>) {
    super("currency_mismatch", message, data);
  }
}

export class UnknownProductError extends AppError {
  constructor(message: string, data?: Record<string, unknown>) {
    super("unknown_product", message, data);
  }
}

export class ApiKeyRetiredError extends AppError {
  constructor() {
    super("api_key_retired", "This API key has been retired. Create a new key for the program and use it instead.");
  }
}

export class RateLimitError extends AppError {
  /**
   * `limited` names what was limited (the API key, the sign-in of an email, a client address...); `limit`, the
   * requests its window allows, where a client may plan by it (an API key: the answer's RateLimit headers).
   */
  constructor(retryAfterSeconds: number, limited = "Too many requests for this API key", limit?: number) {
    super("rate_limit_exceeded", `${limited}. Retry after ${retryAfterSeconds} s.`, limit === undefined ? { retryAfterSeconds } : { retryAfterSeconds, limit });
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message: string) {
    super("service_unavailable", message);
  }
}

/**
 * Retry-After of exchange_rate_unavailable: an hour. The missing rates come with the next publication (the ECB's, on
 * business days around 16:00 CET, fetched within EXCHANGE_RATE_REFRESH_MINUTES) or an operator's load, not within
 * seconds, so an hour spares the caller pointless retries while still recording the sale the same day.
 */
export const EXCHANGE_RATE_RETRY_AFTER_SECONDS = 3600;

export class ExchangeRateUnavailableError extends AppError {
  /** No reference rate from `from` to `to` (lower-case codes) for a sale of `day` within `maxAgeDays` before it. */
  constructor(from: string, to: string, day: string, maxAgeDays: number) {
    super(
      "exchange_rate_unavailable",
      `No exchange rate from ${from.toUpperCase()} to ${to.toUpperCase()} for ${day}: no reference rates were published on that day or in the ${maxAgeDays} days before it. ` +
        `Retry in ${EXCHANGE_RATE_RETRY_AFTER_SECONDS / 60} minutes, when newer rates may be in, or ask the operator to load rates for ${day}.`,
      { from, to, day, maxAgeDays, retryAfterSeconds: EXCHANGE_RATE_RETRY_AFTER_SECONDS },
    );
  }
}

/**
 * An error as one item of a batched answer carries it (attribution.trackClicks answers each click on its own):
 * its type (one of our codes, or Moleculer's for plumbing such as SERVICE_NOT_FOUND), message and data.
 */
export interface ForwardedError {
  type: string | null;
  message: string;
  data?: Record<string, unknown>;
}

export function toForwardedError(err: unknown): ForwardedError {
  const e = err as { type?: unknown; message?: unknown; data?: unknown } | null;
  return {
    type: typeof e?.type === "string" ? e.type : null,
    message: typeof e?.message === "string" ? e.message : "",
    data: e?.data && typeof e.data === "object" ? (e.data as Record<string, unknown>) : undefined,
  };
}

/** The error again, as the caller would have caught it from a call of its own (so the gateway maps it the same way). */
export function fromForwardedError(forwarded: ForwardedError): Error {
  if (isErrorCode(forwarded.type)) return new AppError(forwarded.type, forwarded.message, forwarded.data);
  return new Errors.MoleculerError(forwarded.message, 500, forwarded.type ?? "INTERNAL_ERROR", forwarded.data);
}

/** What a caller sees of any error: the stable code, the status and a safe message. */
export interface PublicError {
  status: number;
  code: ErrorCode;
  message: string;
  envelope: "platform" | "typed";
  type?: string;
  data?: Record<string, unknown>;
}

/**
 * Reduces any thrown value to its public form. Unknown errors become
 * `internal_error` with a generic message so no internals leak.
 */
export function toPublicError(err: unknown): PublicError {
  const e = err as { type?: unknown; message?: unknown; data?: unknown } | null;
  if (e && isErrorCode(e.type)) {
    const spec = ERROR_CODES[e.type];
    return {
      status: spec.status,
      code: e.type,
      message: typeof e.message === "string" ? e.message : e.type,
      envelope: spec.envelope,
      type: "type" in spec ? spec.type : undefined,
      data: e.data && typeof e.data === "object" ? (e.data as Record<string, unknown>) : undefined,
    };
  }
  return {
    status: 500,
    code: "internal_error",
    message: "An internal error occurred. Retry later; if it persists, contact support.",
    envelope: "platform",
  };
}

/** The two HTTP envelopes of the spec (section 7). */
export function toEnvelope(pub: PublicError): Record<string, unknown> {
  if (pub.envelope === "typed") {
    return { error: { type: pub.type, code: pub.code, message: pub.message } };
  }
  return { success: false, error: { code: pub.code, message: pub.message } };
}
