import type { z } from "zod";
import type { CouponCodeView } from "../attribution/contract";
import type { Jsonified } from "../../shared/dto";
import type { ProcessorEvent } from "./repository";
import type * as S from "./schemas";

/**
 * The processor service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from services/bus.ts.
 */
export interface ProcessorContract {
  /** From the gateway: the raw body and its signature header. The answer is the webhook's JSON (received, handled, outcome). */
  "processor.handleWebhook": { params: z.input<typeof S.WebhookInput>; result: { received: true } & Record<string, unknown> };
  /** From the gateway: a Paddle notification's raw body and its Paddle-Signature header, for the program of the path. */
  "processor.handlePaddleWebhook": { params: z.input<typeof S.PaddleWebhookInput>; result: { received: true } & Record<string, unknown> };
  /** The dashboard's Paddle screen: what to configure at Paddle, the environment, the keys' state (hints only) and the newest notification. */
  "processor.getPaddleConnection": { params: z.input<typeof S.ProgramIdInput>; result: PaddleConnectionView };
  /** Sets what the input names (an API key is checked with Paddle first: 422 processor_key_refused, 503 Paddle unreachable); answers as getPaddleConnection. */
  "processor.setPaddleConnection": { params: z.input<typeof S.SetPaddleConnectionInput>; result: PaddleConnectionView };
  // Operators reach these through the gateway (JSON). The handlers return the stored records as they are,
  // so an in-process caller would see Date objects: convert with toDto before adding a bus caller.
  "processor.getEvent": { params: z.input<typeof S.GetEventInput>; result: Jsonified<ProcessorEvent> | null };
  "processor.listEvents": { params: z.input<typeof S.ListEventsInput>; result: Jsonified<ProcessorEvent>[] };
  /** The program's restricted Stripe key as the dashboard shows it: never the key, only its kind and last four characters. */
  "processor.getApiKey": { params: z.input<typeof S.ProgramIdInput>; result: ApiKeyState };
  "processor.setApiKey": { params: z.input<typeof S.SetApiKeyInput>; result: ApiKeyState };
  "processor.removeApiKey": { params: z.input<typeof S.ProgramIdInput>; result: ApiKeyState };
  /** The dashboard's Stripe screen: what to configure at Stripe, the connection, the secrets' state and the newest event. */
  "processor.getConnection": { params: z.input<typeof S.ProgramIdInput>; result: ProcessorConnectionView };
  /** Links the program's connected account (through programs.updateProcessorConnection); answers as getConnection. */
  "processor.linkAccount": { params: z.input<typeof S.LinkAccountInput>; result: ProcessorConnectionView };
  /** The secret of the program's account endpoint (`endpoint: "account"`, the default) or of its Connect endpoint (`"connect"`). */
  "processor.setWebhookSecret": { params: z.input<typeof S.SetWebhookSecretInput>; result: WebhookSecretState };
  "processor.removeWebhookSecret": { params: z.input<typeof S.RemoveWebhookSecretInput>; result: WebhookSecretState };
  /** From rewards: which of these product and price ids the program's Stripe account does not have. */
  "processor.checkProducts": { params: z.input<typeof S.CheckProductsInput>; result: { unknown: string[] } };
  /**
   * A partner's coupon code (docs/processor-webhooks.md, "Coupon codes"): found or created in Stripe with the program's
   * key, then stored by attribution. 409 coupon_code_taken, processor_key_missing; 422 unknown_promotion_code,
   * unknown_coupon, partner_not_approved, processor_key_refused; 404 for a partner not enrolled; 503 Stripe unreachable.
   */
  "processor.createCouponCode": { params: z.input<typeof S.CreateCouponCodeInput>; result: CouponCodeView };
  /** The merchant's Stripe coupons, for the console's picker (at most 500). */
  "processor.listCoupons": { params: z.input<typeof S.ProgramIdInput>; result: { programId: number; data: CouponView[]; hasMore: boolean } };

  // Paying partners through Stripe Connect (docs/payouts.md, "Stripe Connect (Express)").
  /** From commissions: the stored Express accounts of these partners (partners without one are left out). Stripe is not asked. */
  "processor.partnerPayoutAccounts": { params: z.input<typeof S.PartnerPayoutAccountsInput>; result: PartnerPayoutAccountView[] };
  /**
   * From the portal: the partner's Express account (created once, under the program's restricted key) and a new
   * onboarding link for it. 409 processor_key_missing when the program has no key; 503 when Stripe cannot be reached.
   */
  "processor.startPartnerOnboarding": { params: z.input<typeof S.StartPartnerOnboardingInput>; result: { accountId: string; url: string } };
  /** The account's state read again from Stripe and stored; null when the partner has no account. Throws when Stripe cannot answer. */
  "processor.refreshPartnerAccount": { params: z.input<typeof S.PartnerAccountInput>; result: PartnerPayoutAccountView | null };
  /**
   * From commissions' payout worker: the payout's transfer, made once (found again by its transfer group on a
   * retry). Throws `processor_unavailable` (retry later, the payout stays processing) when Stripe cannot be
   * reached or answers 5xx; every other answer is the payout's outcome.
   */
  /** From commissions' payout worker: a payout as Stripe customer balance credit, made once; throws `processor_unavailable` as transferPayout. */
  "processor.creditCustomerBalance": { params: z.input<typeof S.CreditCustomerBalanceInput>; result: TransferPayoutResult };
  "processor.transferPayout": { params: z.input<typeof S.TransferPayoutInput>; result: TransferPayoutResult };

  // Paying partners through PayPal's Payouts API (docs/payouts.md, "PayPal").
  /** The program's PayPal API credentials as the dashboard shows them: never the secret, only a hint of the client id. */
  "processor.getPaypalCredentials": { params: z.input<typeof S.ProgramIdInput>; result: PaypalCredentialsState };
  /** Checked with PayPal (an OAuth token) before they are stored: 422 paypal_credentials_refused, 503 when PayPal cannot be reached. */
  "processor.setPaypalCredentials": { params: z.input<typeof S.SetPaypalCredentialsInput>; result: PaypalCredentialsState };
  "processor.removePaypalCredentials": { params: z.input<typeof S.ProgramIdInput>; result: PaypalCredentialsState };
  /** From commissions: whether a run's PayPal payouts go through the API (true) or into the file the merchant uploads. PayPal is not asked. */
  "processor.paypalPayoutsConfigured": { params: z.input<typeof S.ProgramIdInput>; result: { configured: boolean } };
  /**
   * From commissions' payout worker: the run's PayPal batch, made once (a batch stored for the run is returned
   * without asking PayPal; PayPal replays the first answer to the request id `run-<runId>`, and refuses a second
   * batch of the same sender_batch_id, whose batch is then taken as the run's). Throws `processor_unavailable`
   * (retryable: nothing is known to have happened; call again later with the same items) when PayPal cannot be
   * reached, times out, rate-limits or answers 5xx; `processor_key_missing` without credentials;
   * `paypal_credentials_refused` when PayPal refuses the credentials or the app may not make payouts; any other
   * refusal (insufficient funds, a bad receiver) is `invalid_request`. A refusal's `data` is `{ code, reason }`:
   * PayPal's error name (e.g. INSUFFICIENT_FUNDS) and message, to fail the run's PayPal payouts with.
   */
  "processor.sendPaypalPayouts": { params: z.input<typeof S.SendPaypalPayoutsInput>; result: { batchId: string } };
  /**
   * From commissions' payout worker: each payout of the run's batch as PayPal reports it now ([] when no batch was
   * made for the run). Throws as sendPaypalPayouts does.
   */
  "processor.paypalPayoutItems": { params: z.input<typeof S.PaypalPayoutItemsInput>; result: PaypalPayoutItemResult[] };
}

/** A coupon of the merchant's Stripe account, as the console's picker shows it. */
export interface CouponView {
  id: string;
  name: string | null;
  /** e.g. 25.5 (percent). */
  percentOff: number | null;
  /** Minor units of `currency`. */
  amountOff: number | null;
  currency: string | null;
  /** once, repeating (for durationInMonths) or forever. */
  duration: string;
  durationInMonths: number | null;
  /** Whether it can still be applied (not expired, redemptions left). */
  valid: boolean;
}

/** `GET /api/programs/:programId/processor/paypal`: the program's PayPal API credentials, the secret never shown. */
export interface PaypalCredentialsState {
  programId: number;
  configured: boolean;
  mode: "sandbox" | "live" | null;
  /** e.g. `AZDx…Kq3w`. */
  clientIdHint: string | null;
  setAt: string | null;
  /** When PayPal last refused the credentials in a call (unknown, revoked, Payouts not enabled), and what it said. */
  failedAt: string | null;
  failure: string | null;
}

/**
 * A payout of a run's PayPal batch as PayPal reports it: `paid` (SUCCESS); `failed` (FAILED, RETURNED, BLOCKED,
 * REFUNDED, REVERSED, DENIED) with PayPal's error name (or the status) as `code` and its message as `reason`;
 * `pending` (PENDING, UNCLAIMED until the receiver claims it or PayPal returns it after 30 days, ONHOLD, NEW).
 * `itemId` is PayPal's payout_item_id.
 */
export interface PaypalPayoutItemResult {
  payoutId: number;
  outcome: "paid" | "failed" | "pending";
  itemId: string | null;
  code: string | null;
  reason: string | null;
}

/** A partner's Express account as commissions and the portal see it. `ready`: its transfers capability is active. */
export interface PartnerPayoutAccountView {
  partnerId: number;
  accountId: string;
  ready: boolean;
  detailsSubmitted: boolean;
}

/**
 * A payout's transfer: made (or found, made by an earlier attempt), or refused for good with a code (Stripe's own,
 * such as balance_insufficient, or stripe_account_missing, stripe_account_not_ready, processor_key_missing,
 * processor_key_invalid) and a reason a person can act on.
 */
export type TransferPayoutResult = { outcome: "paid"; transferId: string } | { outcome: "failed"; code: string; reason: string };

export interface ApiKeyState {
  programId: number;
  configured: boolean;
  /** e.g. `rk_live_…4f2A`. */
  keyHint: string | null;
  setAt: string | null;
  /** When a call with the key last failed because of the key (revoked, a permission missing), and what Stripe said. */
  failedAt: string | null;
  failure: string | null;
}

/** The program's own webhook signing secret (of its endpoint, `webhookPath`): never shown, only its hint. Nothing else verifies that endpoint. */
export interface WebhookSecretState {
  programId: number;
  configured: boolean;
  /** e.g. `whsec_…abcd`. */
  hint: string | null;
  setAt: string | null;
}

/** The newest stored event of a program, with its result as the event log keeps it. */
export interface LastProcessorEvent {
  id: string;
  type: string;
  status: ProcessorEvent["status"];
  receivedAt: string;
  processedAt: string | null;
  attempts: number;
  /** What processing did or why it was ignored or rejected (`reason`), as the operator's event log shows it. */
  outcome: Record<string, unknown> | null;
  /** The temporary error of a failed attempt, retried by the processor. */
  lastError: string | null;
}

/** `GET /api/programs/:programId/processor`: everything the dashboard's Stripe screen shows. */
export interface ProcessorConnectionView {
  programId: number;
  /**
   * The program's own webhook endpoint (`/api/v1/webhooks/processor/programs/<id>`), for a webhook endpoint in the
   * merchant's own Stripe account, verified with `signingSecret`; the page prefixes its own origin.
   */
  webhookPath: string;
  /**
   * The platform's Connect endpoint (`/api/v1/webhooks/processor`, verified with PROCESSOR_WEBHOOK_SECRET; events
   * reach the program through `connection.accountId`), or null when the service has no such secret.
   */
  platformWebhookPath: string | null;
  requiredEvents: string[];
  optionalEvents: string[];
  /** To select too when partners are paid by Stripe transfer (docs/payouts.md). */
  payoutEvents: string[];
  connection: {
    /** not_connected, onboarding, restricted, connected or disconnected (or what an operator set). */
    status: string;
    accountId: string | null;
    chargesEnabled: boolean;
    payoutsEnabled: boolean;
    detailsSubmitted: boolean;
    connectedAt: string | null;
  };
  signingSecret: WebhookSecretState;
  /** The secret of the program's Connect endpoint (partners' Express accounts' account.updated), if entered. */
  connectSigningSecret: WebhookSecretState;
  restrictedKey: ApiKeyState;
  lastEvent: LastProcessorEvent | null;
}

/** `GET /api/programs/:programId/processor/paddle`: everything the dashboard's Paddle screen shows; keys are never shown. */
export interface PaddleConnectionView {
  programId: number;
  /** The program's notification endpoint (`/api/v1/webhooks/paddle/programs/<id>`); the page prefixes its own origin. */
  webhookPath: string;
  /** The notification types to select at Paddle. */
  requiredEvents: string[];
  /** sandbox: test sales (no commission); live: real sales. */
  environment: "sandbox" | "live";
  /** The notification destination's secret key (`pdl_ntfset_…abcd`). */
  secretKey: WebhookSecretState;
  /** The optional read-only API key: the customer's email and the discount's code of a sale. */
  apiKey: ApiKeyState;
  lastEvent: LastProcessorEvent | null;
}
