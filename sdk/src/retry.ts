/**
 * When to try a request again, and after how long. Pure functions: the client
 * does the waiting, these only decide (so they are unit-tested without clocks).
 */

export interface RetryPolicy {
  /** Attempts in all, the first one included (1 = never retry). Default 3. */
  maxAttempts: number;
  /** Backoff of the first retry when the server gives no `Retry-After`; doubles per retry. Default 500 ms. */
  baseDelayMs: number;
  /** Ceiling of one wait. A `Retry-After` longer than this is not waited for: the error is thrown with `retryAfterMs`. Default 20 s. */
  maxDelayMs: number;
  /** HTTP statuses that are retried. Default 429 and 503: the server says "not now", and did nothing. */
  retryStatuses: readonly number[];
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  retryStatuses: Object.freeze([429, 503]) as readonly number[],
});

/** The policy from the client's `retry` option: `false` turns retries off, an object overrides the defaults. */
export function resolveRetryPolicy(option: Partial<RetryPolicy> | false | undefined): RetryPolicy {
  if (option === false) return { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 };
  const policy = { ...DEFAULT_RETRY_POLICY, ...option };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) throw new TypeError("retry.maxAttempts must be an integer >= 1");
  for (const key of ["baseDelayMs", "maxDelayMs"] as const) {
    if (!Number.isFinite(policy[key]) || policy[key] < 0) throw new TypeError(`retry.${key} must be a number >= 0`);
  }
  return policy;
}

/**
 * `Retry-After` in milliseconds from `nowMs`: either delay-seconds (`120`) or
 * an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`; a date in the past is 0).
 * Anything else, or no header, is null (the caller falls back to backoff).
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number | null {
  if (value == null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the three HTTP date shapes (all start with a day name): Date.parse accepts much more.
  if (!/^[A-Za-z]{3,9},? /.test(text)) return null;
  // asctime ("Sun Nov  6 08:49:37 1994") has no zone and means GMT; Date.parse would read it as local time.
  const at = Date.parse(/(GMT|UTC|Z)$/i.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/** Exponential backoff with full jitter: random in [0, min(max, base * 2^(retry-1))]. `random` is in [0, 1). */
export function backoffDelayMs(retry: number, policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(ceiling * random);
}

/** What went wrong with one attempt. */
export type AttemptFailure = { kind: "status"; status: number; retryAfterMs: number | null } | { kind: "network" };

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; why: "attempts_exhausted" | "not_retryable" | "retry_after_too_long" };

/**
 * Whether attempt number `attempt` (1-based) that failed with `failure` is
 * tried again. Retried: a status of `policy.retryStatuses` on any call, and a
 * network error (no answer, or a timeout) only on an idempotent call, since
 * the server may have done the work before the connection broke. The wait is
 * the server's `Retry-After` when it sent one, else backoff.
 */
export function decideRetry(input: { attempt: number; failure: AttemptFailure; idempotent: boolean; policy: RetryPolicy; random: number }): RetryDecision {
  const { attempt, failure, idempotent, policy, random } = input;
  const retryable = failure.kind === "network" ? idempotent : policy.retryStatuses.includes(failure.status);
  if (!retryable) return { retry: false, why: "not_retryable" };
  if (attempt >= policy.maxAttempts) return { retry: false, why: "attempts_exhausted" };
  if (failure.kind === "status" && failure.retryAfterMs !== null) {
    if (failure.retryAfterMs > policy.maxDelayMs) return { retry: false, why: "retry_after_too_long" };
    return { retry: true, delayMs: failure.retryAfterMs };
  }
  return { retry: true, delayMs: backoffDelayMs(attempt, policy, random) };
}
