/**
 * Rewards as Stripe customer balance credit (docs/rewards.md, "Rewards other than cash"): a payout of a group
 * rewarding with `stripe_balance` credits the referring customer's Stripe balance (a negative customer balance
 * transaction, which Stripe takes off their next invoices), with the program's restricted key. Made once per payout
 * whatever the retries: a transaction of the payout is looked for (by its metadata) before one is made, and the
 * creation carries the idempotency key `payout-<id>-credit`.
 */
import type Stripe from "stripe";
import type { TransferPayoutResult } from "./contract";
import { isKeyRefusal, keyMissing, stripeMessage, transferRefusal } from "./partner-payouts";
import type { ProcessorRepository } from "./repository";
import { ProcessorUnavailableError } from "./stripe-connect";
import { stripeClient } from "./stripe-api";

export async function creditCustomerBalance(
  c: { repo: ProcessorRepository; stripeApiUrl: string },
  p: { programId: number; partnerId: number; payoutId: number; customerId: string; amountCents: number; currency: string },
): Promise<TransferPayoutResult> {
  const key = await c.repo.getApiKey(p.programId);
  if (!key) return keyMissing(p.programId);
  const stripe = stripeClient(key.apiKey, c.stripeApiUrl);
  try {
    const earlier = (await stripe.customers.listBalanceTransactions(p.customerId, { limit: 100 })).data.find((t) => t.metadata?.payoutId === String(p.payoutId));
    const credit: Stripe.CustomerBalanceTransaction =
      earlier ??
      (await stripe.customers.createBalanceTransaction(
        p.customerId,
        {
          amount: -p.amountCents,
          currency: p.currency,
          description: `Referral reward (payout ${p.payoutId})`,
          metadata: { payoutId: String(p.payoutId), programId: String(p.programId), partnerId: String(p.partnerId) },
        },
        { idempotencyKey: `payout-${p.payoutId}-credit` },
      ));
    return { outcome: "paid", transferId: credit.id };
  } catch (err) {
    if (isKeyRefusal(err)) await c.repo.markApiKeyFailed(p.programId, key.apiKey, stripeMessage(err), new Date());
    if ((err as { code?: string }).code === "resource_missing") {
      return {
        outcome: "failed",
        code: "stripe_customer_missing",
        reason: `Stripe has no customer ${p.customerId}: correct the partner's stripe_customer_id metadata, and the next run credits it.`,
      };
    }
    const refusal = transferRefusal(err, p.programId);
    if (refusal) return refusal;
    throw new ProcessorUnavailableError(`Stripe did not answer for the credit of payout ${p.payoutId} (${stripeMessage(err)}); it is tried again later and made once.`);
  }
}
