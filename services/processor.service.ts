import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import type Stripe from "stripe";
import { z } from "zod";
import { call, type ResultOf } from "./bus";
import { AppError, ConflictError, InvalidRequestError, NotFoundError, ServiceUnavailableError } from "../shared/errors";
import { countMetric, failedProcessorEventOutcome, METRICS, processorEventOutcome, processorEventTypeLabel } from "../shared/metrics";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { parseInput } from "../shared/validation";
import { RetryLaterError, type CoreHandlerContext, type EventHandler, type HandlerResult } from "./processor/handler";
import { handleAccountDeauthorized, handleAccountUpdated } from "./processor/handlers/account";
import { handleCheckoutSessionPaid, handleCheckoutSessionPaymentFailed } from "./processor/handlers/checkout-session";
import { handleDispute } from "./processor/handlers/disputes";
import { handleInvoicePaid } from "./processor/handlers/invoice-paid";
import { handleChargeSucceeded, handleInvoicePaymentPaid, handlePaymentIntentSucceeded } from "./processor/handlers/payment-links";
import { handleChargeRefunded, handleRefundObject } from "./processor/handlers/refunds";
import { handlePartnerAccountUpdated, handleTransferReversed } from "./processor/handlers/partner-payouts";
import { createProcessorRepository } from "./processor/storage";
import { PADDLE_EVENT_PREFIX, type PartnerPayoutAccount, type ProcessorRepository } from "./processor/repository";
import { checkPaddleApiKey, paddleApiUrl } from "./processor/paddle/api";
import { PADDLE_HANDLERS } from "./processor/paddle/handlers";
import { PaddleNotification } from "./processor/paddle/objects";
import { verifyPaddleSignature } from "../shared/paddle-signature";
import { PROCESSOR } from "./processor/endpoints";
import { apiKeyState, checkApiKey, unknownProductsOf } from "./processor/api-key";
import { createCouponCode, listCoupons } from "./processor/coupon-codes";
import { connectionView, paddleConnectionView, webhookSecretState } from "./processor/connection";
import type { PaddleConnectionView, ProcessorConnectionView } from "./processor/contract";
import { stripeApiUrlFromEnv, stripeLibrary } from "./processor/stripe-api";
import { refreshAccount, startOnboarding, transferPayout } from "./processor/stripe-connect";
import { creditCustomerBalance } from "./processor/customer-credit";
import { partnerPayoutAccountView } from "./processor/partner-payouts";
import { PaypalTokenCache, paypalPayoutItems, removePaypalCredentials, sendPaypalPayouts, setPaypalCredentials, type PaypalContext } from "./processor/paypal-api";
import { paypalCredentialsState } from "./processor/paypal";
import * as S from "./processor/schemas";
import type { PROCESSOR_WEBHOOK_EVENTS } from "../shared/processor-webhook-events";

type ProcessorWebhookEventType = (typeof PROCESSOR_WEBHOOK_EVENTS)[keyof typeof PROCESSOR_WEBHOOK_EVENTS][number];

/**
 * The event types we act on (docs/processor-webhooks.md); every other type is acknowledged and ignored. Exactly the
 * types the set-up asks merchants to enable (shared/processor-webhook-events.ts): the compiler checks both ways.
 */
export const HANDLERS: Record<string, EventHandler> = {
  "checkout.session.completed": handleCheckoutSessionPaid,
  "checkout.session.async_payment_succeeded": handleCheckoutSessionPaid,
  "checkout.session.async_payment_failed": handleCheckoutSessionPaymentFailed,
  "invoice.payment_succeeded": handleInvoicePaid,
  "invoice.paid": handleInvoicePaid,
  "invoice_payment.paid": handleInvoicePaymentPaid,
  "charge.succeeded": handleChargeSucceeded,
  "payment_intent.succeeded": handlePaymentIntentSucceeded,
  "charge.refunded": handleChargeRefunded,
  "refund.created": handleRefundObject,
  "refund.updated": handleRefundObject,
  "refund.failed": handleRefundObject,
  "charge.refund.updated": handleRefundObject,
  "charge.dispute.created": handleDispute,
  "charge.dispute.updated": handleDispute,
  "charge.dispute.funds_withdrawn": handleDispute,
  "charge.dispute.funds_reinstated": handleDispute,
  "charge.dispute.closed": handleDispute,
  "account.updated": handleAccountUpdated,
  "account.application.deauthorized": handleAccountDeauthorized,
  // Paying partners through Stripe Connect (docs/payouts.md): a payout's transfer reversed at Stripe. The
  // `account.updated` of a partner's Express account is told apart by its account (handlePartnerAccountUpdated).
  "transfer.reversed": handleTransferReversed,
  "transfer.updated": handleTransferReversed,
} satisfies Record<ProcessorWebhookEventType, EventHandler>;

/** Every type some handler acts on (the metrics' labels): Stripe's and Paddle's. */
const KNOWN_EVENT_TYPES: Record<string, unknown> = { ...HANDLERS, ...PADDLE_HANDLERS };

/** The envelope fields we rely on; the object itself is validated by each handler. */
const EventEnvelope = z.looseObject({
  id: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_]+$/, "must be a processor event id"),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative(),
  livemode: z.boolean(),
  account: z
    .string()
    .max(255)
    .regex(/^[A-Za-z0-9_]+$/)
    .nullish(),
  data: z.looseObject({ object: z.looseObject({}) }),
});

type Vars = StorageVars<ProcessorRepository> & {
  webhookSecret?: string;
  liveMode: boolean;
  toleranceSeconds: number;
  leaseMs: number;
  unlinkedRetrySeconds: number;
  stripeApiUrl: string;
  /** `PAYPAL_API_URL` (the tests' double), or null: PayPal's own API of each mode (docs/payouts.md, "PayPal"). */
  paypalApiUrl: string | null;
  /** Each program's PayPal access token, until shortly before it expires. */
  paypalTokens: PaypalTokenCache;
  /** `PADDLE_API_URL` (the tests' double), or null: Paddle's own API of each environment. */
  paddleApiUrl: string | null;
};

/** PostgreSQL refuses NUL in text and JSON; what we store of an event's data must not carry it. */
const withoutNul = <T>(value: T): T => JSON.parse(JSON.stringify(value).replace(/\\u0000/g, "")) as T;

/** Only a temporary problem is worth the processor's retry; bad data would fail the same way forever. */
const isPermanent = (err: unknown) => (err instanceof AppError ? err.errorCode === "invalid_request" : (err as { type?: string })?.type === "invalid_request");

/**
 * Owns the processor's (Stripe) webhooks: signature check, the event's program
 * (the one of a program's own endpoint, or on the platform's Connect endpoint
 * the one its connected account is linked to), a claim per event id (released
 * when processing fails for a temporary reason, so the processor's retry is
 * processed), and the handlers, which act only through the owners' actions.
 */
/** An event as the event log keeps it: Stripe's id, or `paddle:<program id>:<event_id>` for Paddle's notifications. */
type Notice = { eventId: string; type: string };

type Methods = {
  paypalContext(): PaypalContext;
  connectionOf(program: ResultOf<"programs.get">): Promise<ProcessorConnectionView>;
  paddleConnectionOf(programId: number): Promise<PaddleConnectionView>;
  partnerAccountOf(program: ResultOf<"programs.get">, event: Stripe.Event): Promise<PartnerPayoutAccount | null>;
  record(notice: Notice, programId: number | null, status: "ignored", outcome: { reason: string }): Promise<Record<string, unknown>>;
  processOnce(
    ctx: Context,
    notice: Notice,
    program: CoreHandlerContext["program"],
    at: { createdSeconds: number; testMode: boolean },
    run: (core: CoreHandlerContext) => Promise<HandlerResult>,
  ): Promise<Record<string, unknown>>;
};

const ProcessorService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "processor",
  mixins: [storageMixin(createProcessorRepository)],

  // Business metrics (METRICS=true, shared/metrics.ts): every webhook call, by event type and outcome.
  hooks: {
    // Params are validated against each action's declared input (processor/endpoints.ts, shared/endpoint.ts).
    before: { "*": inputValidator(PROCESSOR) },
    after: {
      "handleWebhook|handlePaddleWebhook"(ctx: Context, res: Parameters<typeof processorEventOutcome>[0]) {
        countMetric(this.broker, METRICS.processorEvents, { type: processorEventTypeLabel(ctx.locals.eventType, KNOWN_EVENT_TYPES), outcome: processorEventOutcome(res) });
        return res;
      },
    },
    error: {
      "handleWebhook|handlePaddleWebhook"(ctx: Context, err: unknown) {
        countMetric(this.broker, METRICS.processorEvents, { type: processorEventTypeLabel(ctx.locals.eventType, KNOWN_EVENT_TYPES), outcome: failedProcessorEventOutcome(err) });
        throw err;
      },
    },
  },

  created() {
    this.webhookSecret = process.env.PROCESSOR_WEBHOOK_SECRET || undefined;
    this.liveMode = process.env.PROCESSOR_LIVEMODE !== "false";
    this.toleranceSeconds = Number(process.env.PROCESSOR_WEBHOOK_TOLERANCE_SECONDS ?? 300);
    this.leaseMs = Number(process.env.PROCESSOR_EVENT_LEASE_MS ?? 60_000);
    this.unlinkedRetrySeconds = Number(process.env.PROCESSOR_UNLINKED_RETRY_SECONDS ?? 3600);
    this.stripeApiUrl = stripeApiUrlFromEnv();
    this.paypalApiUrl = process.env.PAYPAL_API_URL || null;
    this.paypalTokens = new PaypalTokenCache();
    this.paddleApiUrl = process.env.PADDLE_API_URL || null;
  },

  actions: {
    /**
     * `POST /api/v1/webhooks/processor` (the platform's Connect endpoint: PROCESSOR_WEBHOOK_SECRET, programs found by
     * their linked account) and `POST /api/v1/webhooks/processor/programs/:programId` (`programId`: a program's own
     * endpoint, for a merchant's own Stripe account: that program's secrets only, of its account endpoint and of its
     * Connect endpoint (partners' Express accounts); its events are that program's), with the raw body and the
     * `Stripe-Signature` header (docs/processor-webhooks.md).
     */
    handleWebhook: {
      visibility: "public",
      async handler(ctx: Context) {
        const { payload, signature, programId } = parseInput(S.WebhookInput, ctx.params);
        // A program's endpoint takes the events of its account endpoint and of its Connect endpoint (partners'
        // Express accounts), each signed with that endpoint's secret.
        const secrets =
          programId === undefined
            ? [this.webhookSecret].filter((s): s is string => Boolean(s))
            : (await Promise.all([this.repo.getWebhookSecret(programId, "account"), this.repo.getWebhookSecret(programId, "connect")])).flatMap((s) => (s ? [s.signingSecret] : []));
        if (!secrets.length && programId === undefined) throw new ServiceUnavailableError("Processor webhooks are not configured: set PROCESSOR_WEBHOOK_SECRET.");
        // The same answer for a program that does not exist: the endpoint is public.
        if (!secrets.length)
          throw new AppError(
            "webhook_secret_missing",
            `Program ${programId} has no Stripe webhook signing secret: enter the signing secret of this webhook endpoint (whsec_...) in Settings → Stripe, then resend the event from Stripe.`,
          );
        let refusal: Error | null = null;
        for (const secret of secrets) {
          try {
            stripeLibrary().webhooks.signature!.verifyHeader(payload, signature ?? "", secret, this.toleranceSeconds);
            refusal = null;
            break;
          } catch (err) {
            refusal = err as Error;
          }
        }
        // The library refuses only old timestamps; one further ahead than the tolerance is refused too, so a
        // captured delivery can never be replayed for longer than the tolerance.
        const t = Number(/(?:^|,)\s*t=(\d+)/.exec(signature ?? "")?.[1]);
        if (!refusal && t > Date.now() / 1000 + this.toleranceSeconds) refusal = new Error("Timestamp is in the future, outside the tolerance zone");
        if (refusal) throw new AppError("invalid_signature", `The Stripe-Signature header does not verify: ${refusal.message.split(".")[0]}.`);
        let json: unknown;
        try {
          json = JSON.parse(payload);
        } catch {
          throw new InvalidRequestError("The webhook body is signed but is not valid JSON.");
        }
        const event = parseInput(EventEnvelope, json) as unknown as Stripe.Event;
        ctx.locals.eventType = event.type;
        const notice = { eventId: event.id, type: event.type };

        let handler: EventHandler | undefined = HANDLERS[event.type];
        const notUsed = { received: true, handled: false, reason: `event type '${event.type}' is not used` } as const;
        let program: CoreHandlerContext["program"] | null;
        if (programId !== undefined) {
          // Signed with the program's own secret, so the program's: an event of a merchant's own account names no
          // account; one of a partner's Express account (from the program's Connect endpoint) names that account;
          // one naming any other account than the program's linked one is not the program's.
          program = await call(ctx, "programs.get", { programId });
          if (await this.partnerAccountOf(program, event)) handler = event.type === "account.updated" ? handlePartnerAccountUpdated : undefined;
          else if (event.account && event.account !== program.processor.accountId) {
            throw new AppError(
              "processor_account_mismatch",
              `The event is of Stripe account '${event.account}', not of the account linked to program ${programId}; nothing was recorded. This endpoint takes the events of the program's own Stripe account only.`,
            );
          }
          if (!handler) return notUsed;
        } else {
          if (!handler) return notUsed;
          if (!event.account) return this.record(notice, null, "ignored", { reason: "not an event of a connected account" });
          program = await call(ctx, "programs.findByProcessorAccount", { accountId: event.account });
          if (!program) return this.record(notice, null, "ignored", { reason: `no program is connected to account '${event.account}'` });
        }
        const testEvent = !event.livemode;
        if (testEvent && this.liveMode && !program.testMode) {
          this.logger.warn(`Processor event ${event.id} (${event.type}) is a test-mode event for live program ${program.id}: ignored.`);
          return this.record(notice, program.id, "ignored", { reason: "test-mode event for a live program" });
        }
        const stripeHandler = handler;
        return this.processOnce(ctx, notice, program, { createdSeconds: event.created, testMode: testEvent }, (core) => stripeHandler({ ...core, event, stripeApiUrl: this.stripeApiUrl }));
      },
    },

    /**
     * `POST /api/v1/webhooks/paddle/programs/:programId`: a Paddle Billing notification (docs/processor-webhooks.md,
     * "Paddle Billing"), verified with the program's destination secret key over the raw body, then processed once
     * per program (`paddle:<program id>:<event_id>`: one Paddle account's event reaches each of its programs'
     * destinations, and a replay is the same event) by the same rules as Stripe's events. A sandbox connection's
     * sales are test sales.
     */
    handlePaddleWebhook: {
      visibility: "public",
      async handler(ctx: Context) {
        const { payload, signature, programId } = parseInput(S.PaddleWebhookInput, ctx.params);
        const connection = await this.repo.getPaddleConnection(programId);
        // The same answer for a program that does not exist: the endpoint is public.
        if (!connection?.secretKey) {
          throw new AppError(
            "webhook_secret_missing",
            `Program ${programId} has no Paddle notification secret key: enter the secret key of this notification destination (pdl_ntfset_...) in Settings → Paddle, then replay the notification from Paddle.`,
          );
        }
        const check = verifyPaddleSignature({ secret: connection.secretKey, body: payload, header: signature, toleranceSeconds: this.toleranceSeconds });
        if (!check.ok) throw new AppError("invalid_signature", `The Paddle-Signature header does not verify (${check.reason.replace(/_/g, " ")}).`);
        let json: unknown;
        try {
          json = JSON.parse(payload);
        } catch {
          throw new InvalidRequestError("The notification body is signed but is not valid JSON.");
        }
        const notification = parseInput(PaddleNotification, json);
        ctx.locals.eventType = notification.event_type;
        const handler = Object.hasOwn(PADDLE_HANDLERS, notification.event_type) ? PADDLE_HANDLERS[notification.event_type] : undefined;
        if (!handler) return { received: true, handled: false, reason: `notification type '${notification.event_type}' is not used` };
        const program = await call(ctx, "programs.get", { programId });
        const notice = { eventId: `${PADDLE_EVENT_PREFIX}${programId}:${notification.event_id}`, type: notification.event_type };
        const testMode = connection.environment === "sandbox";
        if (testMode && this.liveMode && !program.testMode) {
          this.logger.warn(`Paddle notification ${notification.event_id} (${notification.event_type}) is from the sandbox for live program ${program.id}: ignored.`);
          return this.record(notice, program.id, "ignored", { reason: "sandbox notification for a live program" });
        }
        const createdSeconds = Math.floor(new Date(notification.occurred_at).getTime() / 1000);
        const paddle = { connection, apiUrl: paddleApiUrl(connection.environment, this.paddleApiUrl) };
        return this.processOnce(ctx, notice, program, { createdSeconds, testMode }, (core) => handler({ ...core, notification, paddle }));
      },
    },

    /** The dashboard's Paddle screen. */
    getPaddleConnection: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await call(ctx, "programs.get", { programId });
        return this.paddleConnectionOf(programId);
      },
    },

    /** A new API key is checked with Paddle (in the environment it will be used in) before it is stored. */
    setPaddleConnection: {
      async handler(ctx: Context<Input<typeof S.SetPaddleConnectionInput>>) {
        const { programId, environment, secretKey, apiKey } = ctx.params;
        await call(ctx, "programs.get", { programId });
        if (apiKey) {
          const keyEnvironment = environment ?? (await this.repo.getPaddleConnection(programId))?.environment ?? "live";
          await checkPaddleApiKey(apiKey, keyEnvironment, paddleApiUrl(keyEnvironment, this.paddleApiUrl));
        }
        await this.repo.setPaddleConnection(programId, { environment, secretKey, apiKey }, new Date());
        return this.paddleConnectionOf(programId);
      },
    },

    /** One stored event with its outcome (`cli processor-event`). */
    getEvent: {
      async handler(ctx: Context<Input<typeof S.GetEventInput>>) {
        const { eventId } = ctx.params;
        return this.repo.getEvent(eventId);
      },
    },

    getApiKey: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await call(ctx, "programs.get", { programId });
        return apiKeyState(programId, await this.repo.getApiKey(programId));
      },
    },

    /** Checked with Stripe before it is stored: a key that cannot read what we need is refused now, not at the next sale. */
    setApiKey: {
      async handler(ctx: Context<Input<typeof S.SetApiKeyInput>>) {
        const { programId, restrictedKey } = ctx.params;
        await call(ctx, "programs.get", { programId });
        await checkApiKey(restrictedKey, this.stripeApiUrl);
        await this.repo.setApiKey(programId, restrictedKey, new Date());
        return apiKeyState(programId, await this.repo.getApiKey(programId));
      },
    },

    removeApiKey: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await call(ctx, "programs.get", { programId });
        await this.repo.setApiKey(programId, null, new Date());
        return apiKeyState(programId, null);
      },
    },

    /** The dashboard's Stripe screen: the connection is programs', the rest is ours. */
    getConnection: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        return this.connectionOf(await call(ctx, "programs.get", { programId }));
      },
    },

    /** A new account starts onboarding (account.updated says more); the one already linked is left as it is. */
    linkAccount: {
      async handler(ctx: Context<Input<typeof S.LinkAccountInput>>) {
        const { programId, accountId } = ctx.params;
        const program = await call(ctx, "programs.get", { programId });
        if (program.processor.accountId === accountId) return this.connectionOf(program);
        const update = { programId, accountId, connectionStatus: "onboarding", chargesEnabled: false, payoutsEnabled: false, detailsSubmitted: false };
        const linked = await call(ctx, "programs.updateProcessorConnection", update).catch((err: unknown) => {
          // Programs' message names the other program: not for another workspace's eyes.
          if ((err as { type?: string } | null)?.type === "conflict") throw new ConflictError(`Stripe account '${accountId}' is already linked to another program.`);
          throw err;
        });
        if (!linked) throw new NotFoundError(`No program with id ${programId}.`);
        return this.connectionOf(linked);
      },
    },

    setWebhookSecret: {
      async handler(ctx: Context<Input<typeof S.SetWebhookSecretInput>>) {
        const { programId, signingSecret, endpoint } = ctx.params;
        await call(ctx, "programs.get", { programId });
        await this.repo.setWebhookSecret(programId, signingSecret, new Date(), endpoint);
        return webhookSecretState(programId, await this.repo.getWebhookSecret(programId, endpoint));
      },
    },

    removeWebhookSecret: {
      async handler(ctx: Context<Input<typeof S.RemoveWebhookSecretInput>>) {
        const { programId, endpoint } = ctx.params;
        await call(ctx, "programs.get", { programId });
        await this.repo.setWebhookSecret(programId, null, new Date(), endpoint);
        return webhookSecretState(programId, null);
      },
    },

    checkProducts: {
      async handler(ctx: Context<Input<typeof S.CheckProductsInput>>) {
        const { programId, productIds, priceIds } = ctx.params;
        return { unknown: await unknownProductsOf(programId, await this.repo.getApiKey(programId), productIds, priceIds, this.stripeApiUrl) };
      },
    },

    /** A partner's coupon code: its Stripe promotion code found or created with the program's key, then stored by attribution. */
    createCouponCode: {
      async handler(ctx: Context<Input<typeof S.CreateCouponCodeInput>>) {
        return createCouponCode({ repo: this.repo, stripeApiUrl: this.stripeApiUrl }, ctx, ctx.params);
      },
    },

    /** The merchant's Stripe coupons (the console's picker for a created promotion code). */
    listCoupons: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await call(ctx, "programs.get", { programId });
        return listCoupons({ repo: this.repo, stripeApiUrl: this.stripeApiUrl }, programId);
      },
    },

    /** Partners' Express accounts as stored (commissions decides from them who a run can pay through Stripe). */
    partnerPayoutAccounts: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerPayoutAccountsInput>>) {
        const { programId, partnerIds } = ctx.params;
        return (await this.repo.listPartnerPayoutAccounts(programId, partnerIds)).map(partnerPayoutAccountView);
      },
    },

    /** The portal's "Connect with Stripe": the partner's Express account (made once) and an onboarding link. */
    startPartnerOnboarding: {
      async handler(ctx: Context<Input<typeof S.StartPartnerOnboardingInput>>) {
        return startOnboarding({ repo: this.repo, stripeApiUrl: this.stripeApiUrl }, ctx.params);
      },
    },

    refreshPartnerAccount: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerAccountInput>>) {
        return refreshAccount({ repo: this.repo, stripeApiUrl: this.stripeApiUrl }, ctx.params);
      },
    },

    /** A payout as Stripe customer balance credit, made once whatever the retries (docs/rewards.md, "Rewards other than cash"). */
    creditCustomerBalance: {
      async handler(ctx: Context<Input<typeof S.CreditCustomerBalanceInput>>) {
        return creditCustomerBalance({ repo: this.repo, stripeApiUrl: this.stripeApiUrl }, ctx.params);
      },
    },

    /** A payout's transfer, made once whatever the retries (docs/payouts.md, "Stripe Connect (Express)"). */
    transferPayout: {
      async handler(ctx: Context<Input<typeof S.TransferPayoutInput>>) {
        return transferPayout({ repo: this.repo, stripeApiUrl: this.stripeApiUrl }, ctx.params);
      },
    },

    /** The dashboard's PayPal payouts settings: the credentials' state, never the secret. */
    getPaypalCredentials: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await call(ctx, "programs.get", { programId });
        return paypalCredentialsState(programId, await this.repo.getPaypalCredentials(programId));
      },
    },

    /** Checked with PayPal (a token that may make payouts) before they are stored: refused ones are never kept. */
    setPaypalCredentials: {
      async handler(ctx: Context<Input<typeof S.SetPaypalCredentialsInput>>) {
        const { programId, clientId, clientSecret, mode } = ctx.params;
        await call(ctx, "programs.get", { programId });
        return paypalCredentialsState(programId, await setPaypalCredentials(this.paypalContext(), programId, { clientId, clientSecret, mode }));
      },
    },

    removePaypalCredentials: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await call(ctx, "programs.get", { programId });
        await removePaypalCredentials(this.paypalContext(), programId);
        return paypalCredentialsState(programId, null);
      },
    },

    /** Whether a run's PayPal payouts go through PayPal's API (commissions asks when it makes a run). */
    paypalPayoutsConfigured: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        return { configured: (await this.repo.getPaypalCredentials(ctx.params.programId)) !== null };
      },
    },

    /** A run's PayPal batch, made once whatever the retries (docs/payouts.md, "PayPal"). */
    sendPaypalPayouts: {
      async handler(ctx: Context<Input<typeof S.SendPaypalPayoutsInput>>) {
        return sendPaypalPayouts(this.paypalContext(), ctx.params);
      },
    },

    /** Each payout of a run's PayPal batch as PayPal reports it now. */
    paypalPayoutItems: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PaypalPayoutItemsInput>>) {
        return paypalPayoutItems(this.paypalContext(), ctx.params);
      },
    },

    /** The newest stored events, e.g. the rejected ones (`cli processor-events --status rejected`). */
    listEvents: {
      async handler(ctx: Context<Input<typeof S.ListEventsInput>>) {
        const { status, limit } = ctx.params;
        return this.repo.listEvents({ status, limit });
      },
    },
  },

  methods: {
    paypalContext() {
      return { repo: this.repo, apiUrlOverride: this.paypalApiUrl, tokens: this.paypalTokens };
    },

    async connectionOf(program: ResultOf<"programs.get">) {
      const [secret, connectSecret, apiKey, lastEvent] = await Promise.all([
        this.repo.getWebhookSecret(program.id),
        this.repo.getWebhookSecret(program.id, "connect"),
        this.repo.getApiKey(program.id),
        this.repo.lastEventOfProgram(program.id, "stripe"),
      ]);
      return connectionView(program, { secret, connectSecret, platformWebhooks: Boolean(this.webhookSecret), apiKey, lastEvent });
    },

    /**
     * The partner's Express account an event is of, at a program's own endpoint: the account the event names (a
     * Connect event), or the one an account.updated is about; never the program's own linked account.
     */
    async partnerAccountOf(program: ResultOf<"programs.get">, event: Stripe.Event) {
      const about = event.type === "account.updated" ? (event.data.object as { id?: unknown }).id : undefined;
      const accountId = event.account ?? (typeof about === "string" ? about : null);
      if (!accountId || accountId === program.processor.accountId) return null;
      return this.repo.findPartnerPayoutAccount(program.id, accountId);
    },

    async paddleConnectionOf(programId: number) {
      const [connection, lastEvent] = await Promise.all([this.repo.getPaddleConnection(programId), this.repo.lastEventOfProgram(programId, "paddle")]);
      return paddleConnectionView(programId, connection, lastEvent);
    },

    /** Keeps a trace of an event we will never act on, so an operator can see why (`cli processor-events`). */
    async record(notice: Notice, programId: number | null, status: "ignored", outcome: { reason: string }) {
      const { claimed } = await this.repo.claimEvent({ ...notice, programId }, this.leaseMs, new Date());
      if (claimed) await this.repo.finishEvent(notice.eventId, status, withoutNul(outcome), new Date());
      return { received: true, handled: false, ...outcome };
    },

    /**
     * Runs a verified event's handler once: an event id is processed once, for one program (the same id received
     * for another program, e.g. a merchant's forgery with its own secret, is a duplicate that touches neither); a
     * temporary failure releases it for the platform's retry (503), bad data is rejected for good (2xx).
     */
    async processOnce(ctx, notice, program, at, run) {
      const known = await this.repo.getEvent(notice.eventId);
      if (known && known.programId !== null && known.programId !== program.id) return { received: true, duplicate: true };
      const { claimed, event: stored } = await this.repo.claimEvent({ ...notice, programId: program.id }, this.leaseMs, new Date());
      if (!claimed) {
        if (stored.status !== "processing" && stored.status !== "failed") return { received: true, duplicate: true, status: stored.status };
        throw new ConflictError(`Event '${notice.eventId}' is being processed by another instance; retry later.`);
      }
      let result: HandlerResult | { status: "rejected"; outcome: Record<string, unknown> };
      try {
        const core = { ctx, repo: this.repo, program, eventCreatedSeconds: at.createdSeconds, testMode: at.testMode, logger: this.logger, unlinkedRetrySeconds: this.unlinkedRetrySeconds };
        result = await run(core);
      } catch (err) {
        const message = String((err as Error).message ?? err);
        if (!isPermanent(err)) {
          await this.repo.releaseEvent(notice.eventId, withoutNul(message));
          if (!(err instanceof RetryLaterError)) this.logger.warn(`Processor event ${notice.eventId} (${notice.type}) failed; released for retry.`, err);
          throw new ServiceUnavailableError(`Event '${notice.eventId}' could not be processed yet (${message}); the platform will retry it.`);
        }
        this.logger.warn(`Processor event ${notice.eventId} (${notice.type}) rejected: ${message}`);
        result = { status: "rejected", outcome: { reason: `rejected: ${message}` } };
      }
      await this.repo.finishEvent(notice.eventId, result.status, withoutNul(result.outcome), new Date());
      return { received: true, handled: result.status === "processed", ...(result.status === "rejected" ? { rejected: true } : {}), ...result.outcome };
    },
  },
};

export default ProcessorService;
