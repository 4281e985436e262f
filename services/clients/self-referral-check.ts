import type { Context, ServiceBroker } from "moleculer";
import { typedCall } from "../../shared/typed-call";
import type { ProgramsContract } from "../programs/contract";
import { isSelfReferral, type Identity } from "../../shared/domain/self-referral";
import { InvalidatedCache } from "../../shared/invalidated-cache";
import { getProgram } from "./program-cache";

/**
 * Partners' identities (email, customer key) by partner id, per process: the
 * guard reads one on every attributed sale and lead of a guarded program, a
 * bus hop and a query each time. Programs never changes either field once a
 * partner exists (there is no partner update), so the TTL
 * (PARTNER_CACHE_TTL_MS, default 60 s, 0: off) is only a bound; an update
 * added later must broadcast the change and drop the entry here, like
 * programs.enrollmentChanged does for referral codes.
 */
const call = typedCall<ProgramsContract>();

const partnerCaches = new WeakMap<ServiceBroker, InvalidatedCache<number, Identity>>();

function partnerCacheOf(broker: ServiceBroker): InvalidatedCache<number, Identity> {
  let cache = partnerCaches.get(broker);
  if (!cache) {
    cache = new InvalidatedCache(Number(process.env.PARTNER_CACHE_TTL_MS ?? 60_000));
    partnerCaches.set(broker, cache);
  }
  return cache;
}

async function partnerIdentity(ctx: Pick<Context, "call" | "broker">, partnerId: number): Promise<Identity> {
  const cache = partnerCacheOf(ctx.broker);
  const hit = cache.get(partnerId);
  if (hit) return hit;
  const ticket = cache.ticket();
  const { email, customerKey } = await call(ctx, "programs.getPartner", { partnerId });
  const identity = { email, customerKey };
  cache.set(partnerId, identity, ticket);
  return identity;
}

/** Whether this customer is the partner themself in a program whose guard is on (reads the program and the partner). */
export async function isSelfReferredTo(ctx: Pick<Context, "call" | "broker">, programId: number, partnerId: number, customer: Identity): Promise<boolean> {
  if (!customer.email && !customer.customerKey) return false;
  const program = await getProgram(ctx, programId);
  if (!program.selfReferralGuard) return false;
  return isSelfReferral(true, await partnerIdentity(ctx, partnerId), customer);
}
