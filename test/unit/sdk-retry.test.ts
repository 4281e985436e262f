/** The SDK's retry decisions and Retry-After parsing: pure functions, no clock. */
import { backoffDelayMs, decideRetry, DEFAULT_RETRY_POLICY, parseRetryAfter, resolveRetryPolicy, type RetryPolicy } from "../../sdk/src/retry";

const now = Date.parse("2026-11-23T10:00:00Z");

describe("parseRetryAfter", () => {
  test.each([
    ["0", 0],
    ["2", 2000],
    [" 120 ", 120_000],
  ])("delay-seconds %p -> %p ms", (value, ms) => expect(parseRetryAfter(value, now)).toBe(ms));

  test("an HTTP date (all three RFC 9110 shapes) is the time left until it", () => {
    expect(parseRetryAfter("Mon, 23 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Monday, 23-Nov-26 10:01:00 GMT", now)).toBe(60_000);
    // asctime has no zone and means GMT, whatever this machine's time zone is.
    expect(parseRetryAfter("Mon Nov 23 10:00:05 2026", now)).toBe(5000);
  });

  test("a date in the past is 0 (retry now)", () => {
    expect(parseRetryAfter("Mon, 23 Nov 2026 09:59:00 GMT", now)).toBe(0);
  });

  test.each([null, undefined, "", "soon", "-1", "1.5", "2026-11-23T10:00:30Z", "Mon, 99 Foo 2026 GMT"])("%p is not a Retry-After: null", (value) => {
    expect(parseRetryAfter(value as string | null | undefined, now)).toBeNull();
  });
});

describe("backoffDelayMs", () => {
  const policy = { baseDelayMs: 500, maxDelayMs: 3000 };
  test("doubles per retry up to the ceiling; full jitter scales it", () => {
    expect([1, 2, 3, 4, 10].map((retry) => backoffDelayMs(retry, policy, 0.999999))).toEqual([499, 999, 1999, 2999, 2999]);
    expect(backoffDelayMs(3, policy, 0.5)).toBe(1000);
    expect(backoffDelayMs(3, policy, 0)).toBe(0);
  });
});

describe("decideRetry", () => {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 5000 };
  const status = (s: number, retryAfterMs: number | null = null) => ({ kind: "status" as const, status: s, retryAfterMs });

  test("429 and 503 are retried, honouring Retry-After over backoff", () => {
    expect(decideRetry({ attempt: 1, failure: status(429, 2000), idempotent: false, policy, random: 0.5 })).toEqual({ retry: true, delayMs: 2000 });
    expect(decideRetry({ attempt: 1, failure: status(503, 0), idempotent: true, policy, random: 0.5 })).toEqual({ retry: true, delayMs: 0 });
    expect(decideRetry({ attempt: 2, failure: status(503), idempotent: true, policy, random: 0.5 })).toEqual({ retry: true, delayMs: 100 });
  });

  test("other statuses are final", () => {
    for (const s of [400, 401, 404, 409, 500, 502]) {
      expect(decideRetry({ attempt: 1, failure: status(s), idempotent: true, policy, random: 0.5 })).toEqual({ retry: false, why: "not_retryable" });
    }
  });

  test("network errors only for idempotent calls", () => {
    expect(decideRetry({ attempt: 1, failure: { kind: "network" }, idempotent: true, policy, random: 1 - 1e-9 })).toEqual({ retry: true, delayMs: 99 });
    expect(decideRetry({ attempt: 1, failure: { kind: "network" }, idempotent: false, policy, random: 0.5 })).toEqual({ retry: false, why: "not_retryable" });
  });

  test("attempts are bounded", () => {
    expect(decideRetry({ attempt: 3, failure: status(503, 0), idempotent: true, policy, random: 0.5 })).toEqual({ retry: false, why: "attempts_exhausted" });
  });

  test("a Retry-After beyond maxDelayMs is not waited for (the caller gets the error with retryAfterMs)", () => {
    expect(decideRetry({ attempt: 1, failure: status(429, 60_000), idempotent: true, policy, random: 0.5 })).toEqual({ retry: false, why: "retry_after_too_long" });
  });

  test("the policy is configurable and checked", () => {
    expect(resolveRetryPolicy(false).maxAttempts).toBe(1);
    expect(resolveRetryPolicy(undefined)).toEqual(DEFAULT_RETRY_POLICY);
    expect(resolveRetryPolicy({ maxAttempts: 5, retryStatuses: [503] })).toMatchObject({ maxAttempts: 5, retryStatuses: [503], baseDelayMs: 500 });
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => resolveRetryPolicy({ maxDelayMs: -1 })).toThrow(/maxDelayMs/);
    const only503 = resolveRetryPolicy({ retryStatuses: [503] });
    expect(decideRetry({ attempt: 1, failure: status(429, 0), idempotent: true, policy: only503, random: 0 })).toEqual({ retry: false, why: "not_retryable" });
  });
});
