/**
 * Groups single writes that arrive within a few milliseconds into one call of
 * `flush` (one multi-row INSERT, one transaction), and answers each caller
 * with its own result once that call has finished: a caller is never told
 * "done" before its row is committed, and a failed flush fails every caller
 * of that batch (nobody is silently dropped). Used by the click path
 * (services/attribution/click-writer.ts; docs/architecture.md, "Click batching").
 *
 * A batch is flushed when it holds `maxSize` items or `maxWaitMs` after its
 * first item, whichever comes first. Several batches may be in flight at once
 * (each on its own database connection). `stop()` flushes what is waiting and
 * waits for every batch in flight, so a graceful shutdown loses nothing; items
 * added after `stop()` are refused.
 */
export interface MicroBatcherOptions {
  /** Largest batch; a full batch is flushed at once. */
  maxSize: number;
  /** How long the first item of a batch waits for others (0: only those added in the same event-loop turn). */
  maxWaitMs: number;
}

interface Waiting<I, O> {
  item: I;
  resolve(result: O): void;
  reject(err: unknown): void;
}

export class MicroBatcherStoppedError extends Error {
  constructor() {
    super("The batcher is stopped: the service is shutting down.");
  }
}

export class MicroBatcher<I, O> {
  private pending: Waiting<I, O>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  /** `flush` gets the items in the order they were added and must return one result per item, in that order. */
  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly options: MicroBatcherOptions,
  ) {
    if (!(options.maxSize >= 1) || !(options.maxWaitMs >= 0)) throw new Error("MicroBatcher: maxSize must be >= 1 and maxWaitMs >= 0");
  }

  /** Adds one item; resolves with its result once its batch is flushed, rejects with the batch's error. */
  add(item: I): Promise<O> {
    if (this.stopped) return Promise.reject(new MicroBatcherStoppedError());
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.options.maxSize) this.flushNow();
      else if (!this.timer) this.timer = setTimeout(() => this.flushNow(), this.options.maxWaitMs);
    });
  }

  /** Items waiting for their batch (not yet flushing). */
  get waiting(): number {
    return this.pending.length;
  }

  /** Flushes what is waiting, waits for every batch in flight, and refuses new items. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.flushNow();
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    const run = this.runBatch(batch);
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private async runBatch(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.flush(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`MicroBatcher: flush returned ${results.length} results for ${batch.length} items`);
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
