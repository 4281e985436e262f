import { typedCall } from "../../../shared/typed-call";
import type { CommissionsContract } from "../../commissions/contract";
import { eventTime, ignored, processed, type HandlerContext, type HandlerResult } from "../handler";
import { ConnectedAccount, objectOf, Transfer } from "../objects";
import { accountState, reversalOf } from "../partner-payouts";

const call = typedCall<CommissionsContract>();

/**
 * `account.updated` of a partner's Express account (the program's Connect endpoint): whether it can receive
 * transfers now (its `transfers` capability `active`) and whether its details are in. A report older than the
 * stored one (a late redelivery) changes nothing.
 */
export async function handlePartnerAccountUpdated(h: HandlerContext): Promise<HandlerResult> {
  const account = objectOf(ConnectedAccount, h.event);
  const accountId = h.event.account ?? account.id;
  const reportedAt = eventTime(h.event);
  const stored = await h.repo.updatePartnerPayoutAccountState(h.program.id, accountId, accountState(account), reportedAt);
  if (!stored) return ignored(`account '${accountId}' is not a partner's payout account of program ${h.program.id}`);
  const outcome = { partnerId: stored.partnerId, payoutAccountId: accountId, ready: stored.ready, detailsSubmitted: stored.detailsSubmitted };
  return processed(stored.updatedAt.getTime() > reportedAt.getTime() ? { ...outcome, olderThanStored: true } : outcome);
}

const isRefusal = (err: unknown) => ["not_found", "conflict"].includes((err as { type?: string } | null)?.type ?? "");

/**
 * `transfer.reversed` (and `transfer.updated` reporting a reversal): a payout's transfer reversed in full makes the
 * payout failed (`transfer_reversed`) and returns its amount to the partner's balance (commissions.returnPayout).
 * Only transfers this service made for the program's payouts count: the event's metadata alone could name any
 * payout. A partial reversal is noted and changes nothing (the payout stays paid).
 */
export async function handleTransferReversed(h: HandlerContext): Promise<HandlerResult> {
  const transfer = objectOf(Transfer, h.event);
  const reversal = reversalOf(transfer);
  if (reversal === "none") return ignored(`transfer ${transfer.id} is not reversed`);
  const payout = await h.repo.findPayoutTransfer(h.program.id, transfer.id);
  if (!payout) return ignored(`transfer ${transfer.id} is not the transfer of a payout of program ${h.program.id}`);
  const reversed = `${transfer.amount_reversed} of ${transfer.amount} (${transfer.currency ?? payout.currency})`;
  if (reversal === "partial") {
    return ignored(
      `partial reversal of transfer ${transfer.id}: ${reversed} went back; only a transfer reversed in full fails payout ${payout.payoutId}, which stays paid (settle the difference with the partner)`,
    );
  }
  const reason = `Stripe transfer ${transfer.id} was reversed: the amount went back to the merchant's Stripe balance, and to the partner's balance here, for the next run.`;
  try {
    await call(h.ctx, "commissions.returnPayout", { withdrawalId: payout.payoutId, code: "transfer_reversed", reason });
  } catch (err) {
    // The payout is gone or cannot be returned (cancelled, never paid): retrying the event would not change that.
    if (isRefusal(err)) return ignored(`payout ${payout.payoutId} was not returned: ${(err as Error).message}`);
    throw err;
  }
  return processed({ payoutId: payout.payoutId, transferId: transfer.id, returned: true });
}
