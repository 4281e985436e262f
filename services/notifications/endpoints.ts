/** The notifications service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions, programApiRoute, programRoutes, type HttpEndpoint } from "../../shared/endpoint";
import type { ErrorCode } from "../../shared/errors";
import { TEST_EVENT, TEST_EVENT_TYPE, testEventId } from "../../shared/events";
import * as S from "./schemas";

const notificationExample = {
  id: 12,
  kind: "partner_notice",
  workspaceId: 1,
  programId: 1,
  partnerId: 3,
  commissionId: 7,
  transactionId: "order-1001",
  status: "refunded",
  deductionCents: 600,
  deductionAmount: 6,
  currency: "usd",
  reason: "refund",
  partnerPaid: false,
  readAt: null,
  createdAt: "2026-01-01T00:00:00.000Z",
};
const partnerEmailExample = {
  id: 3,
  dedupeKey: "payout_failed.commissions.41",
  producer: "commissions",
  eventId: 41,
  kind: "payout_failed",
  category: null,
  programId: 1,
  partnerId: 3,
  withdrawalId: 5,
  recipient: "jane@example.com",
  fromName: "Acme",
  replyTo: "partners@acme.example",
  subject: "Your payout of 20.00 USD from Acme could not be paid",
  text: "Hello Jane,\n\nYour payout of 20.00 USD from the Acme partner program (by PayPal, to your PayPal email) could not be paid.\n...",
  messageId: "<payout_failed.commissions.41@track.example.com>",
  status: "pending",
  skipReason: null,
  attempts: 2,
  nextAttemptAt: "2026-01-01T00:00:04.000Z",
  lastError: "451 Try again later",
  sentAt: null,
  createdAt: "2026-01-01T00:00:00.000Z",
};
const emailSettingsExample = { programId: 1, replyTo: "partners@acme.example", commissionEmails: "daily", monthlySummary: true, updatedAt: "2026-01-01T00:00:00.000Z" };
const unsubscribeExample = { programName: "Acme", category: "commissions", categoryWords: "emails about new commissions", recipient: "j***@example.com", unsubscribed: true };
const unreadExample = { partner_notice: 1, advertiser_warning: 0, total: 1 };
const endpointExample = {
  id: 4,
  workspaceId: 1,
  url: "https://merchant.example/hooks",
  description: "Production",
  eventTypes: ["commission.created", "commission.refunded", "commission.reversed"],
  enabled: true,
  consecutiveFailures: 0,
  disabledAt: null,
  disabledReason: null,
  previousSecretExpiresAt: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};
const failedDeliveryExample = {
  id: 9,
  endpointId: 4,
  producer: "commissions",
  eventId: 2,
  eventType: "commission.created",
  body: '{"id":2,"type":"commission.created","createdAt":"2026-01-01T00:00:00.000Z","workspaceId":1,"data":{}}',
  status: "failed",
  attempts: 1,
  nextAttemptAt: "2026-01-01T00:00:00.000Z",
  lastStatusCode: 500,
  lastError: "HTTP 500",
  deliveredAt: null,
  retriedAt: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  attemptLog: [{ attempt: 1, at: "2026-01-01T00:00:00.000Z", statusCode: 500, error: "HTTP 500", responseExcerpt: "Internal Server Error", durationMs: 41 }],
};
const testDeliveryExample = {
  ...failedDeliveryExample,
  id: 10,
  producer: "test",
  eventId: 1,
  eventType: TEST_EVENT_TYPE,
  body: JSON.stringify({ id: testEventId(1), type: TEST_EVENT_TYPE, createdAt: "2026-01-01T00:00:00.000Z", workspaceId: 1, data: TEST_EVENT.example }),
  status: "pending",
  attempts: 0,
  lastStatusCode: null,
  lastError: null,
  attemptLog: [],
};

/** How a webhook URL is checked, wherever one is registered or used again. */
const TARGET_RULE =
  "The URL's host must be a public internet address: a host that is, or resolves to, a loopback, private, link-local, unspecified, multicast or carrier-grade NAT address (in any spelling, IPv4-mapped IPv6 included) is refused with 422 webhook_target_not_allowed, unless the operator set WEBHOOK_ALLOW_PRIVATE_TARGETS=true.";

/**
 * One webhook operation for both of its callers: the dashboard (a session whose role in the workspace grants
 * `permission`, default programs:read) under /api/workspaces/:workspaceId, and the operator (the token) under
 * /api/admin. `path` is what follows: /workspaces/:workspaceId/webhook-endpoints for the workspace's list, or
 * /webhook-endpoints/:endpointId/... for one endpoint, which the dashboard reaches as
 * /api/workspaces/:workspaceId/webhook-endpoints/:endpointId/... (an endpoint of another workspace is not found).
 * The operator's example leaves out the workspace the dashboard's path carries. A third route answers an API key
 * with a webhooks scope at /api/v1/webhook-endpoints/...: it reaches only the endpoints made with a key of its
 * program, and an endpoint it makes gets that program's events only (docs/api.md, "Webhook endpoints").
 */
function webhookRoutes(
  endpoint: Omit<HttpEndpoint, "route" | "path" | "auth" | "tag"> & { path: `/workspaces/:workspaceId/webhook-endpoints${string}` | `/webhook-endpoints/:endpointId${string}` },
): HttpEndpoint[] {
  const { path, permission, description, errors = [], example = {}, ...rest } = endpoint;
  const scoped = path.startsWith("/webhook-endpoints/");
  const withoutWorkspace = Object.fromEntries(Object.entries(example).filter(([k]) => k !== "workspaceId"));
  return [
    {
      ...rest,
      path: scoped ? `/api/workspaces/:workspaceId${path}` : `/api${path}`,
      route: "workspace-notifications",
      tag: "Dashboard",
      ...(permission ? { permission } : {}),
      description: `${description} For members of the workspace whose role grants ${permission ?? "programs:read"}.`,
      example: { workspaceId: 1, ...example },
      errors: [...new Set<ErrorCode>(["forbidden", "not_found", ...errors])],
    },
    {
      ...rest,
      path: `/api/admin${path}`,
      route: "admin",
      tag: "Operator",
      description,
      example: scoped ? withoutWorkspace : example,
      ...(errors.length ? { errors } : {}),
    },
    programApiRoute({
      ...rest,
      path: scoped ? path : "/webhook-endpoints",
      scope: rest.method === "GET" ? "webhooks:read" : "webhooks:write",
      description: `${description} With an API key: only the endpoints made with a key of its program, which get that program's events only.`,
      example: { programId: 1, ...withoutWorkspace },
      errors: [...new Set<ErrorCode>(["not_found", ...errors])],
    }),
  ];
}

export const NOTIFICATIONS = declareActions("notifications", {
  // Bus only: an outbox relay's claimed batch (shared/outbox/notify.ts); each event is parsed in the handler.
  events: { input: S.EventsInput },
  // Bus only: the partner portal's postbacks (docs/partners.md, "Postbacks"); the portal checked the partner's enrollment.
  listPartnerPostbacks: { input: S.PartnerPostbacksInput },
  createPartnerPostback: { input: S.CreatePartnerPostbackInput },
  disablePartnerPostback: { input: S.PartnerPostbackInput },
  enablePartnerPostback: { input: S.PartnerPostbackInput },
  rotatePartnerPostbackSecret: { input: S.PartnerPostbackInput },
  sendPartnerPostbackTest: { input: S.PartnerPostbackInput },
  listPartnerPostbackDeliveries: { input: S.PartnerPostbackDeliveriesInput },
  retryPartnerPostbackDelivery: { input: S.RetryPartnerPostbackInput },
  listForWorkspace: {
    input: S.WorkspaceListInput,
    http: {
      method: "GET",
      path: "/api/workspaces/:workspaceId/notifications",
      route: "workspace-notifications",
      tag: "Dashboard",
      summary: "The workspace's notices and warnings",
      description:
        "Newest first, with unread counts per kind, filtered by kind, read state, program, partner and creation date. Pass nextCursor as cursor for the next page; it is null on the last page. For members of the workspace whose role grants programs:read.",
      example: { workspaceId: 1, kind: "partner_notice", unread: "true", limit: 50 },
      errors: ["forbidden", "not_found"],
      response: { description: "A page of notifications.", example: { data: [notificationExample], unread: unreadExample, nextCursor: null } },
    },
  },
  markAllRead: {
    input: S.MarkAllReadInput,
    http: {
      method: "POST",
      path: "/api/workspaces/:workspaceId/notifications/read-all",
      route: "workspace-notifications",
      tag: "Dashboard",
      summary: "Mark all (of a kind) read",
      description: "Marks every unread notification of the workspace read, or only those of one kind.",
      example: { workspaceId: 1, kind: "partner_notice" },
      errors: ["forbidden", "not_found"],
      response: { description: "How many were marked, and the new unread counts.", example: { updated: 1, unread: { partner_notice: 0, advertiser_warning: 0, total: 0 } } },
    },
  },
  markRead: {
    input: S.MarkReadInput,
    http: {
      method: "POST",
      path: "/api/workspaces/:workspaceId/notifications/:notificationId/read",
      route: "workspace-notifications",
      tag: "Dashboard",
      summary: "Mark one notification read",
      description: "Sets the notification's read time; marking one that is already read changes nothing.",
      example: { workspaceId: 1, notificationId: 12 },
      errors: ["forbidden", "not_found"],
      response: {
        description: "The notification and the new unread counts.",
        example: { data: { ...notificationExample, readAt: "2026-01-02T00:00:00.000Z" }, unread: { partner_notice: 0, advertiser_warning: 0, total: 0 } },
      },
    },
  },
  list: {
    input: S.ListInput,
    http: {
      method: "GET",
      path: "/api/admin/notifications",
      route: "admin",
      tag: "Operator",
      summary: "Notifications by workspace, program, partner or kind",
      description: "Partner notices and advertiser warnings, newest first, filtered by the given fields.",
      example: { partnerId: 3, kind: "partner_notice", limit: 50 },
      response: { description: "Newest first.", example: [notificationExample] },
    },
  },
  createWebhookEndpoint: {
    input: S.CreateEndpointInput,
    http: webhookRoutes({
      method: "POST",
      path: "/workspaces/:workspaceId/webhook-endpoints",
      permission: "programs:write",
      summary: "Register a webhook endpoint",
      description: `Events of the workspace's programs (partners enrolled, leads, sales, commissions, withdrawals; see the webhooks of this document), of the event types chosen, are posted to the URL, signed with the endpoint's secret. The secret is in this answer only. ${TARGET_RULE}`,
      example: { workspaceId: 1, url: "https://merchant.example/hooks", eventTypes: ["commission.refunded", "commission.reversed"] },
      errors: ["not_found", "webhook_target_not_allowed"],
      response: { description: "The endpoint with its secret.", example: { ...endpointExample, secret: "whsec_..." } },
    }),
  },
  listWebhookEndpoints: {
    input: S.ListEndpointsInput,
    http: webhookRoutes({
      method: "GET",
      path: "/workspaces/:workspaceId/webhook-endpoints",
      summary: "A workspace's webhook endpoints",
      description: "Every endpoint of the workspace, enabled or not, without secrets.",
      example: { workspaceId: 1 },
      response: { description: "The endpoints (without secrets).", example: [endpointExample] },
    }),
  },
  disableWebhookEndpoint: {
    input: S.DisableEndpointInput,
    http: webhookRoutes({
      method: "POST",
      path: "/webhook-endpoints/:endpointId/disable",
      permission: "programs:write",
      summary: "Disable a webhook endpoint",
      description:
        "Nothing more is sent to it until it is enabled again; its pending deliveries wait. Endpoints are also disabled by themselves after repeated failed deliveries. Disabling one that is disabled changes nothing.",
      example: { endpointId: 4, reason: "moving servers" },
      errors: ["not_found"],
      response: { description: "The endpoint.", example: { ...endpointExample, enabled: false, disabledReason: "moving servers" } },
    }),
  },
  enableWebhookEndpoint: {
    input: S.EndpointIdInput,
    http: webhookRoutes({
      method: "POST",
      path: "/webhook-endpoints/:endpointId/enable",
      permission: "programs:write",
      summary: "Enable a webhook endpoint",
      description: "Deliveries resume, with a fresh count of failures. The URL is checked again as at registration (422 webhook_target_not_allowed).",
      example: { endpointId: 4 },
      errors: ["not_found", "webhook_target_not_allowed"],
      response: { description: "The endpoint.", example: endpointExample },
    }),
  },
  rotateWebhookSecret: {
    input: S.EndpointIdInput,
    http: webhookRoutes({
      method: "POST",
      path: "/webhook-endpoints/:endpointId/rotate-secret",
      permission: "programs:write",
      summary: "Rotate an endpoint's signing secret",
      description:
        "Makes a new signing secret, shown in this answer only. Every delivery sent from now on is signed with it; for the next 24 hours (until previousSecretExpiresAt) each one also carries a second v1 signature made with the previous secret, so a receiver still holding the old secret keeps verifying while you deploy the new one. Rotating again within those 24 hours ends the oldest secret at once: at most two are ever in use.",
      example: { endpointId: 4 },
      errors: ["not_found"],
      response: { description: "The endpoint with its new secret.", example: { ...endpointExample, previousSecretExpiresAt: "2026-01-02T00:00:00.000Z", secret: "whsec_..." } },
    }),
  },
  sendTestWebhook: {
    input: S.EndpointIdInput,
    http: webhookRoutes({
      method: "POST",
      path: "/webhook-endpoints/:endpointId/test",
      permission: "programs:write",
      summary: "Send a test event to an endpoint",
      description:
        "Queues one test.ping event for this endpoint only, whatever event types it takes: posted, signed and retried like any event, and listed in its delivery log (see the test.ping webhook of this document). The answer is the queued delivery; read the delivery log for its outcome. The endpoint must be enabled (409 conflict otherwise), and its URL is checked as at registration (422 webhook_target_not_allowed).",
      example: { endpointId: 4 },
      errors: ["not_found", "conflict", "webhook_target_not_allowed"],
      response: { description: "The queued delivery.", example: testDeliveryExample },
    }),
  },
  listWebhookDeliveries: {
    input: S.ListDeliveriesInput,
    http: webhookRoutes({
      method: "GET",
      path: "/webhook-endpoints/:endpointId/deliveries",
      summary: "An endpoint's delivery log",
      description:
        "The endpoint's deliveries, newest first, each with its status (pending, succeeded or failed), its attempts and every attempt's status code or error, with the start of a text answer (responseExcerpt: one line, at most 200 characters). A target refused at delivery (its host resolved to an address that is not public) fails the delivery at once, with the reason as its error. Pass nextCursor as cursor for the next page; it is null on the last page.",
      example: { endpointId: 4, status: "failed", limit: 25 },
      errors: ["not_found"],
      response: { description: "A page of deliveries, newest first.", example: { data: [failedDeliveryExample], nextCursor: null } },
    }),
  },
  retryWebhookDelivery: {
    input: S.RetryDeliveryInput,
    http: webhookRoutes({
      method: "POST",
      path: "/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry",
      permission: "programs:write",
      summary: "Retry a failed delivery",
      description:
        "Sends a failed delivery again, with the same event and body: it becomes pending at once with a fresh allowance of attempts, and its next attempts join its log. Retrying a delivery that is pending or succeeded changes nothing: the answer says retried false, with the delivery as it is. The endpoint must be enabled (409 conflict otherwise), and its URL is checked as at registration (422 webhook_target_not_allowed).",
      example: { endpointId: 4, deliveryId: 9 },
      errors: ["not_found", "conflict", "webhook_target_not_allowed"],
      response: {
        description: "Whether it was retried, and the delivery.",
        example: { retried: true, delivery: { ...failedDeliveryExample, status: "pending", retriedAt: "2026-01-01T01:00:00.000Z" } },
      },
    }),
  },
  listPartnerEmails: {
    input: S.ListPartnerEmailsInput,
    http: {
      method: "GET",
      path: "/api/admin/partner-emails",
      route: "admin",
      tag: "Operator",
      summary: "Emails to partners, every program",
      description:
        "Every email to partners (applications, commissions, refunds, payouts, monthly summaries), newest first: recipient, subject, text and Message-ID (every attempt sends the same), state (pending, sent, skipped with the reason, failed after the attempts allowed), attempts and last error.",
      example: { partnerId: 3, status: "skipped", limit: 50 },
      response: { description: "Newest first.", example: [partnerEmailExample] },
    },
  },
  listProgramPartnerEmails: {
    input: S.ProgramPartnerEmailsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/partner-emails",
      tag: "Dashboard",
      summary: "The program's emails to partners",
      description:
        "The emails the program's partners were sent or are to be sent, newest first, with their state: pending (attempts 0: queued; more: retrying after lastError, at nextAttemptAt), sent, skipped (skipReason: no email address, unsubscribed) or failed (given up after 10 attempts; retry it). Pass nextCursor as cursor for the next page.",
      example: { programId: 1, status: "failed", limit: 25 },
      errors: ["not_found"],
      response: { description: "A page of emails, newest first.", example: { data: [partnerEmailExample], nextCursor: null } },
    }),
  },
  retryPartnerEmail: {
    input: S.PartnerEmailIdInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/partner-emails/:emailId/retry",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Send a failed partner email again",
      description:
        "A failed email becomes pending, with a fresh allowance of attempts and the same content and Message-ID. One that is pending, sent or skipped is left as it is: the answer says retried false.",
      example: { programId: 1, emailId: 3 },
      errors: ["not_found"],
      response: { description: "Whether it was retried, and the email.", example: { retried: true, email: { ...partnerEmailExample, attempts: 0 } } },
    }),
  },
  getPartnerEmailSettings: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/partner-email-settings",
      tag: "Dashboard",
      summary: "The program's partner email settings",
      description: "The reply-to address of the program's partner emails, how often partners hear of new commissions, and whether they get monthly summaries (defaults: none, daily, true).",
      example: { programId: 1 },
      errors: ["not_found"],
      response: { description: "The settings.", example: emailSettingsExample },
    }),
  },
  setPartnerEmailSettings: {
    input: S.PartnerEmailSettingsInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/partner-email-settings",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Change the program's partner email settings",
      description:
        "A field left out keeps its value. A new commission frequency applies to commissions from now on (those already waiting go out in their digest); turning commission emails off stops their digests.",
      example: { programId: 1, replyTo: "partners@acme.example", commissionEmails: "weekly" },
      errors: ["not_found"],
      response: { description: "The settings.", example: { ...emailSettingsExample, commissionEmails: "weekly" } },
    }),
  },
  unsubscribeLink: {
    input: S.UnsubscribeInput,
    http: {
      method: "GET",
      path: "/api/public/unsubscribe/:token",
      route: "email-links",
      tag: "Partner portal",
      summary: "What an unsubscribe link is for",
      description:
        "For the page the link of a partner email opens (/portal/unsubscribe?token=...): the program, the category of emails it stops, the address (partly hidden) and whether it is unsubscribed now. Changes nothing. 404 for a token that is not an email's.",
      example: { token: "q3v1Zb0Yw2kV8n4xT6mR9pLs" },
      errors: ["not_found"],
      response: { description: "The link's subscription.", example: { ...unsubscribeExample, unsubscribed: false } },
    },
  },
  unsubscribe: {
    input: S.UnsubscribeInput,
    http: {
      method: "POST",
      path: "/api/public/unsubscribe/:token",
      route: "email-links",
      tag: "Partner portal",
      summary: "Unsubscribe (one click)",
      description:
        "The List-Unsubscribe URL of partner emails (RFC 8058 one-click: mail clients POST List-Unsubscribe=One-Click; any body is ignored) and the page's button: the address gets no more emails of this category from this program, from now on (those waiting to be sent are skipped). Payout failures and sign-in links are never unsubscribed. Doing it again changes nothing.",
      example: { token: "q3v1Zb0Yw2kV8n4xT6mR9pLs" },
      errors: ["not_found"],
      response: { description: "The link's subscription, unsubscribed.", example: unsubscribeExample },
    },
  },
  resubscribe: {
    input: S.UnsubscribeInput,
    http: {
      method: "POST",
      path: "/api/public/unsubscribe/:token/resubscribe",
      route: "email-links",
      tag: "Partner portal",
      summary: "Subscribe again",
      description: "Undoes an unsubscribe from the same link: emails of this category come again from now on (those skipped meanwhile stay skipped).",
      example: { token: "q3v1Zb0Yw2kV8n4xT6mR9pLs" },
      errors: ["not_found"],
      response: { description: "The link's subscription, subscribed.", example: { ...unsubscribeExample, unsubscribed: false } },
    },
  },
  runEmailSchedule: {
    input: S.RunEmailScheduleInput,
  },
  listPartnerNotices: {
    input: S.PartnerNoticesInput,
  },
  markPartnerNoticeRead: {
    input: S.PartnerNoticeReadInput,
  },
  rollupDrift: {
    input: S.RollupDriftInput,
  },
});
