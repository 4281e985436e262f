/**
 * Paying partners through Stripe Connect (docs/payouts.md, "Stripe Connect (Express)"): the calls to Stripe with
 * the program's restricted key (Connect write access: accounts, account links, transfers) and what is stored of
 * them. The rules are in ./partner-payouts.ts.
 */
import { Errors } from "moleculer";
import type Stripe from "stripe";
import { AppError, InvalidRequestError, ServiceUnavailableError } from "../../shared/errors";
import type { PartnerPayoutAccountView, TransferPayoutResult } from "./contract";
import {
  accountMissing,
  accountNotReady,
  accountState,
  isKeyRefusal,
  isTemporary,
  keyMissing,
  partnerAccountIdempotencyKey,
  partnerPayoutAccountView,
  payoutTransferGroup,
  reportTime,
  reversalOf,
  stripeMessage,
  transferRefusal,
} from "./partner-payouts";
import type { ProcessorApiKey, ProcessorRepository } from "./repository";
import { stripeClient } from "./stripe-api";

export interface ConnectContext {
  repo: ProcessorRepository;
  stripeApiUrl: string;
}

/**
 * Stripe could not be reached, timed out or answered 5xx: nothing is known to have happened, so the caller tries
 * again later (the payout stays processing). Its code is `processor_unavailable`; retryable.
 */
export class ProcessorUnavailableError extends Errors.MoleculerRetryableError {
  constructor(message: string) {
    super(message, 503, "processor_unavailable");
  }
}

/** A payout's transfer refused for good: its outcome, carried out of the calls. */
class Refused {
  constructor(readonly result: TransferPayoutResult) {}
}

/** The program's key, or the error a partner starting onboarding sees. */
async function keyForOnboarding(repo: ProcessorRepository, programId: number): Promise<ProcessorApiKey> {
  const key = await repo.getApiKey(programId);
  if (!key) {
    throw new AppError(
      "processor_key_missing",
      `Program ${programId} cannot pay partners through Stripe yet: the merchant has not given it a restricted Stripe key with Connect access. Choose another payout method in your profile, or ask the merchant to set up Stripe payouts.`,
    );
  }
  return key;
}

/**
 * A Stripe call made for a partner's account (onboarding, refresh), its failures as the partner's answer: a refused
 * key is marked on the program's key (the merchant's Stripe screen shows it) and answered 422; Stripe unreachable is
 * 503; anything else Stripe refuses is 400 with its words.
 */
async function accountCall<T>(repo: ProcessorRepository, key: ProcessorApiKey, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isKeyRefusal(err)) {
      await repo.markApiKeyFailed(key.programId, key.apiKey, stripeMessage(err), new Date());
      throw new AppError(
        "processor_key_refused",
        `Stripe refused program ${key.programId}'s restricted key when ${what}: ${stripeMessage(err)} The merchant must give the key write access to Connect accounts and account links (Settings → Stripe); try again afterwards.`,
      );
    }
    if (isTemporary(err)) throw new ServiceUnavailableError(`Stripe could not be reached when ${what} (${stripeMessage(err)}). Nothing changed; try again in a minute.`);
    throw new InvalidRequestError(`Stripe refused ${what}: ${stripeMessage(err)}`);
  }
}

/**
 * The partner's Express account (created once per partner and program, with Stripe's idempotency key
 * `partner-account-<programId>-<partnerId>`, and stored before anything else is done with it) and a fresh
 * onboarding link for it (links expire within minutes: one per visit).
 */
export async function startOnboarding(
  c: ConnectContext,
  p: { programId: number; partnerId: number; email: string | null; country: string | null; returnUrl: string; refreshUrl: string },
): Promise<{ accountId: string; url: string }> {
  const key = await keyForOnboarding(c.repo, p.programId);
  const stripe = stripeClient(key.apiKey, c.stripeApiUrl);
  let account = await c.repo.getPartnerPayoutAccount(p.programId, p.partnerId);
  if (!account) {
    const reportedAt = reportTime(new Date());
    const created = await accountCall(c.repo, key, "creating your Stripe account", () =>
      stripe.accounts.create(
        {
          type: "express",
          ...(p.country ? { country: p.country } : {}),
          ...(p.email ? { email: p.email } : {}),
          capabilities: { transfers: { requested: true } },
          metadata: { programId: String(p.programId), partnerId: String(p.partnerId) },
        },
        { idempotencyKey: partnerAccountIdempotencyKey(p.programId, p.partnerId) },
      ),
    );
    account = await c.repo.addPartnerPayoutAccount({ programId: p.programId, partnerId: p.partnerId, accountId: created.id, ...accountState(created), updatedAt: reportedAt });
  }
  const accountId = account.accountId;
  const link = await accountCall(c.repo, key, "opening Stripe's onboarding", () =>
    stripe.accountLinks.create({ account: accountId, type: "account_onboarding", return_url: p.returnUrl, refresh_url: p.refreshUrl }),
  );
  return { accountId, url: link.url };
}

/** The partner's account read again from Stripe and stored (unless a newer report is); null without an account. */
export async function refreshAccount(c: ConnectContext, p: { programId: number; partnerId: number }): Promise<PartnerPayoutAccountView | null> {
  const stored = await c.repo.getPartnerPayoutAccount(p.programId, p.partnerId);
  if (!stored) return null;
  const key = await keyForOnboarding(c.repo, p.programId);
  const reportedAt = reportTime(new Date());
  const account = await accountCall(c.repo, key, "reading your Stripe account", () => stripeClient(key.apiKey, c.stripeApiUrl).accounts.retrieve(stored.accountId));
  const updated = await c.repo.updatePartnerPayoutAccountState(p.programId, stored.accountId, accountState(account), reportedAt);
  return partnerPayoutAccountView(updated ?? stored);
}

/**
 * A payout's transfer to the partner's account, made at most once: a transfer of the payout's group found at
 * Stripe is the payout's (a retry after a timeout, a crash, or after Stripe's 24-hour idempotency window), else one
 * is created with the idempotency key `payout-<id>`. A not-ready account is read again from Stripe before it is
 * refused (its account.updated may not have arrived). Throws ProcessorUnavailableError when Stripe does not answer.
 */
export async function transferPayout(c: ConnectContext, p: { programId: number; partnerId: number; payoutId: number; amountCents: number; currency: string }): Promise<TransferPayoutResult> {
  let account = await c.repo.getPartnerPayoutAccount(p.programId, p.partnerId);
  if (!account) return accountMissing(p.programId, p.partnerId);
  const key = await c.repo.getApiKey(p.programId);
  if (!key) return keyMissing(p.programId);
  const stripe = stripeClient(key.apiKey, c.stripeApiUrl);
  const group = payoutTransferGroup(p.payoutId);
  /** A Stripe call: refused for good, the payout's outcome (thrown as Refused); not answered, ProcessorUnavailableError. */
  const stripeCall = async <T>(request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (err) {
      if (isKeyRefusal(err)) await c.repo.markApiKeyFailed(p.programId, key.apiKey, stripeMessage(err), new Date());
      const refusal = transferRefusal(err, p.programId);
      if (refusal) throw new Refused(refusal);
      throw new ProcessorUnavailableError(`Stripe did not answer for the transfer of payout ${p.payoutId} (${stripeMessage(err)}); it is tried again later and made once.`);
    }
  };
  let transfer: Stripe.Transfer;
  try {
    const [earlier] = (await stripeCall(() => stripe.transfers.list({ transfer_group: group, limit: 1 }))).data;
    if (earlier) {
      // Made by an earlier attempt; reversed in full meanwhile, it paid nothing.
      if (reversalOf(earlier) === "full") return { outcome: "failed", code: "transfer_reversed", reason: `Stripe transfer ${earlier.id} of payout ${p.payoutId} was reversed.` };
      transfer = earlier;
    } else {
      if (!account.ready) {
        const reportedAt = reportTime(new Date());
        const fresh = await stripeCall(() => stripe.accounts.retrieve(account!.accountId));
        account = (await c.repo.updatePartnerPayoutAccountState(p.programId, account.accountId, accountState(fresh), reportedAt)) ?? account;
        if (!accountState(fresh).ready) return accountNotReady(account);
      }
      const destination = account.accountId;
      transfer = await stripeCall(() =>
        stripe.transfers.create(
          {
            amount: p.amountCents,
            currency: p.currency,
            destination,
            transfer_group: group,
            metadata: { payoutId: String(p.payoutId), programId: String(p.programId), partnerId: String(p.partnerId) },
          },
          { idempotencyKey: group },
        ),
      );
    }
  } catch (err) {
    if (err instanceof Refused) return err.result;
    throw err;
  }
  await c.repo.recordPayoutTransfer({
    programId: p.programId,
    payoutId: p.payoutId,
    partnerId: p.partnerId,
    transferId: transfer.id,
    amountCents: transfer.amount,
    currency: transfer.currency,
    createdAt: new Date(transfer.created * 1000),
  });
  return { outcome: "paid", transferId: transfer.id };
}
