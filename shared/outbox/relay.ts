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
 * Delivers a claimed batch; answers one outcome per event, in order: null when
 * the event was delivered, else why not (it is deferred and retried alone).
 * Throwing fails the whole batch (the consumer is unreachable).
 */
export type BatchDispatch = (events: OutboxEvent[]) => Promise<Array<string | null>>;

/**
 * Delivers the events of one outbox, at least once, after commit. Several
 * instances may run: each claims events with a lease, so an event is
 * dispatched by one relay at a time. Consumers deduplicate on the event id.
 */
export class OutboxRelay {
  private readonly loop: PollingLoop;

  constructor(
    private readonly outbox: OutboxClaims,
    private readonly dispatch: BatchDispatch,
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
    if (!events.length) return 0;
    // The whole claim in one dispatch (one bus call), oldest first; the consumer answers each event on its own. The
    // delivered ones are acknowledged together in one statement. A crash before that leaves them claimed: they go
    // out again when the lease ends, which the consumers' deduplication on the event id absorbs.
    let failures: Array<string | null>;
    try {
      failures = await this.dispatch(events);
      if (failures.length !== events.length) throw new Error(`the consumer answered ${failures.length} outcomes for ${events.length} events`);
    } catch (err) {
      failures = events.map(() => String((err as Error)?.message ?? err));
    }
    for (const [i, event] of events.entries()) {
      const failure = failures[i];
      if (failure === null) continue;
      const retryAt = new Date(Date.now() + exponentialBackoffMs(event.attempts, this.opts.maxBackoffMs));
      await this.outbox.deferOutbox(event.id, this.opts.relayId, retryAt, failure);
    }
    await this.outbox.markBatchDispatched(
      events.filter((_, i) => failures[i] === null).map((e) => e.id),
      this.opts.relayId,
      new Date(),
    );
    return events.length;
  }
}
