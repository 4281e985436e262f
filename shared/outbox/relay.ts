import { exponentialBackoffMs, PollingLoop } from "../polling-loop";
import type { OutboxClaims, OutboxEvent } from "./outbox";

export interface OutboxRelayOptions {
  relayId: string;
  /** How often to look for work when not nudged. */
  intervalMs: number;
  /** How long a claim lasts; an instance that dies mid-dispatch loses its claims after this. */
  leaseMs: number;
  batchSize: number;
  /** Backoff ceiling for an event whose dispatch keeps failing. */
  maxBackoffMs: number;
  logger: { warn(...args: unknown[]): void };
}

/**
 * Delivers the events of one outbox, at least once, after commit. Several
 * instances may run: each claims events with a lease, so an event is
 * dispatched by one relay at a time. Consumers deduplicate on the event id.
 */
export class OutboxRelay {
  private readonly loop: PollingLoop;

  constructor(
    private readonly outbox: OutboxClaims,
    private readonly dispatch: (event: OutboxEvent) => Promise<void>,
    private readonly opts: OutboxRelayOptions,
  ) {
    this.loop = new PollingLoop(() => this.dispatchBatch(), {
      intervalMs: opts.intervalMs,
      batchSize: opts.batchSize,
      onError: (err) => opts.logger.warn("Outbox relay could not claim events; retrying.", err),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the batch in flight; what is left stays in the outbox for the next start. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Called after a commit that enqueued events, so they go out without waiting for the interval. */
  nudge(): void {
    this.loop.nudge();
  }

  private async dispatchBatch(): Promise<number> {
    const events = await this.outbox.claimOutbox(this.opts.relayId, this.opts.leaseMs, this.opts.batchSize, new Date());
    // Dispatched one after the other, oldest first; the ones that went out are acknowledged together in one
    // statement at the end (one statement per batch instead of one per event). A crash before that leaves them
    // claimed: they go out again when the lease ends, which the consumers' deduplication on the event id absorbs.
    const dispatched: number[] = [];
    for (const event of events) {
      try {
        await this.dispatch(event);
        dispatched.push(event.id);
      } catch (err) {
        const retryAt = new Date(Date.now() + exponentialBackoffMs(event.attempts, this.opts.maxBackoffMs));
        await this.outbox.deferOutbox(event.id, this.opts.relayId, retryAt, String((err as Error)?.message ?? err));
      }
    }
    await this.outbox.markBatchDispatched(dispatched, this.opts.relayId, new Date());
    return events.length;
  }
}
