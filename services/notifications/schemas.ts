import { z } from "zod";
import { fromDecimalText, oneLine, prose } from "../../shared/validation";
import { checkRange, PAGE_FIELDS, RANGE_FIELDS } from "../../shared/pagination";
import { Email, Id } from "../../shared/values";
import { COMMISSION_EMAIL_FREQUENCIES, PARTNER_EMAIL_KINDS } from "./partner-emails";
import { EVENT_PRODUCERS } from "../../shared/events";
import { WEBHOOK_EVENT_TYPES } from "./repository";
import { POSTBACK_EVENT_TYPES } from "./postbacks";

const Kind = z.enum(["partner_notice", "advertiser_warning"]);
// Query strings carry text: accept true/false/1/0 as well as JSON booleans.
const Flag = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")]);
const Limit = (max: number, fallback: number) => z.preprocess(fromDecimalText, z.number().int().min(1).max(max)).default(fallback);

export const EventTypeInput = z.object({ type: z.string() });

/** What the commissions outbox relay sends (one outbox event). The payload is documented in docs/architecture.md. */
export const CommissionEventInput = z.object({
  eventId: Id,
  type: z.string(),
  occurredAt: z.iso.datetime({ offset: true }).optional(),
  payload: z.looseObject({
    commissionId: Id,
    programId: Id,
    partnerId: Id,
    transactionId: z.string(),
    status: z.string(),
    currency: z.string(),
    reason: z.string().nullable(),
    deductionCents: z.number().int().optional(),
    wasPaidOut: z.boolean().optional(),
  }),
});

/**
 * What every producer's outbox relay sends (one outbox event): the producer
 * (event ids are per producer), the event, its time and payload. The payload
 * is checked against its type's schema (shared/events.ts) by the consumer.
 */
export const EventInput = z.object({
  producer: z.enum(EVENT_PRODUCERS).default("commissions"),
  eventId: Id,
  type: z.string(),
  occurredAt: z.iso.datetime({ offset: true }).optional(),
  payload: z.looseObject({ programId: Id }),
});

/**
 * `notifications.events`: a producer's relay delivers its claimed batch in one call. Each event is parsed on its own
 * (EventInput, after its type), so one bad event fails alone.
 */
export const EventsInput = z.strictObject({
  producer: z.enum(EVENT_PRODUCERS),
  events: z.array(z.record(z.string(), z.unknown())).min(1).max(500),
});

/** Operators: any notifications, by workspace, program, partner or kind. */
export const ListInput = z.strictObject({
  workspaceId: Id.optional().meta({ description: "Only this workspace's notifications.", example: 1 }),
  programId: Id.optional().meta({ description: "Only this program's notifications.", example: 1 }),
  partnerId: Id.optional().meta({ description: "Only notifications about this partner.", example: 3 }),
  kind: Kind.optional().meta({ description: "partner_notice (to a partner) or advertiser_warning (to the merchant).", example: "partner_notice" }),
  unread: Flag.optional().meta({ description: "true for unread only, false for read only (also 1 or 0).", example: "true" }),
  limit: Limit(500, 50).meta({ description: "At most this many (1 to 500).", example: 50 }),
});

/** Dashboard: the workspace's inbox, newest first, in cursor pages (shared/pagination.ts). */
export const WorkspaceListInput = z
  .strictObject({
    workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
    kind: Kind.optional().meta({ description: "partner_notice (to a partner) or advertiser_warning (to the merchant).", example: "partner_notice" }),
    unread: Flag.optional().meta({ description: "true for unread only, false for read only (also 1 or 0).", example: "true" }),
    programId: Id.optional().meta({ description: "Only notifications about this program.", example: 1 }),
    partnerId: Id.optional().meta({ description: "Only notifications about this partner.", example: 3 }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

export const MarkReadInput = z.strictObject({
  workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
  notificationId: Id.meta({ description: "The notification's id.", example: 12 }),
});
export const MarkAllReadInput = z.strictObject({
  workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
  kind: Kind.optional().meta({ description: "Only this kind; default: both.", example: "partner_notice" }),
});

const WebhookUrl = z
  .string()
  .trim()
  .max(2000)
  .pipe(z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }));

/** An API key's program (the merchant API sets it from the key): its endpoints get and show only its events. */
const KeyProgram = Id.optional().meta({ description: "The API key's program (set from the key, never sent).", example: 1 });
const oneOwner = (v: { workspaceId?: number; programId?: number }, ctx: z.RefinementCtx) => {
  if ((v.workspaceId === undefined) === (v.programId === undefined)) ctx.addIssue({ code: "custom", path: ["workspaceId"], message: "is required" });
};

export const CreateEndpointInput = z
  .strictObject({
    workspaceId: Id.optional().meta({ description: "The workspace's id.", example: 1 }),
    programId: KeyProgram,
    url: WebhookUrl.meta({ description: "Where events are posted (http or https).", example: "https://merchant.example/hooks" }),
    description: oneLine(z.string().trim().max(500))
      .nullish()
      .transform((v) => v || null)
      .meta({ description: "Your note about the endpoint.", example: "Production" }),
    // Default: every event type there is today.
    eventTypes: z
      .array(z.enum(WEBHOOK_EVENT_TYPES))
      .min(1)
      .default([...WEBHOOK_EVENT_TYPES])
      .transform((types) => [...new Set(types)])
      .meta({ description: "The event types to send; default: all of them.", example: ["commission.refunded", "commission.reversed"] }),
  })
  .superRefine(oneOwner);

export const ListEndpointsInput = z.strictObject({ workspaceId: Id.optional().meta({ description: "The workspace's id.", example: 1 }), programId: KeyProgram }).superRefine(oneOwner);

/**
 * The workspace of an operation on one endpoint: the dashboard's routes have it in the path (the gateway checked the
 * caller's role in it), and an endpoint of another workspace is then not found; the operator's routes may omit it.
 */
const EndpointWorkspace = Id.optional().meta({
  description: "The workspace the endpoint must belong to (in the path on the dashboard's routes); an endpoint of another workspace is not found.",
  example: 1,
});
const EndpointId = Id.meta({ description: "The webhook endpoint's id.", example: 4 });

export const EndpointIdInput = z.strictObject({ workspaceId: EndpointWorkspace, programId: KeyProgram, endpointId: EndpointId });
export const DisableEndpointInput = z.strictObject({
  workspaceId: EndpointWorkspace,
  programId: KeyProgram,
  endpointId: EndpointId,
  reason: prose(z.string().trim().max(500)).optional().meta({ description: "Why, kept with the endpoint.", example: "moving servers" }),
});

/** The delivery log: a page of one endpoint's deliveries, newest first (shared/pagination.ts). */
export const ListDeliveriesInput = z
  .strictObject({
    workspaceId: EndpointWorkspace,
    programId: KeyProgram,
    endpointId: EndpointId,
    status: z.enum(["pending", "succeeded", "failed"]).optional().meta({ description: "Only deliveries in this state.", example: "failed" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

export const RetryDeliveryInput = z.strictObject({
  workspaceId: EndpointWorkspace,
  programId: KeyProgram,
  endpointId: EndpointId,
  deliveryId: Id.meta({ description: "The delivery's id (from the endpoint's delivery log).", example: 9 }),
});

/**
 * The partner portal's postbacks (docs/partners.md, "Postbacks"): a partner's endpoints for their events in one
 * program. partnerId comes from the partner's session (the portal checked the enrollment), never from the caller.
 */
const PostbackOwner = {
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  partnerId: Id.meta({ description: "The signed-in partner (from their session).", example: 3 }),
};
const PostbackId = Id.meta({ description: "The postback's id.", example: 4 });

export const PartnerPostbacksInput = z.strictObject(PostbackOwner);
export const CreatePartnerPostbackInput = z.strictObject({
  ...PostbackOwner,
  url: WebhookUrl.meta({ description: "Where your events are posted (http or https).", example: "https://partner.example/postback" }),
  eventTypes: z
    .array(z.enum(POSTBACK_EVENT_TYPES))
    .min(1)
    .default([...POSTBACK_EVENT_TYPES])
    .transform((types) => [...new Set(types)])
    .meta({ description: "The event types to send; default: all four.", example: ["sale.created", "commission.created"] }),
});
export const PartnerPostbackInput = z.strictObject({ ...PostbackOwner, endpointId: PostbackId });
export const PartnerPostbackDeliveriesInput = z.strictObject({
  ...PostbackOwner,
  endpointId: PostbackId,
  status: z.enum(["pending", "succeeded", "failed"]).optional().meta({ description: "Only deliveries in this state.", example: "failed" }),
  ...PAGE_FIELDS,
});
export const RetryPartnerPostbackInput = z.strictObject({ ...PostbackOwner, endpointId: PostbackId, deliveryId: Id.meta({ description: "The delivery's id.", example: 9 }) });

/** The partner portal: a partner's own notices in one program (partnerId comes from the partner's session, never from the caller). */
export const PartnerNoticesInput = z.strictObject({
  partnerId: Id,
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  unread: Flag.optional().meta({ description: "true for unread only, false for read only (also 1 or 0).", example: "true" }),
  ...PAGE_FIELDS,
});

export const PartnerNoticeReadInput = z.strictObject({
  partnerId: Id,
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  notificationId: Id.meta({ description: "The notice's id.", example: 12 }),
});

const EmailStatus = z
  .enum(["pending", "sent", "skipped", "failed"])
  .meta({ description: "pending (to send, or to retry after a failed attempt), sent, skipped (never sent: skipReason says why) or failed (given up).", example: "failed" });
const EmailKind = z.enum(PARTNER_EMAIL_KINDS).meta({ description: "What the email is about.", example: "payout_paid" });
const ProgramId = Id.meta({ description: "The program's id.", example: 1 });

/** Operators: the emails to partners, newest first. */
export const ListPartnerEmailsInput = z.strictObject({
  programId: Id.optional().meta({ description: "Only this program's emails.", example: 1 }),
  partnerId: Id.optional().meta({ description: "Only emails to this partner.", example: 3 }),
  status: EmailStatus.optional(),
  kind: EmailKind.optional(),
  limit: Limit(500, 50).meta({ description: "At most this many (1 to 500).", example: 50 }),
});

/** The dashboard: a page of the program's partner emails. */
export const ProgramPartnerEmailsInput = z
  .strictObject({
    programId: ProgramId,
    partnerId: Id.optional().meta({ description: "Only emails to this partner.", example: 3 }),
    status: EmailStatus.optional(),
    kind: EmailKind.optional(),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

export const PartnerEmailIdInput = z.strictObject({ programId: ProgramId, emailId: Id.meta({ description: "The email's id.", example: 12 }) });

export const ProgramIdInput = z.strictObject({ programId: ProgramId });

export const PartnerEmailSettingsInput = z.strictObject({
  programId: ProgramId,
  replyTo: Email.nullable()
    .optional()
    .meta({ description: "Where partners' replies go (the Reply-To header); null for none. The From address stays the operator's.", example: "partners@acme.example" }),
  commissionEmails: z
    .enum(COMMISSION_EMAIL_FREQUENCIES)
    .optional()
    .meta({ description: "New commissions: each (one email each), daily (one digest a day, the default), weekly (Mondays) or off.", example: "daily" }),
  monthlySummary: z.boolean().optional().meta({ description: "Whether partners get a summary of each month on its first day (default true).", example: true }),
});

/** The token of an email's unsubscribe link. */
export const UnsubscribeInput = z.strictObject({
  token: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,128}$/, "not an unsubscribe token")
    .meta({ description: "The token of the email's unsubscribe link.", example: "q3v1Zb0Yw2kV8n4xT6mR9pLs" }),
});

/** Operators and tests: collect due digests and summaries now, as at `at` (default: now). */
export const RunEmailScheduleInput = z.strictObject({
  at: z.iso.datetime({ offset: true }).optional().meta({ description: "The time to act as of (default: now).", example: "2026-12-01T00:30:00.000Z" }),
});

export { RollupDriftInput } from "../../shared/stats-input";
