import type { CommissionsRepository, OutboxEvent } from "./repository";

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
 * Delivers outbox events written by commissions transactions, at least once,
 * after commit. Several instances may run: each claims events with a lease,
 * so an event is dispatched by one relay at a time. Consumers deduplicate on
 * the event id.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private nudged = false;

  constructor(
    private readonly repo: CommissionsRepository,
    private readonly dispatch: (event: OutboxEvent) => Promise<void>,
    private readonly opts: OutboxRelayOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the batch in flight; what is left stays in the outbox for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  /** Called after a commit that enqueued events, so they go out without waiting for the interval. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Backoff for the n-th failed attempt: 1 s, 2 s, 4 s ... up to the ceiling. */
  static backoffMs(attempts: number, maxBackoffMs: number): number {
    return Math.min(1000 * 2 ** Math.max(0, attempts - 1), maxBackoffMs);
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.nudged = false;
      let claimed = 0;
      try {
        claimed = await this.dispatchBatch();
      } catch (err) {
        this.opts.logger.warn("Outbox relay could not claim events; retrying.", err);
      }
      if (claimed < this.opts.batchSize && !this.nudged && this.running) await this.sleep(this.opts.intervalMs);
    }
  }

  private async dispatchBatch(): Promise<number> {
    const events = await this.repo.claimOutbox(this.opts.relayId, this.opts.leaseMs, this.opts.batchSize, new Date());
    for (const event of events) {
      try {
        await this.dispatch(event);
        await this.repo.markDispatched(event.id, this.opts.relayId, new Date());
      } catch (err) {
        const retryAt = new Date(Date.now() + OutboxRelay.backoffMs(event.attempts, this.opts.maxBackoffMs));
        await this.repo.deferOutbox(event.id, this.opts.relayId, retryAt, String((err as Error)?.message ?? err));
      }
    }
    return events.length;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}
