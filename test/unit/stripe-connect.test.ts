/**
 * The rules of paying partners through Stripe Connect (services/processor/partner-payouts.ts), on Stripe's own
 * error objects (the library's generateV1Error, as its client raises them from an HTTP answer).
 */
import Stripe from "stripe";
import {
  accountState,
  payoutTransferGroup,
  partnerAccountIdempotencyKey,
  reportTime,
  reversalOf,
  transferRefusal,
  type ConnectedAccountFields,
} from "../../services/processor/partner-payouts";
import { stripeObject } from "../support/stripe-fixtures";

type RawError = Parameters<typeof Stripe.errors.generateV1Error>[0];
const stripeError = (statusCode: number, raw: { type: RawError["type"]; code?: string; message: string }) => Stripe.errors.generateV1Error({ ...raw, statusCode });

describe("accountState: ready means the transfers capability is active", () => {
  test.each<[(ConnectedAccountFields["capabilities"] & Record<string, string>) | null, boolean, boolean]>([
    [{ transfers: "active" }, true, true],
    [{ transfers: "inactive" }, true, false],
    [{ transfers: "pending" }, false, false],
    [{ card_payments: "active" }, true, false],
    [null, false, false],
  ])("capabilities %j, details submitted %s: ready %s", (capabilities, detailsSubmitted, ready) => {
    expect(accountState({ capabilities, details_submitted: detailsSubmitted })).toEqual({ ready, detailsSubmitted });
  });

  test("payouts_enabled alone is not ready (Stripe's fixture account: payouts enabled, transfers inactive)", () => {
    const account = { ...stripeObject("current", "account", { payouts_enabled: true, details_submitted: true }), capabilities: { transfers: "inactive" } };
    expect(accountState(account)).toEqual({ ready: false, detailsSubmitted: true });
    expect(accountState(stripeObject("current", "account", {}))).toEqual({ ready: true, detailsSubmitted: false });
  });
});

test("a read of an account is dated in whole seconds, like Stripe's events, so an event of the same second still applies", () => {
  expect(reportTime(new Date("2030-01-01T12:00:05.999Z"))).toEqual(new Date("2030-01-01T12:00:05.000Z"));
  expect(reportTime(new Date("2030-01-01T12:00:05.000Z"))).toEqual(new Date("2030-01-01T12:00:05.000Z"));
});

test("a payout's transfer group and idempotency key, and a partner account's idempotency key", () => {
  expect(payoutTransferGroup(42)).toBe("payout-42");
  expect(partnerAccountIdempotencyKey(7, 3)).toBe("partner-account-7-3");
});

describe("transferRefusal: what Stripe's answer means for the payout", () => {
  test("Stripe's refusals fail it with Stripe's code and message", () => {
    const balance = stripeError(400, { type: "invalid_request_error", code: "balance_insufficient", message: "You have insufficient funds in your Stripe account for this transfer." });
    expect(transferRefusal(balance, 1)).toEqual({ outcome: "failed", code: "balance_insufficient", reason: "You have insufficient funds in your Stripe account for this transfer." });
    const capability = stripeError(400, { type: "invalid_request_error", code: "insufficient_capabilities_for_transfer", message: "Your destination account needs..." });
    expect(transferRefusal(capability, 1)).toMatchObject({ outcome: "failed", code: "insufficient_capabilities_for_transfer" });
    const gone = stripeError(404, { type: "invalid_request_error", code: "resource_missing", message: "No such destination: 'acct_1'" });
    expect(transferRefusal(gone, 1)).toMatchObject({ outcome: "failed", code: "resource_missing", reason: "No such destination: 'acct_1'" });
    // No code: Stripe's error type stands for it; an idempotency key reused with other parameters is one of these.
    const reused = stripeError(400, { type: "idempotency_error", message: "Keys for idempotent requests can only be used with the same parameters" });
    expect(transferRefusal(reused, 1)).toMatchObject({ outcome: "failed", code: "idempotency_error" });
  });

  test("a refused key fails it with processor_key_invalid, telling the merchant what to fix", () => {
    for (const [status, type] of [
      [401, "invalid_request_error"],
      [403, "invalid_request_error"],
    ] as const) {
      const refusal = transferRefusal(stripeError(status, { type, message: "Invalid API Key provided: rk_test_****" }), 9);
      expect(refusal).toMatchObject({ outcome: "failed", code: "processor_key_invalid" });
      expect(refusal).toHaveProperty("reason", expect.stringContaining("program 9's restricted key: Invalid API Key provided"));
      expect(refusal).toHaveProperty("reason", expect.stringContaining("Settings → Stripe"));
    }
  });

  test("unreachable, 5xx, rate limited or a request with the key in flight: temporary (null, tried again)", () => {
    for (const err of [
      new Stripe.errors.StripeConnectionError({ message: "An error occurred with our connection to Stripe." }),
      stripeError(500, { type: "api_error", message: "An unknown error occurred" }),
      stripeError(503, { type: "api_error", message: "Service unavailable" }),
      stripeError(429, { type: "invalid_request_error", code: "rate_limit", message: "Too many requests" }),
      stripeError(409, { type: "idempotency_error", code: "idempotency_key_in_use", message: "There is currently another in-progress request using this Stripe-Idempotency-Key" }),
      new Error("socket hang up"),
    ]) {
      expect(transferRefusal(err, 1)).toBeNull();
    }
  });
});

describe("reversalOf: only a transfer reversed in full fails its payout", () => {
  const transfer = (amount: number, amountReversed: number | null) => ({ ...stripeObject("current", "transfer", { amount }), amount_reversed: amountReversed });
  test.each([
    [1100, 0, "none"],
    [1100, null, "none"],
    [1100, 1, "partial"],
    [1100, 1099, "partial"],
    [1100, 1100, "full"],
  ] as const)("amount %d, reversed %s: %s", (amount, reversed, expected) => {
    expect(reversalOf(transfer(amount, reversed) as { id: string; amount: number; amount_reversed: number | null })).toBe(expected);
  });
});
