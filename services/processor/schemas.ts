import { z } from "zod";
import { oneLine } from "../../shared/validation";
import { Id, ProductRef } from "../../shared/values";
import { COUPON_CODE_PATTERN, COUPON_CODE_RULE, COUPON_CODE_SOURCES, STRIPE_PROMOTION_CODE_PATTERN, STRIPE_PROMOTION_CODE_RULE } from "../../shared/domain/coupon-codes";

const ProgramId = Id.meta({ description: "The program's id.", example: 1 });

/**
 * The gateway hands over the raw body (as text) and the signature header; `programId` is the program of the
 * per-program endpoint's path (verified with that program's own secret), absent on the platform's endpoint.
 */
export const WebhookInput = z.object({ payload: z.string().max(1_048_576), signature: z.string().max(4096).optional(), programId: ProgramId.optional() });

export const GetEventInput = z.strictObject({ eventId: z.string().min(1).max(255).meta({ description: "The processor's event id.", example: "evt_1" }) });

export const ListEventsInput = z.strictObject({
  status: z.enum(["processing", "processed", "failed", "ignored", "rejected"]).optional().meta({ description: "Only events in this state.", example: "rejected" }),
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: "At most this many events.", example: 20 }),
});

export const ProgramIdInput = z.strictObject({ programId: ProgramId });

export const SetApiKeyInput = z.strictObject({
  programId: ProgramId,
  restrictedKey: z
    .string()
    .trim()
    .regex(/^rk_(live|test)_[A-Za-z0-9]{10,240}$/, "must be a Stripe restricted key (rk_live_... or rk_test_...); a secret key (sk_...) is refused: it can do far more than read")
    .meta({ description: "A restricted key of the program's Stripe account with read access to Checkout Sessions, Products and Prices.", example: "rk_test_51Hx0aExampleKey" }),
});

export const CheckProductsInput = z.strictObject({
  programId: ProgramId,
  productIds: z.array(ProductRef).max(100),
  priceIds: z.array(ProductRef).max(100),
});

/** A connected account's id at Stripe (acct_...). */
export const LinkAccountInput = z.strictObject({
  programId: ProgramId,
  accountId: z
    .string()
    .trim()
    .regex(/^acct_[A-Za-z0-9_]{1,250}$/, "must be a Stripe connected account id (acct_...)")
    .meta({ description: "The id of the program's connected account at Stripe, as Stripe shows it (acct_...).", example: "acct_1Nv0FGQ9RKHgCVdK" }),
});

/** Which of the program's webhook endpoints (both at its URL) the secret is of: its own account's, or the Connect endpoint's. */
const WebhookEndpoint = z.enum(["account", "connect"]).default("account").meta({
  description:
    "account (default): the webhook endpoint for events on the merchant's own account. connect: the Connect endpoint for events on connected accounts (partners' Express accounts: account.updated), which Stripe signs with a secret of its own.",
  example: "connect",
});

export const SetWebhookSecretInput = z.strictObject({
  programId: ProgramId,
  signingSecret: z
    .string()
    .trim()
    .regex(/^whsec_[A-Za-z0-9_+/=-]{8,250}$/, "must be a Stripe webhook signing secret (whsec_...)")
    .meta({ description: "The signing secret Stripe shows for the webhook endpoint (whsec_...).", example: "whsec_Xk2bJ7aQpL0sN4cV9mT1" }),
  endpoint: WebhookEndpoint,
});

export const RemoveWebhookSecretInput = z.strictObject({ programId: ProgramId, endpoint: WebhookEndpoint });

const PartnerId = Id.meta({ description: "The partner's id.", example: 3 });

/** Up to a payout run's partners at once. */
export const PartnerPayoutAccountsInput = z.strictObject({ programId: ProgramId, partnerIds: z.array(PartnerId).max(100_000) });

export const PartnerAccountInput = z.strictObject({ programId: ProgramId, partnerId: PartnerId });

/** Where Stripe's onboarding sends the partner back (Stripe itself refuses http in live mode). */
const ReturnUrl = z
  .string()
  .max(2000)
  .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http or https URL");

export const StartPartnerOnboardingInput = z.strictObject({
  programId: ProgramId,
  partnerId: PartnerId,
  /** Prefilled at Stripe (the partner's profile). */
  email: z.string().max(320).nullable(),
  /** ISO 3166-1 alpha-2; null: Stripe takes the platform's country. */
  country: z
    .string()
    .regex(/^[A-Z]{2}$/)
    .nullable(),
  returnUrl: ReturnUrl,
  refreshUrl: ReturnUrl,
});

export const TransferPayoutInput = z.strictObject({
  programId: ProgramId,
  partnerId: PartnerId,
  payoutId: Id.meta({ description: "The payout (withdrawal) id: the transfer's group and idempotency key are payout-<id>.", example: 42 }),
  amountCents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[a-z]{3}$/, "must be a lower-case ISO 4217 currency code"),
});

export const CreditCustomerBalanceInput = TransferPayoutInput.extend({
  customerId: z
    .string()
    .regex(/^cus_[A-Za-z0-9]{1,250}$/, "must be a Stripe customer id (cus_...)")
    .meta({ description: "The Stripe customer credited (the partner's stripe_customer_id metadata).", example: "cus_NcjdgdwZyI9Rj7" }),
});

/** An id or secret of a PayPal REST app, as the developer dashboard shows it (no spaces, no colon: it goes in a Basic header). */
const PaypalAppValue = (what: string, example: string) =>
  z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._~+/=-]{8,256}$/, `must be the ${what} of a PayPal REST app, as the developer dashboard shows it (Apps & Credentials)`)
    .meta({ description: `The ${what} of the merchant's PayPal REST app with Payouts enabled.`, example });

export const SetPaypalCredentialsInput = z.strictObject({
  programId: ProgramId,
  clientId: PaypalAppValue("client id", "AZDxjDScFpQtjWTOUtWKbyN_bDt4OgqaF4eYXlewfBP4-8aqX3PiV8e1GWU6liB2CUXlkA59kJXE7M6R"),
  clientSecret: PaypalAppValue("secret", "EGnHDxD_qRPdaLdZz8iCr8N7_MzF-YHPTkjs6NKYQvQSBngp4PTTVWkPZRbL"),
  mode: z
    .enum(["sandbox", "live"])
    .meta({ description: "sandbox: PayPal's test environment (no real money); live: real payouts. The app's credentials are of one of them.", example: "sandbox" }),
});

const RunId = Id.meta({ description: "The payout run's id: its PayPal batch is sender_batch_id run-<runId>.", example: 7 });

export const SendPaypalPayoutsInput = z.strictObject({
  programId: ProgramId,
  runId: RunId,
  items: z
    .array(
      z.strictObject({
        payoutId: Id.meta({ description: "The payout (withdrawal) id: the item's sender_item_id is payout-<id>.", example: 42 }),
        email: z.string().trim().max(320).email("must be the partner's PayPal email address"),
        amountCents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
        currency: z.string().regex(/^[a-z]{3}$/, "must be a lower-case ISO 4217 currency code"),
      }),
    )
    // PayPal takes up to 15,000 items in a batch.
    .min(1)
    .max(15_000)
    .refine((items) => new Set(items.map((i) => i.payoutId)).size === items.length, "must name each payout once"),
});

export const PaypalPayoutItemsInput = z.strictObject({ programId: ProgramId, runId: RunId });

/** A Stripe object's id or customer-facing code: letters, digits, `_` and `-`. */
const StripeRef = (description: string, example: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_-]+$/, "may contain letters, digits, '_' and '-'")
    .optional()
    .meta({ description, example });

/** `POST /api/programs/:programId/coupon-codes`: what each source needs (docs/processor-webhooks.md, "Coupon codes"). */
export const CreateCouponCodeInput = z
  .strictObject({
    programId: ProgramId,
    partnerId: Id.meta({ description: "The partner whose code it is: enrolled in the program and approved.", example: 3 }),
    source: z.enum(COUPON_CODE_SOURCES).meta({
      description:
        "manual: a code of yours only (no Stripe), for sales you report with the API's coupon_code. stripe_existing: a promotion code that exists in the program's Stripe account (promotionCode). stripe_created: the service creates the promotion code code in the program's Stripe account on your coupon couponId.",
      example: "stripe_created",
    }),
    code: oneLine(z.string().trim())
      .optional()
      .meta({ description: "The customer-facing code (manual and stripe_created): 3 to 40 letters, digits, - or _ (no _ for Stripe).", example: "JANE10" }),
    promotionCode: StripeRef("stripe_existing: the promotion code's id (promo_...) or its customer-facing code (an active one).", "promo_1Pgc79B7WZ01zgkWNy4mn5NX"),
    couponId: StripeRef("stripe_created: the id of your Stripe coupon the promotion code applies.", "Z4OV52SU"),
  })
  .superRefine((v, ctx) => {
    const needs = { manual: ["code"], stripe_existing: ["promotionCode"], stripe_created: ["code", "couponId"] } as const;
    for (const field of ["code", "promotionCode", "couponId"] as const) {
      const needed = (needs[v.source] as readonly string[]).includes(field);
      if (needed && v[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `is required with source ${v.source}` });
      if (!needed && v[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: `is not taken with source ${v.source}` });
    }
    if (v.code === undefined) return;
    const [pattern, rule] = v.source === "stripe_created" ? [STRIPE_PROMOTION_CODE_PATTERN, STRIPE_PROMOTION_CODE_RULE] : [COUPON_CODE_PATTERN, COUPON_CODE_RULE];
    if (!pattern.test(v.code)) ctx.addIssue({ code: "custom", path: ["code"], message: rule });
  });

/** Paddle's notifications: the raw body, its `Paddle-Signature` header, and the program of the endpoint's path. */
export const PaddleWebhookInput = z.object({ payload: z.string().max(1_048_576), signature: z.string().max(4096).optional(), programId: ProgramId });

/** A key as Paddle shows it, or null to remove it: one line, no spaces (Paddle's formats change; Paddle itself is the judge of the rest). */
const PaddleKey = (what: string, example: string, description: string) =>
  z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{16,255}$/, `must be the ${what} as Paddle shows it (letters, digits, _ and -, 16 to 255 characters)`)
    .nullable()
    .optional()
    .meta({ description, example });

export const SetPaddleConnectionInput = z
  .strictObject({
    programId: ProgramId,
    environment: z
      .enum(["sandbox", "live"])
      .optional()
      .meta({ description: "sandbox: notifications of Paddle's sandbox, recorded as test sales (no commission); live: real sales.", example: "live" }),
    secretKey: PaddleKey(
      "notification destination's secret key",
      "pdl_ntfset_01hx0aexample_ExampleSecretKey",
      "The secret key of the notification destination (Paddle > Developer tools > Notifications), pdl_ntfset_...; null removes it.",
    ),
    apiKey: PaddleKey(
      "API key",
      "pdl_live_apikey_01hx0aexample_ExampleKey",
      "An API key with read permissions for customers and discounts, checked with Paddle before it is stored; null removes it.",
    ),
  })
  .refine((input) => input.environment !== undefined || input.secretKey !== undefined || input.apiKey !== undefined, "name at least one of environment, secretKey and apiKey");
