import type { ProcessorMovement } from "./processor-refunds";

export type { ProcessorMovement };

/**
 * `processing`: claimed by an instance until `claimedUntil`; `failed`: released
 * after a temporary error, so the processor's retry is processed; `processed`
 * and `ignored`: done, a redelivery is a duplicate; `rejected`: the event can
 * never succeed (bad data), answered 2xx so the processor stops retrying.
 */
export type ProcessorEventStatus = "processing" | "processed" | "failed" | "ignored" | "rejected";
export type FinishedEventStatus = "processed" | "ignored" | "rejected";

/** Which billing platform sent an event: Paddle's notifications are stored as `paddle:<program id>:<event_id>`, Stripe's by their own id. */
export type BillingPlatform = "stripe" | "paddle";
export const PADDLE_EVENT_PREFIX = "paddle:";

export interface ProcessorEvent {
  eventId: string;
  type: string;
  programId: number | null;
  status: ProcessorEventStatus;
  attempts: number;
  claimedUntil: Date | null;
  receivedAt: Date;
  processedAt: Date | null;
  lastError: string | null;
  outcome: Record<string, unknown> | null;
}

/**
 * A processor reference (checkout session, payment intent, invoice, charge,
 * `subscription:<id>`) known to belong to a recorded sale.
 */
export interface ProcessorPayment {
  programId: number;
  reference: string;
  transactionId: string;
  /** The sale's amount (net of tax) and what the processor charged; refunds arrive in the latter. */
  saleAmountCents: number;
  chargedAmountCents: number;
}

/**
 * A program's restricted key for the processor's API (read access to checkout sessions, products and prices),
 * used to fetch a checkout's line items for product rewards. Only its last four characters are ever shown.
 */
export interface ProcessorApiKey {
  programId: number;
  apiKey: string;
  setAt: Date;
  /** When a call with the key last failed because of the key (revoked, missing permission), and why. */
  failedAt: Date | null;
  failure: string | null;
}

/**
 * A program's own signing secret for the processor's webhooks (whsec_...): the program's own endpoint
 * (/api/v1/webhooks/processor/programs/:programId) verifies its events with it and nothing else. Kept as given (an
 * HMAC key cannot be hashed), like the restricted key; only a hint is ever shown.
 */
export interface ProcessorWebhookSecret {
  programId: number;
  signingSecret: string;
  setAt: Date;
}

/**
 * Which of a program's own webhook endpoints a signing secret is of (docs/processor-webhooks.md, "Paying partners
 * through Stripe Connect"): the endpoint of the merchant's own account's events (`account`), or the Connect endpoint
 * of its connected accounts' events (`connect`: partners' Express accounts). Both point at the program's URL.
 */
export type WebhookEndpointKind = "account" | "connect";

/**
 * A partner's Express account under the merchant's Stripe platform, for payouts (docs/payouts.md, "Stripe Connect").
 * One per partner and program; an account id belongs to one partner of a program. `ready`: Stripe reports the
 * account's `transfers` capability `active`. `updatedAt` is when Stripe reported the state (an event's creation, or
 * the time the account was read): an older report never overwrites a newer one.
 */
export interface PartnerPayoutAccount {
  programId: number;
  partnerId: number;
  accountId: string;
  ready: boolean;
  detailsSubmitted: boolean;
  updatedAt: Date;
}

/**
 * A transfer the processor made (or found) for a payout: the proof that a `transfer.reversed` event is of one of
 * the program's payouts (an event's metadata alone could name anyone's payout).
 */
export interface PayoutTransfer {
  programId: number;
  payoutId: number;
  partnerId: number;
  transferId: string;
  amountCents: number;
  currency: string;
  createdAt: Date;
}

/** Which PayPal environment a program's credentials are of: the sandbox (tests, no real money) or live. */
export type PaypalMode = "sandbox" | "live";

/**
 * A program's PayPal REST API credentials, for sending its payout runs' PayPal payouts through the Payouts API
 * (docs/payouts.md, "PayPal"): the client id and secret of an app with Payouts enabled. Kept as given (PayPal needs
 * the secret itself), like the restricted Stripe key; never logged or returned, only a hint of the client id.
 */
export interface PaypalCredentials {
  programId: number;
  clientId: string;
  clientSecret: string;
  mode: PaypalMode;
  setAt: Date;
  /** When PayPal last refused these credentials (unknown, or the app lost Payouts), and what it said. */
  failedAt: Date | null;
  failure: string | null;
}

/** The PayPal batch made for a payout run (one per program and run: a retry finds it and calls PayPal no more). */
export interface PaypalBatch {
  programId: number;
  runId: number;
  /** PayPal's payout_batch_id. */
  batchId: string;
  createdAt: Date;
}

/** Which Paddle environment a program's notifications come from: the sandbox (test sales, no commission) or live. */
export type PaddleEnvironment = "sandbox" | "live";

/**
 * A program's Paddle Billing connection (docs/processor-webhooks.md, "Paddle Billing"): the secret key of its
 * notification destination (`pdl_ntfset_...`, an HMAC key: kept as given, only a hint is ever shown), its
 * environment, and an optional API key with read permissions (customers, discounts) that fills in what
 * notifications leave out: the customer's email and the discount's code.
 */
export interface PaddleConnection {
  programId: number;
  environment: PaddleEnvironment;
  secretKey: string | null;
  secretSetAt: Date | null;
  apiKey: string | null;
  apiKeySetAt: Date | null;
  /** When Paddle last refused the API key (revoked, missing permission), and why. */
  apiKeyFailedAt: Date | null;
  apiKeyFailure: string | null;
}

/** What a settings change names: each field given is set (null removes a key); the others stay. */
export type PaddleConnectionChange = { environment?: PaddleEnvironment; secretKey?: string | null; apiKey?: string | null };

/** Storage contract of the processor service: the event log, the references of sales, refunds and disputes, API keys, signing secrets. */
export interface ProcessorRepository {
  /**
   * Claims an event for processing: new ones, failed ones, and ones whose
   * claim expired. Returns the stored event and whether this call claimed it.
   */
  claimEvent(e: { eventId: string; type: string; programId: number | null }, leaseMs: number, now: Date): Promise<{ claimed: boolean; event: ProcessorEvent }>;
  finishEvent(eventId: string, status: FinishedEventStatus, outcome: Record<string, unknown>, now: Date): Promise<void>;
  /** Marks a claimed event failed so a redelivery processes it again. */
  releaseEvent(eventId: string, error: string): Promise<void>;
  getEvent(eventId: string): Promise<ProcessorEvent | null>;
  /** The newest events first, optionally only those with a status. */
  listEvents(filter: { status?: ProcessorEventStatus; limit: number }): Promise<ProcessorEvent[]>;
  /** The program's newest event of the platform (the latest first received; events of no program are never found), or null. */
  lastEventOfProgram(programId: number, platform: BillingPlatform): Promise<ProcessorEvent | null>;

  /** Keeps the first link of a reference. */
  linkPayment(p: ProcessorPayment): Promise<void>;
  findPayment(programId: number, reference: string): Promise<ProcessorPayment | null>;
  /** Every reference linked to the sale. */
  listPaymentReferences(programId: number, transactionId: string): Promise<string[]>;
  /** Records that two references name the same payment (kept in both directions). */
  addAlias(programId: number, a: string, b: string): Promise<void>;
  listAliases(programId: number, reference: string): Promise<string[]>;

  /**
   * Stores what the processor said of one refund, dispute or charge; a report
   * that does not supersede the stored one (older, or after a final status)
   * is ignored. Returns whether it changed anything.
   */
  recordMovement(m: ProcessorMovement): Promise<boolean>;
  /** Movements of the charges or payment intents among `references`. */
  listMovements(programId: number, references: readonly string[]): Promise<ProcessorMovement[]>;
  /** Increments and returns the sale's revision: every change of its refunds or references moves it on. */
  nextRevision(programId: number, transactionId: string): Promise<number>;

  /** Sets (or, with null, removes) the program's key; a new key clears the last failure. */
  setApiKey(programId: number, apiKey: string | null, now: Date): Promise<void>;
  getApiKey(programId: number): Promise<ProcessorApiKey | null>;
  /** Notes that the key failed (the key must still be `apiKey`: a key replaced meanwhile keeps its clean state). */
  markApiKeyFailed(programId: number, apiKey: string, failure: string, now: Date): Promise<void>;

  /** Sets (or, with null, removes) the program's webhook signing secret of that endpoint; a new one replaces the old. */
  setWebhookSecret(programId: number, signingSecret: string | null, now: Date, endpoint?: WebhookEndpointKind): Promise<void>;
  getWebhookSecret(programId: number, endpoint?: WebhookEndpointKind): Promise<ProcessorWebhookSecret | null>;

  /**
   * Keeps the partner's payout account unless one is stored already: returns the stored one (the first wins, so
   * two onboardings at once keep one account). An account id already stored for another partner of the program
   * is refused by the store (unique per program).
   */
  addPartnerPayoutAccount(account: PartnerPayoutAccount): Promise<PartnerPayoutAccount>;
  getPartnerPayoutAccount(programId: number, partnerId: number): Promise<PartnerPayoutAccount | null>;
  findPartnerPayoutAccount(programId: number, accountId: string): Promise<PartnerPayoutAccount | null>;
  /** The stored accounts of these partners of the program (partners without one are left out), by partner id. */
  listPartnerPayoutAccounts(programId: number, partnerIds: readonly number[]): Promise<PartnerPayoutAccount[]>;
  /**
   * Sets the account's state as Stripe reported it at `reportedAt`, unless a later report is stored. Returns the
   * stored account after the call (null: no such account of the program).
   */
  updatePartnerPayoutAccountState(
    programId: number,
    accountId: string,
    state: Pick<PartnerPayoutAccount, "ready" | "detailsSubmitted">,
    reportedAt: Date,
  ): Promise<PartnerPayoutAccount | null>;

  /** Keeps the payout's transfer (the first one recorded for the payout wins). */
  recordPayoutTransfer(transfer: PayoutTransfer): Promise<void>;
  findPayoutTransfer(programId: number, transferId: string): Promise<PayoutTransfer | null>;

  /** Sets (or, with null, removes) the program's PayPal credentials; new ones clear the last failure. */
  setPaypalCredentials(programId: number, credentials: Pick<PaypalCredentials, "clientId" | "clientSecret" | "mode"> | null, now: Date): Promise<void>;
  getPaypalCredentials(programId: number): Promise<PaypalCredentials | null>;
  /** Notes that PayPal refused the credentials (they must still be these: ones replaced meanwhile keep their clean state). */
  markPaypalCredentialsFailed(programId: number, credentials: Pick<PaypalCredentials, "clientId" | "clientSecret">, failure: string, now: Date): Promise<void>;
  /** Keeps the run's batch unless one is stored already; returns the stored one (the first wins). */
  recordPaypalBatch(batch: PaypalBatch): Promise<PaypalBatch>;
  getPaypalBatch(programId: number, runId: number): Promise<PaypalBatch | null>;

  /** Applies the change to the program's Paddle connection (made, live, on its first change) and returns it; a new API key clears the last failure. */
  setPaddleConnection(programId: number, change: PaddleConnectionChange, now: Date): Promise<PaddleConnection>;
  getPaddleConnection(programId: number): Promise<PaddleConnection | null>;
  /** Notes that Paddle refused the API key (it must still be `apiKey`: a key replaced meanwhile keeps its clean state). */
  markPaddleApiKeyFailed(programId: number, apiKey: string, failure: string, now: Date): Promise<void>;
}
