/**
 * Paying partners through Stripe Connect (docs/payouts.md, "Stripe Connect (Express)"): the rules, without I/O.
 * When a partner's Express account is ready, how a payout's transfer is named at Stripe (so a retry finds it and
 * never makes a second one), what Stripe's refusals mean for the payout, and what a reversal does.
 */
import type { PartnerPayoutAccountView, TransferPayoutResult } from "./contract";
import type { PartnerPayoutAccount } from "./repository";

/** The transfer group of a payout's transfer, and its idempotency key at Stripe: `payout-<id>`. */
export const payoutTransferGroup = (payoutId: number) => `payout-${payoutId}`;

/** Stripe's idempotency key of a partner's Express account: one account per partner and program. */
export const partnerAccountIdempotencyKey = (programId: number, partnerId: number) => `partner-account-${programId}-${partnerId}`;

/** What we read of a connected account. */
export interface ConnectedAccountFields {
  capabilities?: { transfers?: string | null } | null;
  details_submitted?: boolean | null;
}

/**
 * Ready when Stripe reports the `transfers` capability `active`: only then does a transfer reach the account
 * (`payouts_enabled` is about the account's own payouts to its bank, not about receiving transfers).
 */
export function accountState(account: ConnectedAccountFields): Pick<PartnerPayoutAccount, "ready" | "detailsSubmitted"> {
  return { ready: account.capabilities?.transfers === "active", detailsSubmitted: account.details_submitted === true };
}

/**
 * When a read of an account reports its state: now, in whole seconds, as Stripe dates its events, so an event
 * of the same second as a read still applies (a report of the same second as the stored one replaces it).
 */
export const reportTime = (now: Date) => new Date(Math.floor(now.getTime() / 1000) * 1000);

export function partnerPayoutAccountView(account: PartnerPayoutAccount): PartnerPayoutAccountView {
  return { partnerId: account.partnerId, accountId: account.accountId, ready: account.ready, detailsSubmitted: account.detailsSubmitted };
}

/** The fields of a Stripe library error we read. */
interface StripeErrorFields {
  type?: string;
  rawType?: string;
  statusCode?: number;
  code?: string;
  message?: string;
}

/** Stripe's own words, bounded. */
export const stripeMessage = (err: unknown) => String((err as Error | null)?.message ?? err).slice(0, 500);

/** A key Stripe does not know (401) or that lacks a permission (403). */
export function isKeyRefusal(err: unknown): boolean {
  const e = err as StripeErrorFields | null;
  return e?.type === "StripeAuthenticationError" || e?.type === "StripePermissionError" || e?.statusCode === 401 || e?.statusCode === 403;
}

/**
 * Worth trying again: Stripe unreachable or timed out (no status), a 5xx, rate limited (429), or another request
 * with the same idempotency key still in flight (409).
 */
export function isTemporary(err: unknown): boolean {
  const status = (err as StripeErrorFields | null)?.statusCode;
  return status === undefined || status === 409 || status === 429 || status >= 500;
}

const failed = (code: string, reason: string): TransferPayoutResult => ({ outcome: "failed", code, reason });

/**
 * What a refused transfer means for the payout, or null when the refusal is temporary (the payout stays
 * processing and is tried again). A refused key fails it with `processor_key_invalid`; any other 4xx (the
 * platform's balance is insufficient, the account cannot receive transfers, a bad currency) with Stripe's own code
 * and message.
 */
export function transferRefusal(err: unknown, programId: number): TransferPayoutResult | null {
  if (isKeyRefusal(err)) {
    return failed(
      "processor_key_invalid",
      `Stripe refused program ${programId}'s restricted key: ${stripeMessage(err)} The merchant must enter a restricted key with write access to Connect accounts, account links and transfers (Settings → Stripe); the amount is back in the partner's balance for the next run.`,
    );
  }
  if (isTemporary(err)) return null;
  const e = err as StripeErrorFields;
  return failed(e.code || e.rawType || "stripe_refused", stripeMessage(err));
}

export const accountMissing = (programId: number, partnerId: number): TransferPayoutResult =>
  failed(
    "stripe_account_missing",
    `Partner ${partnerId} has no Stripe account in program ${programId}: they connect one in the partner portal (Payouts, Connect with Stripe); the amount stays in their balance for the next run.`,
  );

export const accountNotReady = (account: Pick<PartnerPayoutAccount, "partnerId" | "accountId">): TransferPayoutResult =>
  failed(
    "stripe_account_not_ready",
    `Partner ${account.partnerId}'s Stripe account ${account.accountId} cannot receive transfers yet (Stripe does not report its transfers capability active): the partner finishes Stripe's onboarding from the partner portal; the amount stays in their balance for the next run.`,
  );

export const keyMissing = (programId: number): TransferPayoutResult =>
  failed(
    "processor_key_missing",
    `Program ${programId} has no restricted Stripe key, so no transfer can be made: the merchant enters one with write access to Connect accounts, account links and transfers (Settings → Stripe); the amount is back in the partner's balance for the next run.`,
  );

/** What we read of a transfer in a `transfer.reversed` or `transfer.updated` event. */
export interface TransferFields {
  id: string;
  amount: number;
  amount_reversed?: number | null;
}

/** Only a transfer reversed in full fails its payout; a partial reversal is noted and changes nothing. */
export function reversalOf(transfer: TransferFields): "full" | "partial" | "none" {
  const reversed = transfer.amount_reversed ?? 0;
  if (reversed <= 0) return "none";
  return reversed >= transfer.amount ? "full" : "partial";
}
