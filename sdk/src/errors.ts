/**
 * The SDK's two error types. Both carry a stable `code` to branch on; the
 * message is for people.
 */

/**
 * A call that did not succeed: an error answered by the API (`status` is the
 * HTTP status, `code` the API's stable code such as `unauthorized` or
 * `invalid_request`), or no usable answer (`status` 0, `code` `network_error`,
 * `timeout` or `unexpected_response`).
 */
export class AffiliateApiError extends Error {
  override readonly name = "AffiliateApiError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: {
      /** Attempts made, retries included. */
      attempts?: number;
      /** The server's `Retry-After` in ms, when it sent one (429, 503) and it was not waited for. */
      retryAfterMs?: number | null;
      /** The server's `X-Request-Id`: quote it when reporting a problem. */
      requestId?: string | null;
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }

  get attempts(): number {
    return this.details.attempts ?? 1;
  }

  get retryAfterMs(): number | null {
    return this.details.retryAfterMs ?? null;
  }

  get requestId(): string | null {
    return this.details.requestId ?? null;
  }
}

export type WebhookVerificationErrorCode =
  /** No `Svc-Signature` header. */
  | "missing_signature"
  /** The header is not `t=<unix seconds>,v1=<64 hex>[,v1=...]`. */
  | "malformed_signature"
  /** `t` is further from your clock than the tolerance: a replay, or a clock off by minutes. */
  | "timestamp_out_of_window"
  /** No `v1` matches: another secret, or the body was changed (or re-serialised) on the way. */
  | "signature_mismatch"
  /** Signed correctly, but the body is not a JSON webhook event. */
  | "invalid_payload";

/** `verifyWebhook` refused a delivery: answer it with 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";

  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}
