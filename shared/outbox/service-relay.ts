import os from "node:os";
import type { ServiceBroker } from "moleculer";
import { call, type ParamsOf } from "../bus";
import type { EventProducer } from "../events";
import { METRICS, setGauge } from "../metrics";
import type { OutboxStore } from "./outbox";
import { OutboxRelay } from "./relay";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export interface ServiceOutboxRelay {
  /** Call after a commit that wrote an event, so it goes out at once. */
  nudge(): void;
  stop(): Promise<void>;
}

/**
 * Starts the relay of a producer's outbox (attribution, sales, programs):
 * each event goes to `notifications.event` with the producer's name, retried
 * with backoff until acknowledged (same settings as the commissions relay:
 * OUTBOX_INTERVAL_MS, OUTBOX_LEASE_MS, OUTBOX_MAX_BACKOFF_MS). With METRICS=true
 * the age of its oldest pending event is the gauge
 * affiliate_outbox_oldest_age_seconds{outbox="<producer>"}.
 */
export function startServiceOutboxRelay(
  service: { broker: ServiceBroker; logger: { warn(...args: unknown[]): void } },
  producer: Exclude<EventProducer, "commissions">,
  outbox: OutboxStore,
): ServiceOutboxRelay {
  const { broker, logger } = service;
  const relay = new OutboxRelay(
    outbox,
    async (event) => {
      const payload = event.payload as ParamsOf<"notifications.event">["payload"];
      await call(broker, "notifications.event", { producer, eventId: event.id, type: event.type, occurredAt: event.createdAt.toISOString(), payload }, { timeout: 5000 });
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
