/**
 * A background worker's loop: run a batch, then sleep `intervalMs` unless the
 * batch was full or someone nudged (new work was just committed). Used by the
 * commissions outbox relay and the webhook delivery worker.
 */
export class PollingLoop {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private nudged = false;

  /** `runBatch` returns how many items it took; a full batch means more may be waiting. */
  constructor(
    private readonly runBatch: () => Promise<number>,
    private readonly opts: { intervalMs: number; batchSize: number; onError(err: unknown): void },
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the batch in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.nudged = false;
      let taken = 0;
      try {
        taken = await this.runBatch();
      } catch (err) {
        this.opts.onError(err);
      }
      if (taken < this.opts.batchSize && !this.nudged && this.running) await this.sleep(this.opts.intervalMs);
    }
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

/** Backoff after the n-th failed attempt: 1 s, 2 s, 4 s ... up to the ceiling. */
export function exponentialBackoffMs(attempts: number, maxBackoffMs: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempts - 1), maxBackoffMs);
}
