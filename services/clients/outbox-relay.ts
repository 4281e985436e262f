import os from "node:os";
import type { ServiceBroker } from "moleculer";
import { typedCall } from "../../shared/typed-call";
import type { NotificationsContract } from "../notifications/contract";
import type { EventProducer } from "../../shared/events";
import { METRICS, setGauge } from "../../shared/metrics";
import type { OutboxStore } from "../../shared/outbox/outbox";
import { OutboxRelay } from "../../shared/outbox/relay";

const call = typedCall<NotificationsContract>();
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export interface ServiceOutboxRelay {
  /** Call after a commit that wrote an event, so it goes out at once. */
  nudge(): void;
  stop(): Promise<void>;
}

/**
 * Starts the relay of a producer's outbox (commissions, attribution, sales,
 * programs): each claimed batch goes to `notifications.events` in one call
 * with the producer's name; an event not consumed is retried with backoff
 * until acknowledged (OUTBOX_INTERVAL_MS, OUTBOX_LEASE_MS,
 * OUTBOX_MAX_BACKOFF_MS). With METRICS=true the age of its oldest pending
 * event is the gauge affiliate_outbox_oldest_age_seconds{outbox="<producer>"}.
 */
export function startServiceOutboxRelay(service: { broker: ServiceBroker; logger: { warn(...args: unknown[]): void } }, producer: EventProducer, outbox: OutboxStore): ServiceOutboxRelay {
  const { broker, logger } = service;
  const relay = new OutboxRelay(
    outbox,
    async (events) => {
      // The outbox keeps payloads as stored JSON; notifications validates each (its type's schema, shared/events.ts).
      const batch = events.map((e) => ({ eventId: e.id, type: e.type, occurredAt: e.createdAt.toISOString(), payload: e.payload as Record<string, unknown> }));
      const outcomes = await call(broker, "notifications.events", { producer, events: batch }, { timeout: 10_000 });
      return outcomes.map((o) => (o.ok ? null : o.error.message || o.error.type || "not consumed"));
    },
    {
      relayId: `${broker.nodeID}:${os.hostname()}:${process.pid}:${producer}`,
      intervalMs: env("OUTBOX_INTERVAL_MS", 1000),
      leaseMs: env("OUTBOX_LEASE_MS", 30_000),
      batchSize: 50,
      maxBackoffMs: env("OUTBOX_MAX_BACKOFF_MS", 300_000),
      logger,
    },
  );
  relay.start();

  let timer: NodeJS.Timeout | undefined;
  if (broker.isMetricsEnabled()) {
    const sample = () =>
      outbox.oldestPendingOutboxAt().then(
        (oldest) => setGauge(broker, METRICS.outboxOldestAge, oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0, { outbox: producer }),
        (err) => logger.warn(`Could not measure the ${producer} outbox.`, err),
      );
    void sample();
    timer = setInterval(sample, env("OUTBOX_METRICS_INTERVAL_MS", 15_000));
    timer.unref();
  }

  return {
    nudge: () => relay.nudge(),
    async stop() {
      clearInterval(timer);
      await relay.stop();
    },
  };
}
