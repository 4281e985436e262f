import type { Service, ServiceSchema } from "moleculer";
import type { TestSystem } from "./system";

/** Polls `probe` until `ok` or the deadline; returns the last value (the caller asserts on it). */
export async function waitFor<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Starts a service on a running test system's broker. The services read their
 * database and settings from the environment when they start, and startSystem
 * restored it after its own start, so the system's values are put back for the
 * duration of this start.
 */
export async function startServiceLate(sys: TestSystem, schema: ServiceSchema, env: Record<string, string> = {}): Promise<Service> {
  const saved = { ...process.env };
  // As startSystem: webhooks may go to the tests' receivers on 127.0.0.1.
  Object.assign(process.env, { DATABASE_URL: sys.databaseUrl, OUTBOX_INTERVAL_MS: "200", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", EXCHANGE_RATE_FEED_URL: "off" }, env);
  try {
    const service = sys.broker.createService(schema);
    await sys.broker.waitForServices([schema.name], 10_000);
    return service;
  } finally {
    process.env = saved;
  }
}
