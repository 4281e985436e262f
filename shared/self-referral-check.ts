import type { Context } from "moleculer";
import { call } from "./bus";
import { isSelfReferral, type Identity } from "./domain/self-referral";
import { getProgram } from "./program-cache";

/** Whether this customer is the partner themself in a program whose guard is on (reads the program and the partner). */
export async function isSelfReferredTo(ctx: Pick<Context, "call" | "broker">, programId: number, partnerId: number, customer: Identity): Promise<boolean> {
  if (!customer.email && !customer.customerKey) return false;
  const program = await getProgram(ctx, programId);
  if (!program.selfReferralGuard) return false;
  const partner = await call(ctx, "programs.getPartner", { partnerId });
  return isSelfReferral(true, partner, customer);
}
