import type { Context, ServiceBroker, ServiceSchema } from "moleculer";
import { InvalidatedCache } from "../../shared/invalidated-cache";
import { typedCall } from "../../shared/typed-call";
import type { PartnerRewards, RewardsContract } from "../rewards/contract";

const call = typedCall<RewardsContract>();

/**
 * A per-process memory of `rewards.forPartner` answers (a partner's group and
 * rewards), so a sale costs no extra bus hop while a program's rewards stay
 * the same. Every change to a program's groups, rewards or memberships is
 * announced by a confirmed `rewards.changed` broadcast, which drops the
 * program's entries in every process before the change is answered (and a
 * program's settings by `programs.changed`: the answer carries its currency); the TTL
 * (REWARDS_CACHE_TTL_MS, default 60 s, 0: off) only bounds a lost event. The
 * cache belongs to the broker, so test systems sharing a process never share it.
 */
type Cache = InvalidatedCache<string, PartnerRewards & { programId: number }>;
const caches = new WeakMap<ServiceBroker, Cache>();

function cacheOf(broker: ServiceBroker): Cache {
  let cache = caches.get(broker);
  if (!cache) {
    cache = new InvalidatedCache(Number(process.env.REWARDS_CACHE_TTL_MS ?? 60_000));
    caches.set(broker, cache);
  }
  return cache;
}

/** `rewards.forPartner` through the process's cache. Callers must not modify the answer (it is shared). */
export async function partnerRewards(ctx: Pick<Context, "call" | "broker">, programId: number, partnerId: number): Promise<PartnerRewards> {
  const cache = cacheOf(ctx.broker);
  const key = `${programId}:${partnerId}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const ticket = cache.ticket();
  const answer = await call(ctx, "rewards.forPartner", { programId, partnerId });
  cache.set(key, { ...answer, programId }, ticket);
  return answer;
}

/** Mixed into each service that uses `partnerRewards`: drops a program's entries when its rewards change. */
export const partnerRewardsCacheMixin: Partial<ServiceSchema> = {
  events: {
    "rewards.changed"(this: { broker: ServiceBroker }, ctx: Context<{ programId: number }>) {
      cacheOf(this.broker).deleteWhere((entry) => entry.programId === ctx.params.programId);
    },
    // An answer carries the program's currency, which its settings can change until the first sale.
    "programs.changed"(this: { broker: ServiceBroker }, ctx: Context<{ programId: number }>) {
      cacheOf(this.broker).deleteWhere((entry) => entry.programId === ctx.params.programId);
    },
  },
};
