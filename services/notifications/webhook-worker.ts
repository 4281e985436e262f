import { exponentialBackoffMs, PollingLoop } from "../../shared/polling-loop";
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signWebhook } from "../../shared/webhook-signature";
import { EVENT_PRODUCERS, publicEventId, testEventId, type EventProducer } from "../../shared/events";
import { TEST_PRODUCER, type ClaimedDelivery, type DeliveryNext, type NotificationsRepository } from "./repository";
import { postWebhook, type WebhookResponse } from "./webhook-client";
import type { TargetPolicy } from "./webhook-target";

const producerOf = (p: string): EventProducer => ((EVENT_PRODUCERS as readonly string[]).includes(p) ? (p as EventProducer) : "commissions");

/** The body's id, as the Svc-Event-Id header carries it: "sales:42", a bare number for commission events, "test:7" for a test event. */
const eventIdOf = (d: ClaimedDelivery): string => String(d.producer === TEST_PRODUCER ? testEventId(d.eventId) : publicEventId(producerOf(d.producer), d.eventId));

export interface WebhookWorkerOptions {
  workerId: string;
  /** How often to look for due deliveries when not nudged. */
  intervalMs: number;
  /** How long a claim lasts; must exceed `timeoutMs` (a batch is sent in parallel). */
  leaseMs: number;
  batchSize: number;
  /** Per request: no answer within this counts as a failed attempt. */
  timeoutMs: number;
  /** Per request: no connection (TCP, and TLS for https) within this counts as a failed attempt. */
  connectTimeoutMs: number;
  /** Where deliveries may go (./webhook-target.ts): checked against the address each connection uses. */
  targets: TargetPolicy;
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
    const { statusCode, error, responseExcerpt, permanent, detail } = await this.post(d);
    const durationMs = Date.now() - at.getTime();
    const ok = error === null;
    // A refused target (not a public address) or an unusable URL fails the delivery at once: retrying cannot help.
    if (permanent) this.opts.logger.warn(`Webhook delivery ${d.id} to endpoint ${d.endpointId} not sent: ${detail ?? error}`);
    // A manual retry gives a failed delivery a fresh allowance: attempts (and the backoff) count from it.
    const attemptsInSeries = d.attempts - d.attemptBase;
    const next: DeliveryNext = ok
      ? { status: "succeeded" }
      : permanent || attemptsInSeries >= this.opts.maxAttempts
        ? { status: "failed" }
        : { status: "pending", retryAt: new Date(Date.now() + exponentialBackoffMs(attemptsInSeries, this.opts.maxBackoffMs)) };
    await this.repo.recordAttempt(d.id, this.opts.workerId, { attempt: d.attempts, at, statusCode, error, responseExcerpt, durationMs }, next);
    this.opts.onAttempt?.(next.status === "pending" ? "retrying" : next.status, d.attempts);
    if (next.status === "pending") return;
    // Only final outcomes count against the endpoint: a retry that later succeeds is not a failure.
    if (next.status === "failed" && !permanent) this.opts.logger.warn(`Webhook delivery ${d.id} to endpoint ${d.endpointId} given up after ${attemptsInSeries} attempts.`);
    const { disabled } = await this.repo.recordEndpointOutcome(d.endpointId, ok, this.opts.disableAfterFailures, new Date());
    if (disabled) this.opts.onEndpointDisabled?.();
    if (disabled) this.opts.logger.warn(`Webhook endpoint ${d.endpointId} disabled after ${this.opts.disableAfterFailures} consecutive failed deliveries.`);
  }

  /**
   * One signed POST (./webhook-client.ts): to a checked address only, no redirects followed, within the connect and
   * total timeouts. Only a 2xx answer is a success.
   */
  private post(d: ClaimedDelivery): Promise<WebhookResponse> {
    return postWebhook(
      {
        url: d.url,
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "affiliate-tracking-webhooks/1",
          // After a rotation, signed with the new secret and, until it expires, the previous one (one v1 each).
          [SIGNATURE_HEADER]: signWebhook(d.previousSecret ? [d.secret, d.previousSecret] : d.secret, d.body),
          // The body's id: unique across producers ("sales:42"; a bare number for commission events).
          [EVENT_ID_HEADER]: eventIdOf(d),
          [EVENT_TYPE_HEADER]: d.eventType,
        },
        body: d.body,
      },
      { policy: this.opts.targets, connectTimeoutMs: this.opts.connectTimeoutMs, timeoutMs: this.opts.timeoutMs },
    );
  }
}
