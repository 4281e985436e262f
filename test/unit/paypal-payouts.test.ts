/**
 * The rules of paying partners through PayPal's Payouts API (services/processor/paypal.ts): amounts as PayPal's
 * decimal strings, the batch a run sends, what each item status means for a payout, what PayPal's answers mean for
 * the caller (try again, new token, credentials refused, refused for good), the batch named by a duplicate refusal,
 * the next page's path, and the token's life.
 */
import {
  canMakePayouts,
  clientIdHint,
  duplicateBatchIdOf,
  FAILED_STATUSES,
  itemOutcome,
  majorUnitsValue,
  nextPagePath,
  PAID_STATUSES,
  payoutIdOf,
  PENDING_STATUSES,
  paypalApiUrl,
  paypalBatchBody,
  paypalCredentialsState,
  paypalError,
  paypalFailure,
  tokenUsableUntil,
} from "../../services/processor/paypal";

describe("amounts", () => {
  test("minor units as major units with the currency's digits, exactly", () => {
    expect(majorUnitsValue(1250, "usd")).toBe("12.50");
    expect(majorUnitsValue(5, "eur")).toBe("0.05");
    expect(majorUnitsValue(0, "usd")).toBe("0.00");
    expect(majorUnitsValue(1250, "jpy")).toBe("1250");
    expect(majorUnitsValue(1250, "kwd")).toBe("1.250");
    // Beyond what a float divides exactly.
    expect(majorUnitsValue(9_007_199_254_740_991, "usd")).toBe("90071992547409.91");
  });

  test("anything but a non-negative safe integer is refused", () => {
    for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN]) expect(() => majorUnitsValue(bad, "usd")).toThrow(RangeError);
  });
});

describe("the batch of a run", () => {
  test("sender_batch_id run-<runId>, one EMAIL item per payout named payout-<id>, upper-case currency", () => {
    const body = paypalBatchBody(7, [
      { payoutId: 42, email: "jane@example.com", amountCents: 1999, currency: "usd" },
      { payoutId: 43, email: "joe@example.com", amountCents: 700, currency: "jpy" },
    ]);
    expect(body.sender_batch_header).toMatchObject({ sender_batch_id: "run-7" });
    expect(body.sender_batch_header.email_subject.length).toBeLessThanOrEqual(255);
    expect(body.items).toEqual([
      { recipient_type: "EMAIL", receiver: "jane@example.com", amount: { value: "19.99", currency: "USD" }, sender_item_id: "payout-42", note: "Commission payout payout-42" },
      { recipient_type: "EMAIL", receiver: "joe@example.com", amount: { value: "700", currency: "JPY" }, sender_item_id: "payout-43", note: "Commission payout payout-43" },
    ]);
  });

  test("a payout is known by its sender_item_id, and by nothing else", () => {
    expect(payoutIdOf("payout-42")).toBe(42);
    for (const other of ["payout-042", "payout-", "payout-0", "payout-1a", "item_1", "PAYOUT-1", 42, null, undefined, "payout-99999999999999999"]) expect(payoutIdOf(other)).toBeNull();
  });
});

describe("an item's status as the payout's outcome", () => {
  const item = (transaction_status: string, errors?: { name?: string; message?: string }) => ({
    payout_item_id: "5KUDKLF8SDC7S",
    transaction_status,
    payout_item: { sender_item_id: "payout-9" },
    ...(errors ? { errors } : {}),
  });

  test("SUCCESS is paid, with PayPal's item id", () => {
    expect(itemOutcome(item("SUCCESS"))).toEqual({ payoutId: 9, outcome: "paid", itemId: "5KUDKLF8SDC7S", code: null, reason: null });
  });

  test.each([...FAILED_STATUSES])("%s is failed, with PayPal's error name and message, or the status and what it means", (status) => {
    expect(itemOutcome(item(status, { name: "RECEIVER_UNREGISTERED", message: "Receiver is unregistered" }))).toEqual({
      payoutId: 9,
      outcome: "failed",
      itemId: "5KUDKLF8SDC7S",
      code: "RECEIVER_UNREGISTERED",
      reason: "Receiver is unregistered",
    });
    expect(itemOutcome(item(status))).toEqual({ payoutId: 9, outcome: "failed", itemId: "5KUDKLF8SDC7S", code: status, reason: expect.stringMatching(/^PayPal .+\.$/) });
  });

  test.each([...PENDING_STATUSES, "SOMETHING_NEW", ""])("%s is pending (an UNCLAIMED payout waits for its receiver, whatever the error says)", (status) => {
    expect(itemOutcome(item(status, { name: "RECEIVER_UNREGISTERED", message: "Receiver is unregistered" }))).toEqual({
      payoutId: 9,
      outcome: "pending",
      itemId: "5KUDKLF8SDC7S",
      code: null,
      reason: null,
    });
  });

  test("the statuses are told apart and cover PayPal's list", () => {
    const all = [...PAID_STATUSES, ...FAILED_STATUSES, ...PENDING_STATUSES];
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(["BLOCKED", "DENIED", "FAILED", "NEW", "ONHOLD", "PENDING", "REFUNDED", "RETURNED", "REVERSED", "SUCCESS", "UNCLAIMED"]);
  });

  test("an item that is not one of our payouts is left out; a lower-case status still counts", () => {
    expect(itemOutcome({ transaction_status: "SUCCESS", payout_item: { sender_item_id: "item_1" } })).toBeNull();
    expect(itemOutcome({ transaction_status: "SUCCESS" })).toBeNull();
    expect(itemOutcome({ transaction_status: "success", payout_item: { sender_item_id: "payout-3" } })).toMatchObject({ payoutId: 3, outcome: "paid", itemId: null });
  });
});

describe("PayPal's answers", () => {
  test("not reached, timed out, rate limited, in flight or 5xx: try again later", () => {
    for (const status of [null, 408, 409, 429, 500, 502, 503, 504]) expect(paypalFailure(status, {})).toBe("temporary");
  });

  test("an unknown or expired token: a new token; refused credentials or an app without the permission: credentials", () => {
    expect(paypalFailure(401, { error: "invalid_token", error_description: "Access Token not found in cache" })).toBe("token");
    expect(paypalFailure(401, { error: "invalid_client", error_description: "Client Authentication failed" })).toBe("credentials");
    expect(paypalFailure(400, { error: "invalid_client" })).toBe("credentials");
    expect(paypalFailure(403, { name: "NOT_AUTHORIZED", message: "Authorization failed due to insufficient permissions." })).toBe("credentials");
  });

  test("any other 4xx is PayPal's answer for good", () => {
    expect(paypalFailure(400, { name: "VALIDATION_ERROR" })).toBe("refused");
    expect(paypalFailure(422, { name: "INSUFFICIENT_FUNDS" })).toBe("refused");
    expect(paypalFailure(404, { name: "INVALID_RESOURCE_ID" })).toBe("refused");
  });

  test("PayPal's error name and message, from either of its shapes, with the fields its details name", () => {
    expect(paypalError(422, { name: "INSUFFICIENT_FUNDS", message: "Sender does not have sufficient funds.", debug_id: "a1" })).toEqual({
      name: "INSUFFICIENT_FUNDS",
      message: "Sender does not have sufficient funds.",
    });
    expect(
      paypalError(400, {
        name: "VALIDATION_ERROR",
        message: "Invalid request - see details.",
        details: [{ field: "items[0].receiver", location: "body", issue: "Receiver is invalid or does not match with type" }],
      }),
    ).toEqual({ name: "VALIDATION_ERROR", message: "Invalid request - see details. (items[0].receiver: Receiver is invalid or does not match with type)" });
    expect(paypalError(401, { error: "invalid_client", error_description: "Client Authentication failed" })).toEqual({ name: "invalid_client", message: "Client Authentication failed" });
    expect(paypalError(502, null)).toEqual({ name: "HTTP_502", message: "PayPal gave no message." });
    expect(paypalError(null, { message: "ECONNREFUSED" })).toEqual({ name: "UNREACHABLE", message: "ECONNREFUSED" });
  });

  test("a duplicate sender_batch_id names the batch PayPal has; any other refusal names none", () => {
    const duplicate = (href: string, field = "SENDER_BATCH_ID") => ({
      name: "USER_BUSINESS_ERROR",
      message: "User business error.",
      details: [{ field, location: "body", issue: "Batch with given sender_batch_id already exists", link: [{ href, rel: "self", method: "GET" }] }],
    });
    expect(duplicateBatchIdOf(duplicate("https://api-m.paypal.com/v1/payments/payouts/5VQZQTNN2YE5A"))).toBe("5VQZQTNN2YE5A");
    expect(duplicateBatchIdOf(duplicate("https://api-m.paypal.com/v1/payments/payouts/5VQZQTNN2YE5A", "sender_batch_id"))).toBe("5VQZQTNN2YE5A");
    expect(duplicateBatchIdOf(duplicate("https://api-m.paypal.com/v1/payments/payouts-item/5VQZQTNN2YE5A"))).toBeNull();
    expect(duplicateBatchIdOf(duplicate("https://api-m.paypal.com/v1/payments/payouts/5VQZQTNN2YE5A/cancel"))).toBeNull();
    expect(duplicateBatchIdOf(duplicate("https://api-m.paypal.com/v1/payments/payouts/5VQZQTNN2YE5A", "items[0].receiver"))).toBeNull();
    expect(duplicateBatchIdOf({ name: "VALIDATION_ERROR", details: [] })).toBeNull();
    expect(duplicateBatchIdOf(null)).toBeNull();
  });

  test("the next page: the path of the `next` link of the same batch, on our host; none on the last page", () => {
    const links = (next?: string) => [
      { href: "https://api-m.paypal.com/v1/payments/payouts/ABC?page_size=2&page=1", rel: "self", method: "GET" },
      ...(next ? [{ href: next, rel: "next", method: "GET" }] : []),
    ];
    expect(nextPagePath(links("https://api-m.paypal.com/v1/payments/payouts/ABC?page_size=2&page=2"), "ABC")).toBe("/v1/payments/payouts/ABC?page_size=2&page=2");
    expect(nextPagePath(links("https://elsewhere.example/v1/payments/payouts/ABC?page=2"), "ABC")).toBe("/v1/payments/payouts/ABC?page=2");
    expect(nextPagePath(links("https://api-m.paypal.com/v1/payments/payouts/OTHER?page=2"), "ABC")).toBeNull();
    expect(nextPagePath(links(), "ABC")).toBeNull();
    expect(nextPagePath(undefined, "ABC")).toBeNull();
  });
});

describe("credentials and tokens", () => {
  test("the API of each mode, or the override", () => {
    expect(paypalApiUrl("sandbox", null)).toBe("https://api-m.sandbox.paypal.com");
    expect(paypalApiUrl("live", null)).toBe("https://api-m.paypal.com");
    expect(paypalApiUrl("live", "http://127.0.0.1:4010/")).toBe("http://127.0.0.1:4010");
  });

  test("shown by mode and a hint of the client id; never the secret", () => {
    const setAt = new Date("2026-01-01T10:00:00Z");
    const state = paypalCredentialsState(3, { programId: 3, clientId: "AZDxjDScFpQtjWTOUtWKbyN", clientSecret: "EGnHDxD_secret", mode: "live", setAt, failedAt: null, failure: null });
    expect(state).toEqual({ programId: 3, configured: true, mode: "live", clientIdHint: "AZDx…KbyN", setAt: setAt.toISOString(), failedAt: null, failure: null });
    expect(JSON.stringify(state)).not.toContain("EGnHDxD_secret");
    expect(clientIdHint("AZDxjDScFpQtjWTOUtWKbyN")).toBe("AZDx…KbyN");
    expect(paypalCredentialsState(3, null)).toEqual({ programId: 3, configured: false, mode: null, clientIdHint: null, setAt: null, failedAt: null, failure: null });
  });

  test("a token may make payouts when its scope lists PayPal's payouts scope (or lists none)", () => {
    expect(canMakePayouts("openid https://uri.paypal.com/payments/payouts https://uri.paypal.com/services/invoicing")).toBe(true);
    expect(canMakePayouts("openid https://uri.paypal.com/services/invoicing")).toBe(false);
    expect(canMakePayouts(undefined)).toBe(true);
  });

  test("a token is used until five minutes before it expires (half its life when short)", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    expect(tokenUsableUntil(now, 32_400).getTime() - now.getTime()).toBe((32_400 - 300) * 1000);
    expect(tokenUsableUntil(now, 120).getTime() - now.getTime()).toBe(60_000);
    expect(tokenUsableUntil(now, NaN).getTime()).toBe(now.getTime());
  });
});
