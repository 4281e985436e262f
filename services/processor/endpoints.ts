/** The processor service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions, programRoutes } from "../../shared/endpoint";
import { PADDLE_WEBHOOK_EVENTS, PROCESSOR_WEBHOOK_EVENTS, PROCESSOR_WEBHOOK_PATH, paddleWebhookPath, programWebhookPath } from "../../shared/processor-webhook-events";
import * as S from "./schemas";

const apiKeyExample = { programId: 1, configured: true, keyHint: "rk_live_…4f2A", setAt: "2026-01-01T10:00:00.000Z", failedAt: null, failure: null };
const paypalExample = { programId: 1, configured: true, mode: "sandbox", clientIdHint: "AZDx…7M6R", setAt: "2026-01-01T10:00:00.000Z", failedAt: null, failure: null };
const secretExample = { programId: 1, configured: true, hint: "whsec_…mT1x", setAt: "2026-01-01T10:00:00.000Z" };
const connectionExample = {
  programId: 1,
  webhookPath: programWebhookPath(1),
  platformWebhookPath: PROCESSOR_WEBHOOK_PATH,
  requiredEvents: PROCESSOR_WEBHOOK_EVENTS.required,
  optionalEvents: PROCESSOR_WEBHOOK_EVENTS.optional,
  payoutEvents: PROCESSOR_WEBHOOK_EVENTS.payouts,
  connection: { status: "connected", accountId: "acct_1Nv0FGQ9RKHgCVdK", chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true, connectedAt: "2026-01-01T10:05:00.000Z" },
  signingSecret: secretExample,
  connectSigningSecret: { programId: 1, configured: false, hint: null, setAt: null },
  restrictedKey: apiKeyExample,
  lastEvent: {
    id: "evt_1",
    type: "checkout.session.completed",
    status: "processed",
    receivedAt: "2026-01-02T09:00:00.000Z",
    processedAt: "2026-01-02T09:00:00.120Z",
    attempts: 1,
    outcome: { transactionId: "cs_1", attributionMethod: "click" },
    lastError: null,
  },
};

const paddleExample = {
  programId: 1,
  webhookPath: paddleWebhookPath(1),
  requiredEvents: PADDLE_WEBHOOK_EVENTS.required,
  environment: "live",
  secretKey: { programId: 1, configured: true, hint: "pdl_…Key1", setAt: "2026-01-01T10:00:00.000Z" },
  apiKey: { programId: 1, configured: false, keyHint: null, setAt: null, failedAt: null, failure: null },
  lastEvent: {
    id: "paddle:1:evt_01hv8x2acma2gz1he2yh0wenw4",
    type: "transaction.completed",
    status: "processed",
    receivedAt: "2026-01-02T09:00:00.000Z",
    processedAt: "2026-01-02T09:00:00.120Z",
    attempts: 1,
    outcome: { transactionId: "txn_01hv8wptq8987qeep44cyrewp9", attributionMethod: "click" },
    lastError: null,
  },
};

export const PROCESSOR = declareActions("processor", {
  listEvents: {
    input: S.ListEventsInput,
    http: {
      method: "GET",
      path: "/api/admin/processor/events",
      route: "admin",
      tag: "Operator",
      summary: "Processor webhook events, newest first",
      description:
        "Every event the processor sent for a connected account, with its status (processed, ignored, rejected, failed, processing) and outcome: why an event was ignored or rejected, which sale it touched.",
      example: { status: "rejected", limit: 20 },
      response: { description: "The events.", example: [{ eventId: "evt_1", type: "refund.created", status: "rejected", outcome: { reason: "rejected: Invalid 'amount'" } }] },
    },
  },
  getEvent: {
    input: S.GetEventInput,
    http: {
      method: "GET",
      path: "/api/admin/processor/events/:eventId",
      route: "admin",
      tag: "Operator",
      summary: "One processor webhook event and its outcome",
      description: "The event's state, attempts and outcome, or null when it was never received.",
      example: { eventId: "evt_1" },
      response: {
        description: "The event, or null when it was never received.",
        example: { eventId: "evt_1", type: "charge.refunded", status: "processed", attempts: 1, outcome: { transactionId: "cs_1" } },
      },
    },
  },
  getApiKey: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/processor/api-key",
      tag: "Processor",
      summary: "The program's restricted Stripe key",
      description:
        "Whether the program has a restricted Stripe key (used to read a checkout's line items for product rewards, and to check product and price ids), its last four characters, and the last time Stripe refused it.",
      example: { programId: 1 },
      response: {
        description: "The key's state; the key itself is never shown.",
        example: { programId: 1, configured: true, keyHint: "rk_live_…4f2A", setAt: "2026-01-01T10:00:00.000Z", failedAt: null, failure: null },
      },
    }),
  },
  setApiKey: {
    input: S.SetApiKeyInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/processor/api-key",
      permission: "programs:write",
      tag: "Processor",
      summary: "Set the program's restricted Stripe key",
      description:
        "Stores a restricted key of the program's Stripe account after checking with Stripe that it can read Checkout Sessions, Products and Prices. A secret key (sk_) is refused. It replaces the previous key.",
      example: { programId: 1, restrictedKey: "rk_test_51Hx0aExampleKey" },
      errors: ["processor_key_refused"],
      response: { description: "The key's state.", example: { programId: 1, configured: true, keyHint: "rk_test_…eKey", setAt: "2026-01-01T10:00:00.000Z", failedAt: null, failure: null } },
    }),
  },
  removeApiKey: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "DELETE",
      path: "/:programId/processor/api-key",
      permission: "programs:write",
      tag: "Processor",
      summary: "Remove the program's restricted Stripe key",
      description: "Forgets the key. Checkout sales are then recorded as one line of no product: only rewards for every product apply to them.",
      example: { programId: 1 },
      response: { description: "The key's state.", example: { programId: 1, configured: false, keyHint: null, setAt: null, failedAt: null, failure: null } },
    }),
  },
  getConnection: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/processor",
      tag: "Processor",
      summary: "The program's Stripe connection and set-up",
      description:
        "What the Stripe set-up needs and where it stands: the path of the program's own webhook endpoint, for a webhook endpoint in the merchant's own Stripe account (webhookPath; prefix it with this service's origin), and, when this service is a Connect platform, the platform's endpoint whose events reach the program through its linked account (platformWebhookPath, null otherwise); the event types to enable (required and optional); the linked account and its state as Stripe last reported it; whether the program has the signing secret of its own endpoint and a restricted key (hints only); and the newest webhook event received for the program with its result.",
      example: { programId: 1 },
      response: { description: "The connection and set-up state; secrets are never shown.", example: connectionExample },
    }),
  },
  linkAccount: {
    input: S.LinkAccountInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/processor/account",
      permission: "programs:write",
      tag: "Processor",
      summary: "Link the program's Stripe connected account",
      description:
        "Links the Stripe account whose events belong to the program: the platform's Connect endpoint hands this account's events to the program, and the program's own endpoint accepts events naming no account or this one. A newly linked account is onboarding until Stripe's account.updated event reports more; linking the account already linked changes nothing. An account belongs to one program: an account linked to another program is a 409.",
      example: { programId: 1, accountId: "acct_1Nv0FGQ9RKHgCVdK" },
      errors: ["conflict"],
      response: {
        description: "The connection and set-up state, as the read of the connection answers.",
        example: {
          ...connectionExample,
          connection: { ...connectionExample.connection, status: "onboarding", chargesEnabled: false, payoutsEnabled: false, detailsSubmitted: false, connectedAt: null },
          lastEvent: null,
        },
      },
    }),
  },
  setWebhookSecret: {
    input: S.SetWebhookSecretInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/processor/webhook-secret",
      permission: "programs:write",
      tag: "Processor",
      summary: "Set the program's Stripe webhook signing secret",
      description:
        "Stores the signing secret Stripe shows for a webhook endpoint the merchant created in the program's own Stripe account, pointing at the program's own endpoint (webhookPath of the connection). endpoint account (the default): the endpoint of events on the merchant's own account. endpoint connect: the Connect endpoint (events on connected accounts) at the same URL, which brings the account.updated events of partners' Express accounts when the program pays partners through Stripe; Stripe gives it a secret of its own. The program's endpoint verifies events with these secrets and no other. It replaces the previous one of that endpoint and is never shown again, only its last four characters.",
      example: { programId: 1, signingSecret: "whsec_Xk2bJ7aQpL0sN4cV9mT1" },
      response: { description: "The secret's state.", example: secretExample },
    }),
  },
  removeWebhookSecret: {
    input: S.RemoveWebhookSecretInput,
    http: programRoutes({
      method: "DELETE",
      path: "/:programId/processor/webhook-secret",
      permission: "programs:write",
      tag: "Processor",
      summary: "Remove the program's Stripe webhook signing secret",
      description:
        "Forgets the secret of the endpoint given (account by default, or connect). Without either, the program's own endpoint refuses every event (webhook_secret_missing, which Stripe retries) until a secret is set again; the platform's Connect endpoint is not affected.",
      example: { programId: 1 },
      response: { description: "The secret's state.", example: { ...secretExample, configured: false, hint: null, setAt: null } },
    }),
  },
  checkProducts: { input: S.CheckProductsInput },
  createCouponCode: {
    input: S.CreateCouponCodeInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/coupon-codes",
      scope: "coupons:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Add a partner's coupon code",
      description:
        "A code that attributes sales to the partner when no click, email, processor customer or customer key found one: a Stripe checkout or renewal discounted with its promotion code, or a sale reported with its coupon_code. The customer then belongs to the partner for later sales. source manual: code is yours only (no Stripe; for sales you report with the API). source stripe_existing: promotionCode names a promotion code of the program's Stripe account, by id (promo_...) or by its customer-facing code; its id and code are stored. source stripe_created: the service creates the promotion code code on your coupon couponId in the program's Stripe account (made once, whatever the retries), then stores it. Stripe sources need the program's restricted key (processor_key_missing otherwise) with read (and, to create, write) access to Promotion Codes and Coupons. A code or promotion code already live in the program is 409 coupon_code_taken (checked before anything is created in Stripe); a partner not enrolled is 404, a pending or declined one 422 partner_not_approved.",
      example: { programId: 1, partnerId: 3, source: "stripe_created", code: "JANE10", couponId: "Z4OV52SU" },
      errors: ["not_found", "coupon_code_taken", "processor_key_missing", "unknown_promotion_code", "unknown_coupon", "partner_not_approved", "processor_key_refused"],
      response: {
        description: "The stored code.",
        example: {
          id: 12,
          programId: 1,
          partnerId: 3,
          code: "JANE10",
          codeKey: "JANE10",
          stripePromotionCodeId: "promo_1Pgc79B7WZ01zgkWNy4mn5NX",
          stripeCouponId: "Z4OV52SU",
          source: "stripe_created",
          createdAt: "2026-01-01T09:00:00.000Z",
          archivedAt: null,
        },
      },
    }),
  },
  listCoupons: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/processor/coupons",
      tag: "Processor",
      summary: "The merchant's Stripe coupons",
      description:
        "The coupons of the program's Stripe account (at most 500; hasMore says there are more), to pick one to create a partner's promotion code on: id, name, percentOff or amountOff (minor units of currency), duration (once, repeating for durationInMonths, forever) and whether it can still be applied (valid). Needs the program's restricted key with read access to Coupons.",
      example: { programId: 1 },
      errors: ["processor_key_missing", "processor_key_refused"],
      response: {
        description: "The coupons.",
        example: {
          programId: 1,
          data: [{ id: "Z4OV52SU", name: "25.5% off", percentOff: 25.5, amountOff: null, currency: "usd", duration: "forever", durationInMonths: null, valid: true }],
          hasMore: false,
        },
      },
    }),
  },
  // Paying partners through Stripe Connect (docs/payouts.md): bus only, from commissions and the portal.
  partnerPayoutAccounts: { input: S.PartnerPayoutAccountsInput },
  startPartnerOnboarding: { input: S.StartPartnerOnboardingInput },
  refreshPartnerAccount: { input: S.PartnerAccountInput },
  creditCustomerBalance: { input: S.CreditCustomerBalanceInput },
  transferPayout: { input: S.TransferPayoutInput },
  // Paying partners through PayPal's Payouts API (docs/payouts.md, "PayPal"): the merchant's credentials, and the
  // runs' batches (bus only, from commissions' payout worker).
  getPaddleConnection: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/processor/paddle",
      tag: "Processor",
      summary: "The program's Paddle Billing connection and set-up",
      description:
        "What the Paddle set-up needs and where it stands: the path of the program's notification endpoint (webhookPath; prefix it with this service's origin), the notification types to select, the environment (sandbox notifications are recorded as test sales), hints of the destination's secret key and of the optional read-only API key with the last time Paddle refused it, and the newest notification received with its result.",
      example: { programId: 1 },
      response: { description: "The connection; keys are never shown.", example: paddleExample },
    }),
  },
  setPaddleConnection: {
    input: S.SetPaddleConnectionInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/processor/paddle",
      permission: "programs:write",
      tag: "Processor",
      summary: "Set the program's Paddle Billing connection",
      description:
        "Sets what the body names and leaves the rest: the environment, the notification destination's secret key (null removes it: every notification is then refused), the read-only API key (checked with Paddle first by listing customers and discounts: a key Paddle refuses is a 422 and nothing is stored; Paddle not reached is a 503; null removes it).",
      example: { programId: 1, environment: "sandbox", secretKey: "pdl_ntfset_01hx0aexample_ExampleSecretKey" },
      errors: ["processor_key_refused"],
      response: { description: "The connection.", example: paddleExample },
    }),
  },
  getPaypalCredentials: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/processor/paypal",
      tag: "Payouts",
      summary: "The program's PayPal API credentials",
      description:
        "Whether the program sends its payout runs' PayPal payouts through PayPal's Payouts API (configured) or in the run's PayPal file, with the credentials' mode (sandbox or live), a hint of the client id, and the last time PayPal refused them. The secret is never shown.",
      example: { programId: 1 },
      response: { description: "The credentials' state.", example: paypalExample },
    }),
  },
  setPaypalCredentials: {
    input: S.SetPaypalCredentialsInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/processor/paypal",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Set the program's PayPal API credentials",
      description:
        "Stores the client id and secret of the merchant's PayPal REST app (with Payouts enabled) after PayPal gave them an access token that may make payouts; from then on each payout run sends its PayPal payouts as one batch through PayPal's Payouts API instead of a file to upload. Credentials PayPal refuses are a 422 and nothing is stored; PayPal not reached is a 503. They replace the previous ones.",
      example: {
        programId: 1,
        clientId: "AZDxjDScFpQtjWTOUtWKbyN_bDt4OgqaF4eYXlewfBP4-8aqX3PiV8e1GWU6liB2CUXlkA59kJXE7M6R",
        clientSecret: "EGnHDxD_qRPdaLdZz8iCr8N7_MzF-YHPTkjs6NKYQvQSBngp4PTTVWkPZRbL",
        mode: "sandbox",
      },
      errors: ["paypal_credentials_refused"],
      response: { description: "The credentials' state.", example: paypalExample },
    }),
  },
  removePaypalCredentials: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "DELETE",
      path: "/:programId/processor/paypal",
      permission: "payouts:write",
      tag: "Payouts",
      summary: "Remove the program's PayPal API credentials",
      description:
        "Forgets the credentials. The next runs' PayPal payouts go in the run's PayPal file again, to upload at PayPal and mark paid by hand; a batch already sent through the API is PayPal's to finish.",
      example: { programId: 1 },
      response: { description: "The credentials' state.", example: { ...paypalExample, configured: false, mode: null, clientIdHint: null, setAt: null } },
    }),
  },
  paypalPayoutsConfigured: { input: S.ProgramIdInput },
  sendPaypalPayouts: { input: S.SendPaypalPayoutsInput },
  paypalPayoutItems: { input: S.PaypalPayoutItemsInput },
});
