import { z } from "zod";
import { PAYOUT_METHODS } from "./partner-profile";
import { RATE_SOURCES, type SaleConversion } from "./domain/exchange-rates";

/**
 * The events sent to merchants' webhook endpoints: one zod schema per event
 * type for its `data` (the payload its producer writes to its outbox), with
 * an example the schema parses. Producers build payloads with the builders
 * below, notifications validates what it receives against these schemas, and
 * the OpenAPI document (services/gateway/openapi.ts, `webhooks`) is generated
 * from them. Every amount is an integer in minor units, every time an ISO
 * 8601 string; no secrets and no partner email (docs/architecture.md, "Events").
 */

const int = (description: string, example: number) => z.number().int().meta({ description, example });
const text = (description: string, example: string) => z.string().meta({ description, example });
const time = (description: string, example: string) => z.iso.datetime({ offset: true }).meta({ description, example });
const nullableText = (description: string, example: string | null) => z.string().nullable().meta({ description, example });
const nullableTime = (description: string, example: string | null) => z.iso.datetime({ offset: true }).nullable().meta({ description, example });
const nullableInt = (description: string, example: number | null) => z.number().int().nullable().meta({ description, example });
const flag = (description: string, example: boolean) => z.boolean().meta({ description, example });

/** A converted sale's amount as paid (docs/currencies.md), or null for a sale in the program's currency. */
const saleOriginal = z
  .object({
    amountCents: int("The amount paid, in minor units of its own currency.", 9200),
    currency: text("The currency it was paid in, lowercase.", "eur"),
  })
  .nullable()
  .meta({ description: "A sale paid in another currency than the program's: what was paid (its refunds are in that currency); null otherwise.", example: null });

/** The facts every commission event carries (the payload of commission.created, extended by the others). */
const commissionFacts = {
  commissionId: int("The commission's id.", 7),
  programId: int("The program's id.", 1),
  partnerId: int("The partner earning the commission.", 3),
  saleId: int("The sale's id.", 9),
  transactionId: text("Your id of the sale (transaction_id).", "order-1001"),
  status: text("The commission's status after the change: pending, approved, paid, refunded or reversed.", "pending"),
  currency: text("ISO 4217 currency code, lowercase.", "usd"),
  amountCents: int("The commission as earned, in minor units.", 2000),
  netCents: int("What the commission is worth now (amount minus what refunds took back), in minor units.", 2000),
  saleOriginal,
  reason: nullableText("The reason recorded by the latest refund or chargeback, or null.", null),
  creditedAt: nullableTime("When the commission was credited to the partner's balance, or null.", null),
  paidOutAt: nullableTime("When the withdrawal holding it was paid, or null.", null),
};

const commissionExample = {
  commissionId: 7,
  programId: 1,
  partnerId: 3,
  saleId: 9,
  transactionId: "order-1001",
  status: "pending",
  currency: "usd",
  amountCents: 2000,
  netCents: 2000,
  saleOriginal: null,
  reason: null,
  creditedAt: null,
  paidOutAt: null,
};

const refundFacts = {
  ...commissionFacts,
  deductionCents: int("What this refund took off the commission, in minor units.", 2000),
  deductionAmount: z.number().meta({ description: "The same deduction in major units of the currency.", example: 20 }),
  balanceDeductionCents: int("The part of the deduction taken from the partner's balance (0 when the commission was not yet credited).", 0),
  refundedCents: int("The refunded part of the sale so far, in minor units of the currency it was paid in (saleOriginal's when converted).", 10000),
  saleAmountCents: int("The sale's amount, in minor units.", 10000),
  reasonCode: z.enum(["refund", "chargeback", "void"]).meta({ description: "refund, chargeback, or void (the merchant voided the commission).", example: "refund" }),
  refundId: nullableText("Your refund id, or null.", "re_1"),
  wasPaidOut: flag("The commission had already been paid out to the partner (it needs a manual review).", false),
};

const withdrawalFacts = {
  withdrawalId: int("The withdrawal's id.", 5),
  programId: int("The program's id.", 1),
  partnerId: int("The partner being paid.", 3),
  currency: text("ISO 4217 currency code, lowercase.", "usd"),
  requestedCents: int("The amount asked for, in minor units.", 2000),
  amountCents: int("The amount to pay, in minor units (refunds may have reduced it below the amount asked for).", 2000),
  status: text("The withdrawal's status after the change: open, processing, paid, failed or cancelled.", "open"),
  commissionIds: z.array(z.number().int()).meta({ description: "The commissions the withdrawal pays.", example: [7] }),
  createdAt: time("When the withdrawal was opened.", "2026-01-01T00:00:00.000Z"),
  runId: nullableInt("The payout run that created it, or null for a withdrawal an operator opened.", 2),
  method: z
    .enum([...PAYOUT_METHODS, "account_credit", "stripe_balance"])
    .nullable()
    .meta({
      description:
        "How it is paid: stripe (a Stripe Connect transfer), paypal or bank (the merchant's batch files), account_credit (credit in the merchant's app: see reward.earned), stripe_balance (credit on the partner's Stripe customer balance); null when an operator pays it by other means.",
      example: "stripe",
    }),
};

const withdrawalExample = {
  withdrawalId: 5,
  programId: 1,
  partnerId: 3,
  currency: "usd",
  requestedCents: 2000,
  amountCents: 2000,
  status: "open",
  commissionIds: [7],
  createdAt: "2026-01-01T00:00:00.000Z",
  runId: 2,
  method: "stripe",
};

const applicationFacts = {
  applicationId: int("The application's id.", 7),
  programId: int("The program's id.", 1),
  partnerId: int("The partner the application enrolled (pending until decided).", 3),
  partnerName: text("The applicant's name.", "Jane Doe"),
  status: z.enum(["pending", "approved", "declined"]).meta({ description: "The application's status after the change.", example: "pending" }),
  declineMessage: nullableText("The merchant's message to a declined applicant, or null.", null),
  createdAt: time("When the application arrived.", "2026-01-01T00:00:00.000Z"),
  decidedAt: nullableTime("When it was decided, or null.", null),
};
const applicationExample = {
  applicationId: 7,
  programId: 1,
  partnerId: 3,
  partnerName: "Jane Doe",
  status: "pending",
  declineMessage: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  decidedAt: null,
};

export const WEBHOOK_EVENT_TYPES = [
  "commission.created",
  "commission.refunded",
  "commission.reversed",
  "commission.credited",
  "commission.paid",
  "commission.held",
  "fraud.flagged",
  "withdrawal.created",
  "withdrawal.paid",
  "withdrawal.failed",
  "reward.earned",
  "lead.created",
  "sale.created",
  "partner.enrolled",
  "partner.banned",
  "application.created",
  "application.decided",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The event types a partner's postback may take (docs/partners.md, "Postbacks"): those of their own enrollment,
 * sent in a partner-safe form (services/notifications/postbacks.ts).
 */
export const POSTBACK_EVENT_TYPES = ["lead.created", "sale.created", "commission.created", "commission.reversed"] as const satisfies readonly WebhookEventType[];
export type PostbackEventType = (typeof POSTBACK_EVENT_TYPES)[number];

export interface WebhookEventSpec {
  /** When it is sent, for people (plain text: it goes into the OpenAPI document). */
  when: string;
  schema: z.ZodObject<z.ZodRawShape>;
  example: Record<string, unknown>;
}

export const WEBHOOK_EVENTS: Record<WebhookEventType, WebhookEventSpec> = {
  "commission.created": {
    when: "A sale earned a commission (pending until its hold passes).",
    schema: z.object(commissionFacts),
    example: commissionExample,
  },
  "commission.refunded": {
    when: "A partial refund or chargeback reduced a commission.",
    schema: z.object(refundFacts),
    example: {
      ...commissionExample,
      status: "refunded",
      netCents: 1400,
      reason: "refund",
      deductionCents: 600,
      deductionAmount: 6,
      balanceDeductionCents: 0,
      refundedCents: 3000,
      saleAmountCents: 10000,
      reasonCode: "refund",
      refundId: "re_1",
      wasPaidOut: false,
    },
  },
  "commission.reversed": {
    when: "The sale was fully refunded or charged back: the commission is worth nothing.",
    schema: z.object(refundFacts),
    example: {
      ...commissionExample,
      status: "reversed",
      netCents: 0,
      reason: "refund",
      deductionCents: 2000,
      deductionAmount: 20,
      balanceDeductionCents: 0,
      refundedCents: 10000,
      saleAmountCents: 10000,
      reasonCode: "refund",
      refundId: "re_1",
      wasPaidOut: false,
    },
  },
  "commission.credited": {
    when: "The commission's hold passed: its net amount was added to the partner's balance.",
    schema: z.object({ ...commissionFacts, creditedCents: int("The amount added to the partner's balance, in minor units.", 2000) }),
    example: { ...commissionExample, status: "approved", creditedAt: "2026-01-31T00:00:00.000Z", creditedCents: 2000 },
  },
  "commission.paid": {
    when: "A paid withdrawal paid the commission out to the partner.",
    schema: z.object({
      ...commissionFacts,
      withdrawalId: int("The withdrawal that paid it.", 5),
      paidCents: int("The commission's net amount paid, in minor units.", 2000),
    }),
    example: { ...commissionExample, status: "paid", creditedAt: "2026-01-31T00:00:00.000Z", paidOutAt: "2026-02-02T00:00:00.000Z", withdrawalId: 5, paidCents: 2000 },
  },
  "commission.held": {
    when: "The program's fraud rules flagged the conversion: its new commission is held for review (pending, not credited, not payable) until the review is cleared or rejected.",
    schema: z.object({
      ...commissionFacts,
      heldAt: time("When it was held.", "2026-01-01T00:00:00.000Z"),
      holdReason: text("Why, in words.", "Held for review"),
      reviewId: int("The review that decides it.", 4),
    }),
    example: { ...commissionExample, heldAt: "2026-01-01T00:00:00.000Z", holdReason: "Held for review", reviewId: 4 },
  },
  "fraud.flagged": {
    when: "The program's fraud rules flagged a conversion: the rules that fired, their evidence (never a network address) and the commission held for review.",
    schema: z.object({
      reviewId: int("The review's id.", 4),
      programId: int("The program's id.", 1),
      partnerId: int("The partner whose conversion it is.", 3),
      commissionId: int("The commission held for review.", 7),
      kind: z.enum(["sale", "lead"]).meta({ description: "What converted: a sale or a lead.", example: "sale" }),
      status: z.enum(["pending", "cleared", "rejected"]).meta({ description: "The review's state: pending when flagged.", example: "pending" }),
      rules: z.array(z.string()).meta({ description: "The rules that fired.", example: ["click_injection"] }),
      flags: z
        .array(z.object({ rule: z.string(), evidence: z.record(z.string(), z.unknown()) }))
        .meta({ description: "Each rule with its evidence.", example: [{ rule: "click_injection", evidence: { secondsAfterClick: 2.5, limitSeconds: 10 } }] }),
      transactionId: text("The sale's transaction id (lead:<customer key> for a lead).", "order_1001"),
      currency: text("The commission's currency.", "usd"),
      amountCents: int("The commission's amount, in minor units.", 2000),
      createdAt: time("When it was flagged.", "2026-01-01T00:00:00.000Z"),
    }),
    example: {
      reviewId: 4,
      programId: 1,
      partnerId: 3,
      commissionId: 7,
      kind: "sale",
      status: "pending",
      rules: ["click_injection"],
      flags: [{ rule: "click_injection", evidence: { secondsAfterClick: 2.5, limitSeconds: 10 } }],
      transactionId: "order_1001",
      currency: "usd",
      amountCents: 2000,
      createdAt: "2026-01-01T00:00:00.000Z",
    },
  },
  "withdrawal.created": {
    when: "A withdrawal of a partner's balance was opened.",
    schema: z.object(withdrawalFacts),
    example: withdrawalExample,
  },
  "withdrawal.paid": {
    when: "A withdrawal was paid: its amount left the partner's balance and its commissions are paid.",
    schema: z.object({
      ...withdrawalFacts,
      paidAt: time("When it was paid.", "2026-02-02T00:00:00.000Z"),
      transferId: nullableText("The Stripe transfer that paid it (method stripe), or null.", "tr_1Nv0"),
    }),
    example: { ...withdrawalExample, status: "paid", paidAt: "2026-02-02T00:00:00.000Z", transferId: "tr_1Nv0" },
  },
  "withdrawal.failed": {
    when: "A withdrawal could not be paid, or a paid one was returned (a reversed transfer, a bank return): its amount is back in the partner's balance and its commissions are payable again.",
    schema: z.object({
      ...withdrawalFacts,
      failureCode: text("Why, as a stable code: Stripe's code, transfer_reversed, processor_unavailable, or the merchant's.", "transfer_reversed"),
      failureReason: text("Why, for people: Stripe's message or the merchant's reason.", "The transfer was reversed."),
      failedAt: time("When it failed.", "2026-02-03T00:00:00.000Z"),
      wasPaid: flag("It had been paid and was returned (its paid amount went back to the balance).", true),
    }),
    example: {
      ...withdrawalExample,
      status: "failed",
      failureCode: "transfer_reversed",
      failureReason: "The transfer was reversed.",
      failedAt: "2026-02-03T00:00:00.000Z",
      wasPaid: true,
    },
  },
  "reward.earned": {
    when: "A payout run paid a reward as account credit (its partner is in a group rewarding with account credit): apply amountCents as credit to your user tenantId. Sent once per payout, which is paid from then on.",
    schema: z.object({
      withdrawalId: int("The payout (withdrawal) this credit pays: your idempotency key for applying it.", 5),
      programId: int("The program's id.", 1),
      partnerId: int("The partner (your user) credited.", 3),
      tenantId: nullableText("Your own id of the user (the tenantId you enrolled them with), or null.", "user_42"),
      email: nullableText("The user's email, or null.", "jane@example.com"),
      stripeBalanceTransactionId: nullableText(
        "For a group rewarding with stripe_balance: the Stripe customer balance transaction that already credited it (nothing to apply); null: apply the credit yourself.",
        null,
      ),
      currency: text("ISO 4217 currency code, lowercase.", "usd"),
      amountCents: int("The credit to apply, in minor units.", 2000),
      commissionIds: z.array(z.number().int()).meta({ description: "The commissions it pays.", example: [7] }),
      earnedAt: time("When it was paid.", "2026-02-02T00:00:00.000Z"),
    }),
    example: {
      withdrawalId: 5,
      programId: 1,
      partnerId: 3,
      tenantId: "user_42",
      email: "jane@example.com",
      stripeBalanceTransactionId: null,
      currency: "usd",
      amountCents: 2000,
      commissionIds: [7],
      earnedAt: "2026-02-02T00:00:00.000Z",
    },
  },
  "lead.created": {
    when: "A new lead (signup) was recorded, attributed to a partner or not.",
    schema: z.object({
      leadId: int("The lead's id.", 11),
      programId: int("The program's id.", 1),
      customerKey: text("Your key of the customer, as you sent it.", "user_42"),
      partnerId: nullableInt("The partner the lead is attributed to, or null.", 3),
      clickId: nullableText("The click the lead came from, or null.", "clk_8d2f"),
      unattributedReason: nullableText("Why a lead that came with a partner is not attributed (self_referral), or null.", null),
      isTest: flag("A test lead (not counted in reports).", false),
      occurredAt: time("When the signup happened.", "2026-01-01T00:00:00.000Z"),
      createdAt: time("When it was recorded.", "2026-01-01T00:00:01.000Z"),
    }),
    example: {
      leadId: 11,
      programId: 1,
      customerKey: "user_42",
      partnerId: 3,
      clickId: "clk_8d2f",
      unattributedReason: null,
      isTest: false,
      occurredAt: "2026-01-01T00:00:00.000Z",
      createdAt: "2026-01-01T00:00:01.000Z",
    },
  },
  "sale.created": {
    when: "A new sale was recorded (from the API or the payment processor), attributed to a partner or not.",
    schema: z.object({
      saleId: int("The sale's id.", 9),
      programId: int("The program's id.", 1),
      transactionId: text("Your id of the sale (the processor's id for processor sales).", "order-1001"),
      amountCents: int("The sale's amount in the program's currency, in minor units (converted when it was paid in another).", 10000),
      currency: text("ISO 4217 currency code, lowercase: the program's.", "usd"),
      conversion: z
        .object({
          originalAmountCents: int("The amount paid, in minor units of its own currency.", 9200),
          originalCurrency: text("The currency it was paid in, lowercase.", "eur"),
          rate: text("Units of the program's currency per unit of the original, as a decimal text, frozen at the sale.", "1.0869565"),
          source: z.enum(RATE_SOURCES).meta({ description: "Where the rate came from: processor (what the merchant received), ecb or manual (reference tables).", example: "ecb" }),
          rateDay: text("The day the rate was published or settled (YYYY-MM-DD).", "2026-01-01"),
        })
        .nullable()
        .meta({ description: "A sale paid in another currency than the program's: what was paid and the rate it was converted at; null otherwise.", example: null }),
      customerKey: nullableText("Your key of the customer, or null.", "user_42"),
      partnerId: nullableInt("The partner the sale is attributed to, or null.", 3),
      clickId: nullableText("The click the sale came from, or null.", "clk_8d2f"),
      attributionMethod: nullableText("How the partner was found: click, email, processor_customer, customer_key or coupon; null when unattributed.", "click"),
      isTest: flag("A test sale (it earns no commission).", false),
      isRecurring: flag("A renewal of a subscription.", false),
      subscriptionId: nullableText("The subscription it belongs to, or null.", null),
      commissionDue: flag("A commission is due for this sale (a commission.created event follows).", true),
      noCommissionReason: nullableText("Why a sale that could have earned earns no commission, or null.", null),
      occurredAt: time("When the payment happened.", "2026-01-01T00:00:00.000Z"),
      createdAt: time("When it was recorded.", "2026-01-01T00:00:01.000Z"),
    }),
    example: {
      saleId: 9,
      programId: 1,
      transactionId: "order-1001",
      amountCents: 10000,
      currency: "usd",
      conversion: null,
      customerKey: "user_42",
      partnerId: 3,
      clickId: "clk_8d2f",
      attributionMethod: "click",
      isTest: false,
      isRecurring: false,
      subscriptionId: null,
      commissionDue: true,
      noCommissionReason: null,
      occurredAt: "2026-01-01T00:00:00.000Z",
      createdAt: "2026-01-01T00:00:01.000Z",
    },
  },
  "partner.enrolled": {
    when: "A partner's enrollment in a program became approved (at creation, or when approved later).",
    schema: z.object({
      enrollmentId: int("The enrollment's id.", 4),
      programId: int("The program's id.", 1),
      partnerId: int("The partner's id.", 3),
      partnerName: text("The partner's name.", "Jane"),
      referralCode: text("The partner's referral code in the program.", "jane"),
      status: text("Always approved.", "approved"),
      enrolledAt: time("When the enrollment was approved.", "2026-01-01T00:00:00.000Z"),
    }),
    example: { enrollmentId: 4, programId: 1, partnerId: 3, partnerName: "Jane", referralCode: "jane", status: "approved", enrolledAt: "2026-01-01T00:00:00.000Z" },
  },
  "partner.banned": {
    when: "The merchant banned a partner from a program: their links stopped being attributed, their commissions not yet credited are voided with the reason (commission.reversed follows for each), and they are emailed.",
    schema: z.object({
      enrollmentId: int("The enrollment's id.", 4),
      programId: int("The program's id.", 1),
      partnerId: int("The partner's id.", 3),
      partnerName: text("The partner's name.", "Jane"),
      reason: text("The merchant's reason (the partner is told).", "Incentivised traffic against the terms"),
      bannedAt: time("When the partner was banned.", "2026-01-05T00:00:00.000Z"),
    }),
    example: { enrollmentId: 4, programId: 1, partnerId: 3, partnerName: "Jane", reason: "Incentivised traffic against the terms", bannedAt: "2026-01-05T00:00:00.000Z" },
  },
  "application.created": {
    when: "An application arrived from the program's public form: status pending (to review), or approved when the program approves applications at once. No applicant email: read it in the dashboard.",
    schema: z.object(applicationFacts),
    example: applicationExample,
  },
  "application.decided": {
    when: "A pending application was approved or declined (from the dashboard, the API or when its partner was approved or declined directly).",
    schema: z.object(applicationFacts),
    example: { ...applicationExample, status: "declined", declineMessage: "We only work with cooking sites for now.", decidedAt: "2026-01-02T00:00:00.000Z" },
  },
};

/**
 * The test event: sent on request to one endpoint (from the dashboard or by an operator) to check that it receives
 * and verifies deliveries. Not an event type an endpoint chooses: it goes to the endpoint asked for, whatever its
 * event types. Signed and delivered like any event, and listed in the endpoint's delivery log.
 */
export const TEST_EVENT_TYPE = "test.ping";
export const TEST_EVENT_MESSAGE = "A test event: your endpoint received it. It carries no data to apply.";
export const TEST_EVENT: WebhookEventSpec = {
  when: "Sent when you ask for a test event for this endpoint (it goes to that endpoint only, whatever event types it takes). It carries no business data: check the signature, answer 2xx, and ignore it.",
  schema: z.object({
    endpointId: int("The endpoint the test was sent to.", 4),
    message: text("A fixed sentence for people reading the request.", TEST_EVENT_MESSAGE),
  }),
  example: { endpointId: 4, message: TEST_EVENT_MESSAGE },
};
/** A test event's public id (the body's id, the Svc-Event-Id header): "test:<n>", apart from every producer's ids. */
export const testEventId = (n: number): string => `test:${n}`;

/**
 * A payload as its type's schema reads it today. Withdrawal events written before payout runs existed have no
 * `runId` or `method` (every withdrawal then was an operator's, paid by other means, so null is their truth), and
 * their withdrawal.paid no `transferId` (none was made). Other payloads are returned as they are.
 */
export function currentPayload(type: WebhookEventType, payload: Record<string, unknown>): Record<string, unknown> {
  if (!type.startsWith("withdrawal.")) return payload;
  const upgraded = { ...payload, runId: payload.runId ?? null, method: payload.method ?? null };
  return type === "withdrawal.paid" ? { ...upgraded, transferId: payload.transferId ?? null } : upgraded;
}

export const isWebhookEventType = (type: string): type is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);

/**
 * The producers that have an outbox, and so name the events they write. An
 * event is identified by (producer, outbox id); its public id (the webhook
 * body's `id`, the Svc-Event-Id header) is the bare number for commission
 * events, as before, and "<producer>:<id>" for the others, so ids never
 * collide across producers.
 */
export const EVENT_PRODUCERS = ["commissions", "attribution", "sales", "programs"] as const;
export type EventProducer = (typeof EVENT_PRODUCERS)[number];

export function publicEventId(producer: EventProducer, id: number): number | string {
  return producer === "commissions" ? id : `${producer}:${id}`;
}

const iso = (d: Date) => d.toISOString();

// Payload builders: what each producer writes, from its own record (a structural type, so no service imports another's).

export function leadCreatedPayload(l: {
  id: number;
  programId: number;
  customerKey: string;
  partnerId: number | null;
  clickId: string | null;
  unattributedReason: string | null;
  isTest: boolean;
  timestamp: Date;
  createdAt: Date;
}): Record<string, unknown> {
  return {
    leadId: l.id,
    programId: l.programId,
    customerKey: l.customerKey,
    partnerId: l.partnerId,
    clickId: l.clickId,
    unattributedReason: l.unattributedReason,
    isTest: l.isTest,
    occurredAt: iso(l.timestamp),
    createdAt: iso(l.createdAt),
  };
}

export function saleCreatedPayload(s: {
  id: number;
  programId: number;
  transactionId: string;
  amountCents: number;
  currency: string;
  conversion: SaleConversion | null;
  customerKey: string | null;
  partnerId: number | null;
  clickId: string | null;
  attributionMethod: string | null;
  isTest: boolean;
  isRecurring: boolean;
  subscriptionId: string | null;
  commissionState: string;
  noCommissionReason: string | null;
  occurredAt: Date;
  createdAt: Date;
}): Record<string, unknown> {
  return {
    saleId: s.id,
    programId: s.programId,
    transactionId: s.transactionId,
    amountCents: s.amountCents,
    currency: s.currency,
    conversion: s.conversion,
    customerKey: s.customerKey,
    partnerId: s.partnerId,
    clickId: s.clickId,
    attributionMethod: s.attributionMethod,
    isTest: s.isTest,
    isRecurring: s.isRecurring,
    subscriptionId: s.subscriptionId,
    commissionDue: s.commissionState !== "none",
    noCommissionReason: s.noCommissionReason,
    occurredAt: iso(s.occurredAt),
    createdAt: iso(s.createdAt),
  };
}

export function applicationPayload(a: {
  id: number;
  programId: number;
  partnerId: number;
  name: string;
  status: string;
  declineMessage: string | null;
  createdAt: Date;
  decidedAt: Date | null;
}): Record<string, unknown> {
  return {
    applicationId: a.id,
    programId: a.programId,
    partnerId: a.partnerId,
    partnerName: a.name,
    status: a.status,
    declineMessage: a.declineMessage,
    createdAt: iso(a.createdAt),
    decidedAt: a.decidedAt ? iso(a.decidedAt) : null,
  };
}

export function partnerBannedPayload(e: { id: number; programId: number; partnerId: number }, partnerName: string, reason: string, bannedAt: Date): Record<string, unknown> {
  return { enrollmentId: e.id, programId: e.programId, partnerId: e.partnerId, partnerName, reason, bannedAt: iso(bannedAt) };
}

export function partnerEnrolledPayload(e: { id: number; programId: number; partnerId: number; referralCode: string }, partnerName: string, enrolledAt: Date): Record<string, unknown> {
  return { enrollmentId: e.id, programId: e.programId, partnerId: e.partnerId, partnerName, referralCode: e.referralCode, status: "approved", enrolledAt: iso(enrolledAt) };
}
