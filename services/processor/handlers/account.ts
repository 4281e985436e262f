import type Stripe from "stripe";
import { typedCall } from "../../../shared/typed-call";
import type { ProgramsContract } from "../../programs/contract";
import { eventTime, processed, type HandlerContext, type HandlerResult } from "../handler";

const call = typedCall<ProgramsContract>();

/**
 * Keeps the program's processor connection (what the status endpoint reports):
 * `connected` once charges are enabled, `restricted` when details are in but
 * charges are not, `onboarding` before.
 */
export async function handleAccountUpdated(h: HandlerContext): Promise<HandlerResult> {
  const account = h.event.data.object as Stripe.Account;
  const connected = account.charges_enabled === true;
  const patch = {
    connectionStatus: connected ? "connected" : account.details_submitted ? "restricted" : "onboarding",
    chargesEnabled: account.charges_enabled === true,
    payoutsEnabled: account.payouts_enabled === true,
    detailsSubmitted: account.details_submitted === true,
  };
  // The event's time: the programs service makes it the connection date if this update is the first to connect.
  await call(h.ctx, "programs.updateProcessorConnection", { programId: h.program.id, ...patch, connectedAt: eventTime(h.event).toISOString() });
  return processed(patch);
}

/** The merchant disconnected our platform: the account stays linked to its program, but no longer connected. */
export async function handleAccountDeauthorized(h: HandlerContext): Promise<HandlerResult> {
  const patch = { connectionStatus: "disconnected", chargesEnabled: false, payoutsEnabled: false };
  await call(h.ctx, "programs.updateProcessorConnection", { programId: h.program.id, ...patch });
  return processed(patch);
}
