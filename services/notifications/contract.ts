import type { z } from "zod";
import type { Jsonified } from "../../shared/dto";
import type { RollupDrift } from "../../shared/domain/stats";
import type { LoggedDelivery, Notification, PartnerEmail, PartnerEmailSettings, PartnerNotice, UnreadCounts, WebhookEndpoint } from "./repository";
import type { EmailCategory } from "./partner-emails";
import type * as S from "./schemas";
import type { ForwardedError } from "../../shared/errors";

/** A merchant's webhook endpoint as their routes answer it. */
export type EndpointView = Jsonified<Omit<WebhookEndpoint, "partnerId">>;
/** A partner's postback as the portal answers it (docs/partners.md, "Postbacks"): no workspace. */
export type PostbackView = Jsonified<Omit<WebhookEndpoint, "workspaceId">>;
type DeliveryPage = { data: Jsonified<LoggedDelivery>[]; nextCursor: string | null };

/** A notification as the dashboard gets it: the deduction also in major units. */
export type NotificationView = Jsonified<Notification & { deductionAmount: number }>;
export type PartnerNoticeView = Jsonified<PartnerNotice & { deductionAmount: number }>;
type UnreadWithTotal = UnreadCounts & { total: number };
/** A partner email as callers see it: no HTML part, no unsubscribe token. */
export type PartnerEmailView = Jsonified<Omit<PartnerEmail, "html" | "unsubscribeToken">>;
/** What an unsubscribe link is for, and its state. */
export interface SubscriptionView {
  programName: string;
  category: EmailCategory;
  categoryWords: string;
  /** Partly hidden: "j***@example.com". */
  recipient: string;
  unsubscribed: boolean;
}

/**
 * The notifications service's actions as a caller sees them: params as the
 * zod input schemas accept them, results as the bus delivers them (JSON: dates
 * are ISO strings). Callers use `call` from services/bus.ts.
 */
export interface NotificationsContract {
  /** From every producer's outbox relay (commissions, attribution, sales, programs); an event type without webhooks answers `handled: false`. */
  /** One outcome per event, in order: consumed (or acknowledged unread), or the error to retry it on. */
  "notifications.events": { params: z.input<typeof S.EventsInput>; result: Array<{ ok: true } | { ok: false; error: ForwardedError }> };
  "notifications.event": { params: z.input<typeof S.EventInput>; result: { handled: false } | { handled: true; notices: number; deliveries: number } };
  /** The commissions relay's former action (same as `event` with producer commissions). From the commissions outbox relay; an event type without notices or webhooks answers `handled: false`. */
  "notifications.commissionEvent": { params: z.input<typeof S.CommissionEventInput>; result: { handled: false } | { handled: true; notices: number; deliveries: number } };
  "notifications.list": { params: z.input<typeof S.ListInput>; result: NotificationView[] };
  /** Operators: the emails to partners, newest first. */
  "notifications.listPartnerEmails": { params: z.input<typeof S.ListPartnerEmailsInput>; result: PartnerEmailView[] };
  "notifications.listProgramPartnerEmails": { params: z.input<typeof S.ProgramPartnerEmailsInput>; result: { data: PartnerEmailView[]; nextCursor: string | null } };
  "notifications.retryPartnerEmail": { params: z.input<typeof S.PartnerEmailIdInput>; result: { retried: boolean; email: PartnerEmailView } };
  "notifications.getPartnerEmailSettings": { params: z.input<typeof S.ProgramIdInput>; result: Jsonified<PartnerEmailSettings> };
  "notifications.setPartnerEmailSettings": { params: z.input<typeof S.PartnerEmailSettingsInput>; result: Jsonified<PartnerEmailSettings> };
  "notifications.unsubscribeLink": { params: z.input<typeof S.UnsubscribeInput>; result: SubscriptionView };
  "notifications.unsubscribe": { params: z.input<typeof S.UnsubscribeInput>; result: SubscriptionView };
  "notifications.resubscribe": { params: z.input<typeof S.UnsubscribeInput>; result: SubscriptionView };
  "notifications.runEmailSchedule": { params: z.input<typeof S.RunEmailScheduleInput>; result: { digests: number; summaries: number } };
  "notifications.listForWorkspace": { params: z.input<typeof S.WorkspaceListInput>; result: { data: NotificationView[]; unread: UnreadWithTotal; nextCursor: string | null } };
  "notifications.markRead": { params: z.input<typeof S.MarkReadInput>; result: { data: NotificationView; unread: UnreadWithTotal } };
  /** The partner portal: the partner's own notices in one program, with the partner's read state. */
  "notifications.listPartnerNotices": { params: z.input<typeof S.PartnerNoticesInput>; result: { data: PartnerNoticeView[]; nextCursor: string | null } };
  "notifications.markPartnerNoticeRead": { params: z.input<typeof S.PartnerNoticeReadInput>; result: PartnerNoticeView };
  "notifications.markAllRead": { params: z.input<typeof S.MarkAllReadInput>; result: { updated: number; unread: UnreadWithTotal } };
  /** Where the inbox's unread counts differ from the notifications (commissions.reconcile reports it). */
  "notifications.rollupDrift": { params: z.input<typeof S.RollupDriftInput>; result: RollupDrift[] };
  /** The signing secret is in this answer only. */
  "notifications.createWebhookEndpoint": { params: z.input<typeof S.CreateEndpointInput>; result: EndpointView & { secret: string } };
  "notifications.listWebhookEndpoints": { params: z.input<typeof S.ListEndpointsInput>; result: EndpointView[] };
  "notifications.disableWebhookEndpoint": { params: z.input<typeof S.DisableEndpointInput>; result: EndpointView };
  "notifications.enableWebhookEndpoint": { params: z.input<typeof S.EndpointIdInput>; result: EndpointView };
  /** The new signing secret is in this answer only; the previous one also signs deliveries until `previousSecretExpiresAt`. */
  "notifications.rotateWebhookSecret": { params: z.input<typeof S.EndpointIdInput>; result: EndpointView & { secret: string } };
  /** The test event's delivery, queued (pending). */
  "notifications.sendTestWebhook": { params: z.input<typeof S.EndpointIdInput>; result: Jsonified<LoggedDelivery> };
  "notifications.listWebhookDeliveries": { params: z.input<typeof S.ListDeliveriesInput>; result: DeliveryPage };
  /** `retried: false` when the delivery was pending or succeeded (nothing changed). */
  "notifications.retryWebhookDelivery": { params: z.input<typeof S.RetryDeliveryInput>; result: { retried: boolean; delivery: Jsonified<LoggedDelivery> } };
  /**
   * The partner portal's postbacks (docs/partners.md, "Postbacks"): the partner's endpoints in one program, the same
   * operations as a merchant's (the portal checked the partner's enrollment). Another partner's is not found.
   */
  "notifications.listPartnerPostbacks": { params: z.input<typeof S.PartnerPostbacksInput>; result: PostbackView[] };
  /** The signing secret is in this answer only. 409 postback_limit_reached beyond the partner's limits. */
  "notifications.createPartnerPostback": { params: z.input<typeof S.CreatePartnerPostbackInput>; result: PostbackView & { secret: string } };
  "notifications.disablePartnerPostback": { params: z.input<typeof S.PartnerPostbackInput>; result: PostbackView };
  "notifications.enablePartnerPostback": { params: z.input<typeof S.PartnerPostbackInput>; result: PostbackView };
  "notifications.rotatePartnerPostbackSecret": { params: z.input<typeof S.PartnerPostbackInput>; result: PostbackView & { secret: string } };
  "notifications.sendPartnerPostbackTest": { params: z.input<typeof S.PartnerPostbackInput>; result: Jsonified<LoggedDelivery> };
  "notifications.listPartnerPostbackDeliveries": { params: z.input<typeof S.PartnerPostbackDeliveriesInput>; result: DeliveryPage };
  "notifications.retryPartnerPostbackDelivery": { params: z.input<typeof S.RetryPartnerPostbackInput>; result: { retried: boolean; delivery: Jsonified<LoggedDelivery> } };
}

/** The events notifications broadcasts for other processes' caches (docs/architecture.md, "Bus broadcasts"). */
export interface NotificationsBroadcasts {
  /** An endpoint of the workspace was created or enabled: every notifications instance forgets "no endpoint subscribes". */
  "notifications.endpointsChanged": { workspaceId: number };
}
