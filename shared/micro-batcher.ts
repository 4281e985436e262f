/**
 * Groups single writes that arrive within a few milliseconds into one call of
 * `flush` (one multi-row INSERT, one transaction), and answers each caller
 * with its own result once that call has finished: a caller is never told
 * "done" before its row is committed, and a failed flush fails every caller
 * of that batch (nobody is silently dropped). Used by the click path
 * (services/attribution/click-writer.ts; docs/architecture.md, "Click batching").
 *
 * A batch is flushed when it holds `maxSize` items or `maxWaitMs` after its
 * first item, whichever comes first; with `maxWaitMs` 0, once the current
 * event-loop turn has run (setImmediate: the requests read in the same turn
 * go together, and none waits for a timer). Items that arrive already grouped
 * (`addAll`) are flushed at once. Several batches may be in flight at once
 * (each on its own database connection). `stop()` flushes what is waiting and
 * waits for every batch in flight, so a graceful shutdown loses nothing; items
 * added after `stop()` are refused.
 */
import { ServiceUnavailableError } from "./errors";

export interface MicroBatcherOptions {
  /** Largest batch; a full batch is flushed at once. */
  maxSize: number;
  /** How long the first item of a batch waits for others (0: only those added in the same event-loop turn). */
  maxWaitMs: number;
  /**
   * Self-clocking instead of a time window (group commit): a batch goes as soon as fewer than this many are in
   * flight (after the current event-loop turn), else when one comes back, with everything that gathered meanwhile.
   * An item then waits for no timer when the path is idle, and batches grow with the load. `maxWaitMs` is unused.
   */
  maxInFlight?: number;
}

interface Waiting<I, O> {
  item: I;
  resolve(result: O): void;
  reject(err: unknown): void;
}

/** An item offered while the service stops: temporary for the caller (503), another instance will take it. */
export class MicroBatcherStoppedError extends ServiceUnavailableError {
  constructor() {
    super("The service is shutting down. Retry: another instance will take the request.");
  }
}

export class MicroBatcher<I, O> {
  private pending: Waiting<I, O>[] = [];
  /** Cancels the pending flush of the waiting batch (a timer, or an immediate with maxWaitMs 0). */
  private cancelScheduled: (() => void) | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  /** `flush` gets the items in the order they were added and must return one result per item, in that order. */
  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly options: MicroBatcherOptions,
  ) {
    if (!(options.maxSize >= 1) || !(options.maxWaitMs >= 0) || !(options.maxInFlight === undefined || options.maxInFlight >= 1)) {
      throw new Error("MicroBatcher: maxSize must be >= 1, maxWaitMs >= 0 and maxInFlight (when set) >= 1");
    }
  }

  /** Adds one item; resolves with its result once its batch is flushed, rejects with the batch's error. */
  add(item: I): Promise<O> {
    const result = this.enqueue(item);
    this.scheduleFlush();
    return result;
  }

  /** Adds items that arrived together and flushes them (with whatever was waiting) without waiting for others. */
  addAll(items: I[]): Array<Promise<O>> {
    const results = items.map((item) => this.enqueue(item));
    this.flushNow();
    return results;
  }

  private enqueue(item: I): Promise<O> {
    if (this.stopped) return Promise.reject(new MicroBatcherStoppedError());
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.options.maxSize) this.flushNow();
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

  /** Arranges the flush of what is waiting: after the window, or (maxInFlight) this turn if a slot is free. */
  private scheduleFlush(): void {
    if (this.cancelScheduled || !this.pending.length) return;
    const { maxInFlight, maxWaitMs } = this.options;
    // All slots busy: the waiting items go when a batch comes back (runBatch's caller schedules again).
    if (maxInFlight !== undefined && this.inFlight.size >= maxInFlight) return;
    const flush = () => this.flushNow();
    if (maxInFlight !== undefined || maxWaitMs === 0) {
      const immediate = setImmediate(flush);
      this.cancelScheduled = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(flush, maxWaitMs);
      this.cancelScheduled = () => clearTimeout(timer);
    }
  }

  private flushNow(): void {
    this.cancelScheduled?.();
    this.cancelScheduled = null;
    if (!this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    const run = this.runBatch(batch);
    this.inFlight.add(run);
    void run.finally(() => {
      this.inFlight.delete(run);
      this.scheduleFlush();
    });
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
