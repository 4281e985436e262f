import { exponentialBackoffMs, PollingLoop } from "../../shared/polling-loop";
import type { Mail, Mailer } from "../../shared/mailer";
import type { ClaimedPartnerEmail, NotificationsRepository, PartnerEmailNext } from "./repository";

export interface PartnerEmailWorkerOptions {
  workerId: string;
  /** How often to look for due emails (retries) when not nudged. */
  intervalMs: number;
  batchSize: number;
  /** One send gives up after this (a failed attempt, retried); the claim's lease is longer. */
  sendTimeoutMs: number;
  /** Attempts per email before it is given up (`failed`). */
  maxAttempts: number;
  /** Backoff ceiling between attempts of one email. */
  maxBackoffMs: number;
  logger: { warn(...args: unknown[]): void; info(...args: unknown[]): void };
  /**
   * The mail to send for a claimed email (the recorded content, with what is made at sending: an approval's sign-in
   * link), or why it is not sent after all (its category was unsubscribed since it was recorded). A throw is a failed
   * attempt, retried.
   */
  prepare(email: ClaimedPartnerEmail): Promise<Mail | { skip: string }>;
}

/** A claim outlives the longest send (by as much again, at most 30 s), so no other worker claims an email while it is being sent. */
const leaseOf = (sendTimeoutMs: number) => sendTimeoutMs + Math.min(sendTimeoutMs, 30_000);

/**
 * Sends the partner emails recorded as pending (./partner-emails.ts), at least once, the way the webhook worker sends
 * deliveries: claim due emails with a lease (several instances never send the same one at the same time), send each
 * through the mailer, then record the outcome: `sent`, or pending again with exponential backoff, or `failed` after
 * `maxAttempts`.
 *
 * Exactly once in effect, but for one window: a crash (or a lost database) after the SMTP server accepted a mail and
 * before it is recorded `sent` leaves it pending; when its lease has passed it is sent again. That second mail carries
 * the same Message-ID as the first (fixed when the email was recorded), so it is recognisable as a duplicate.
 */
export class PartnerEmailWorker {
  private readonly loop: PollingLoop;

  constructor(
    private readonly repo: NotificationsRepository,
    private readonly mailer: Mailer,
    private readonly opts: PartnerEmailWorkerOptions,
  ) {
    this.loop = new PollingLoop(() => this.sendBatch(), {
      intervalMs: opts.intervalMs,
      batchSize: opts.batchSize,
      onError: (err) => opts.logger.warn("Partner email worker could not claim emails; retrying.", err),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the batch in flight; unsent emails stay pending for the next start. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Called after an email was recorded, so it goes out without waiting for the interval. */
  nudge(): void {
    this.loop.nudge();
  }

  private async sendBatch(): Promise<number> {
    const due = await this.repo.claimPartnerEmails(this.opts.workerId, leaseOf(this.opts.sendTimeoutMs), this.opts.batchSize, new Date());
    for (const email of due) {
      await this.send(email).catch((err) => {
        // Not recorded: the claim lapses after the lease and the email is tried again.
        this.opts.logger.warn(`Partner email ${email.id} could not be recorded.`, err);
      });
    }
    return due.length;
  }

  private async send(email: ClaimedPartnerEmail): Promise<void> {
    let skip: string | null = null;
    const error = await this.opts
      .prepare(email)
      .then((mail) => ("skip" in mail ? void (skip = mail.skip) : this.sendWithin(mail)))
      .then(
        () => null,
        (err: unknown) => (err instanceof Error ? err.message : String(err)) || "the mail server refused the mail",
      );
    const next: PartnerEmailNext =
      skip !== null
        ? { status: "skipped", reason: skip }
        : error === null
          ? { status: "sent" }
          : email.attempts >= this.opts.maxAttempts
            ? { status: "failed" }
            : { status: "pending", retryAt: new Date(Date.now() + exponentialBackoffMs(email.attempts, this.opts.maxBackoffMs)) };
    if (error !== null) {
      const what = next.status === "failed" ? `given up after ${email.attempts} attempts` : "will be retried";
      this.opts.logger.warn(`Partner email ${email.id} (${email.kind}, partner ${email.partnerId}) not sent, ${what}: ${error}`);
    }
    await this.repo.recordPartnerEmailAttempt(email.id, this.opts.workerId, error, next, new Date());
  }

  /** The mailer's send, or an error after `sendTimeoutMs` (the send may still finish: the same Message-ID then comes twice). */
  private async sendWithin(mail: Mail): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the mail server within ${this.opts.sendTimeoutMs} ms`)), this.opts.sendTimeoutMs);
    });
    try {
      await Promise.race([this.mailer.send(mail), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
