import type { Context, ServiceBroker, ServiceSchema } from "moleculer";
import { typedCall, type BusCaller } from "../../shared/typed-call";
import type { ProgramsContract } from "../programs/contract";

const call = typedCall<ProgramsContract>();

/**
 * A short-lived, per-process memory of `programs.get` answers for the
 * services that read a program on every request (the gateway's access check,
 * status, click origin checks, commission creation, renewals), so a busy
 * program costs one bus hop and one query per PROGRAM_CACHE_TTL_MS (default
 * 5 s) instead of one or two per request.
 *
 * A change is seen at once: `programs.updateProcessorConnection` broadcasts
 * `programs.changed` and awaits it, so every process's entry is dropped
 * before (same process) or as soon as (other processes) the change is
 * answered. The TTL only bounds a lost event or a read that was in flight
 * during the change. Only programs that exist are remembered. The cache
 * belongs to the broker, so test systems sharing a process never share it.
 */
interface Cache {
  ttlMs: number;
  entries: Map<number, { program: CachedProgram; until: number }>;
}

/** `programs.get` as it arrives over the bus: JSON, so its dates are ISO strings. */
export type CachedProgram = ProgramsContract["programs.get"]["result"];

const MAX_ENTRIES = 10_000;
const caches = new WeakMap<ServiceBroker, Cache>();

function cacheOf(broker: ServiceBroker): Cache {
  let cache = caches.get(broker);
  if (!cache) {
    cache = { ttlMs: Number(process.env.PROGRAM_CACHE_TTL_MS ?? 5000), entries: new Map() };
    caches.set(broker, cache);
  }
  return cache;
}

/** `programs.get` through the process's cache. Callers must not modify the answer (it is shared). */
export async function getProgram(ctx: BusCaller & Pick<Context, "broker">, programId: number): Promise<CachedProgram> {
  const cache = cacheOf(ctx.broker);
  const hit = cache.entries.get(programId);
  if (hit && hit.until > Date.now()) return hit.program;
  const program = await call(ctx, "programs.get", { programId });
  if (cache.ttlMs > 0) {
    if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
    cache.entries.set(programId, { program, until: Date.now() + cache.ttlMs });
  }
  return program;
}

/** Mixed into each service that uses `getProgram`: reads the TTL at creation and drops changed programs. */
export const programCacheMixin: Partial<ServiceSchema> = {
  created(this: { broker: ServiceBroker }) {
    cacheOf(this.broker);
  },
  events: {
    "programs.changed"(this: { broker: ServiceBroker }, ctx: Context<{ programId: number }>) {
      cacheOf(this.broker).entries.delete(ctx.params.programId);
    },
  },
};
