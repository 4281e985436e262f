import { exponentialBackoffMs, PollingLoop } from "../../shared/polling-loop";
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signWebhook } from "../../shared/webhook-signature";
import { EVENT_PRODUCERS, publicEventId, type EventProducer } from "../../shared/events";
import type { ClaimedDelivery, DeliveryNext, NotificationsRepository } from "./repository";

const producerOf = (p: string): EventProducer => ((EVENT_PRODUCERS as readonly string[]).includes(p) ? (p as EventProducer) : "commissions");

export interface WebhookWorkerOptions {
  workerId: string;
  /** How often to look for due deliveries when not nudged. */
  intervalMs: number;
  /** How long a claim lasts; must exceed `timeoutMs` (a batch is sent in parallel). */
  leaseMs: number;
  batchSize: number;
  /** Per request: no answer within this counts as a failed attempt. */
  timeoutMs: number;
  /** Attempts per delivery before it is given up (`failed`). */
  maxAttempts: number;
  /** Backoff ceiling between attempts of one delivery. */
  maxBackoffMs: number;
  /** Deliveries given up in a row that disable their endpoint. */
  disableAfterFailures: number;
  logger: { warn(...args: unknown[]): void; info(...args: unknown[]): void };
  /** Told of every recorded attempt (`retrying` when another will follow) and every endpoint disabled: metrics. */
  onAttempt?(outcome: "succeeded" | "retrying" | "failed", attempt: number): void;
  onEndpointDisabled?(): void;
}

/**
 * Sends webhook deliveries, at least once, the way the commissions outbox
 * relay sends events: claim due deliveries with a lease (so several instances
 * never send the same one at the same time), POST each signed, then record the
 * attempt. Failures are retried with exponential backoff until `maxAttempts`;
 * receivers deduplicate on `Svc-Event-Id`.
 */
export class WebhookWorker {
  private readonly loop: PollingLoop;

  constructor(
    private readonly repo: NotificationsRepository,
    private readonly opts: WebhookWorkerOptions,
  ) {
    this.loop = new PollingLoop(() => this.deliverBatch(), {
      intervalMs: opts.intervalMs,
      batchSize: opts.batchSize,
      onError: (err) => opts.logger.warn("Webhook worker could not claim deliveries; retrying.", err),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the batch in flight; unsent deliveries stay pending for the next start. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Called after deliveries were enqueued, so they go out without waiting for the interval. */
  nudge(): void {
    this.loop.nudge();
  }

  private async deliverBatch(): Promise<number> {
    const due = await this.repo.claimDeliveries(this.opts.workerId, this.opts.leaseMs, this.opts.batchSize, new Date());
    // In parallel: one slow endpoint costs the batch one timeout, not one per delivery.
    await Promise.all(
      due.map((d) =>
        this.deliver(d).catch((err) => {
          // Not recorded: the claim lapses after the lease and the delivery is tried again.
          this.opts.logger.warn(`Webhook delivery ${d.id} could not be recorded.`, err);
        }),
      ),
    );
    return due.length;
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const at = new Date();
    const { statusCode, error } = await this.post(d);
    const durationMs = Date.now() - at.getTime();
    const ok = error === null;
    const next: DeliveryNext = ok
      ? { status: "succeeded" }
      : d.attempts >= this.opts.maxAttempts
        ? { status: "failed" }
        : { status: "pending", retryAt: new Date(Date.now() + exponentialBackoffMs(d.attempts, this.opts.maxBackoffMs)) };
    await this.repo.recordAttempt(d.id, this.opts.workerId, { attempt: d.attempts, at, statusCode, error, durationMs }, next);
    this.opts.onAttempt?.(next.status === "pending" ? "retrying" : next.status, d.attempts);
    if (next.status === "pending") return;
    // Only final outcomes count against the endpoint: a retry that later succeeds is not a failure.
    if (next.status === "failed") this.opts.logger.warn(`Webhook delivery ${d.id} to endpoint ${d.endpointId} given up after ${d.attempts} attempts.`);
    const { disabled } = await this.repo.recordEndpointOutcome(d.endpointId, ok, this.opts.disableAfterFailures, new Date());
    if (disabled) this.opts.onEndpointDisabled?.();
    if (disabled) this.opts.logger.warn(`Webhook endpoint ${d.endpointId} disabled after ${this.opts.disableAfterFailures} consecutive failed deliveries.`);
  }

  /** One signed POST. Only a 2xx answer is a success; redirects are not followed (the endpoint URL is the contract). */
  private async post(d: ClaimedDelivery): Promise<{ statusCode: number | null; error: string | null }> {
    try {
      const res = await fetch(d.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "affiliate-tracking-webhooks/1",
          [SIGNATURE_HEADER]: signWebhook(d.secret, d.body),
          // The body's id: unique across producers ("sales:42"; a bare number for commission events).
          [EVENT_ID_HEADER]: String(publicEventId(producerOf(d.producer), d.eventId)),
          [EVENT_TYPE_HEADER]: d.eventType,
        },
        body: d.body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      // The answer's body is not used; discarding it frees the connection.
      await res.body?.cancel().catch(() => undefined);
      return { statusCode: res.status, error: res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}` };
    } catch (err) {
      const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
      if (e?.name === "TimeoutError") return { statusCode: null, error: `no answer within ${this.opts.timeoutMs} ms` };
      return { statusCode: null, error: e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err) };
    }
  }
}
