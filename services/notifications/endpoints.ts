/** The notifications service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
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
const unreadExample = { partner_notice: 1, advertiser_warning: 0, total: 1 };
const endpointExample = {
  id: 4,
  workspaceId: 1,
  url: "https://merchant.example/hooks",
  eventTypes: ["commission.created", "commission.refunded", "commission.reversed"],
  enabled: true,
};

export const NOTIFICATIONS = declareActions("notifications", {
  // Bus only: an outbox relay's claimed batch (shared/outbox/notify.ts); each event is parsed in the handler.
  events: { input: S.EventsInput },
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
    http: {
      method: "POST",
      path: "/api/admin/workspaces/:workspaceId/webhook-endpoints",
      route: "admin",
      tag: "Operator",
      summary: "Register a webhook endpoint",
      description:
        "Events of the workspace's programs (partners enrolled, leads, sales, commissions, withdrawals; see the webhooks of this document) are posted to the URL, signed with the endpoint's secret. The secret is in this answer only. The URL's host must be a public internet address: a host that is, or resolves to, a loopback, private, link-local, unspecified, multicast or carrier-grade NAT address (in any spelling, IPv4-mapped IPv6 included) is refused with 422 webhook_target_not_allowed, unless the operator set WEBHOOK_ALLOW_PRIVATE_TARGETS=true.",
      example: { workspaceId: 1, url: "https://merchant.example/hooks", eventTypes: ["commission.refunded", "commission.reversed"] },
      errors: ["not_found", "webhook_target_not_allowed"],
      response: { description: "The endpoint with its secret.", example: { ...endpointExample, secret: "whsec_..." } },
    },
  },
  listWebhookEndpoints: {
    input: S.WorkspaceIdInput,
    http: {
      method: "GET",
      path: "/api/admin/workspaces/:workspaceId/webhook-endpoints",
      route: "admin",
      tag: "Operator",
      summary: "A workspace's webhook endpoints",
      description: "Every endpoint of the workspace, enabled or not, without secrets.",
      example: { workspaceId: 1 },
      response: { description: "The endpoints (without secrets).", example: [endpointExample] },
    },
  },
  disableWebhookEndpoint: {
    input: S.DisableEndpointInput,
    http: {
      method: "POST",
      path: "/api/admin/webhook-endpoints/:endpointId/disable",
      route: "admin",
      tag: "Operator",
      summary: "Disable a webhook endpoint",
      description: "Nothing more is sent to it until it is enabled again. Endpoints are also disabled by themselves after repeated failed deliveries.",
      example: { endpointId: 4, reason: "moving servers" },
      errors: ["not_found"],
      response: { description: "The endpoint.", example: { ...endpointExample, enabled: false, disabledReason: "moving servers" } },
    },
  },
  enableWebhookEndpoint: {
    input: S.EndpointIdInput,
    http: {
      method: "POST",
      path: "/api/admin/webhook-endpoints/:endpointId/enable",
      route: "admin",
      tag: "Operator",
      summary: "Enable a webhook endpoint",
      description: "Deliveries resume, with a fresh count of failures. The URL is checked again as at registration (422 webhook_target_not_allowed).",
      example: { endpointId: 4 },
      errors: ["not_found", "webhook_target_not_allowed"],
      response: { description: "The endpoint.", example: endpointExample },
    },
  },
  listWebhookDeliveries: {
    input: S.ListDeliveriesInput,
    http: {
      method: "GET",
      path: "/api/admin/webhook-endpoints/:endpointId/deliveries",
      route: "admin",
      tag: "Operator",
      summary: "Deliveries of an endpoint, with every attempt",
      description:
        "Newest first, each with its attempts: status code or error, and the start of a text answer (responseExcerpt: one line, at most 200 characters). A target refused at delivery (its host resolved to an address that is not public) fails the delivery at once, with the reason as its error.",
      example: { endpointId: 4, status: "failed", limit: 50 },
      errors: ["not_found"],
      response: {
        description: "Newest first.",
        example: [
          { id: 9, eventId: 2, status: "failed", attempts: 1, attemptLog: [{ attempt: 1, statusCode: 500, error: "HTTP 500", responseExcerpt: "Internal Server Error", durationMs: 41 }] },
        ],
      },
    },
  },
  listPartnerNotices: {
    input: S.PartnerNoticesInput,
  },
  markPartnerNoticeRead: {
    input: S.PartnerNoticeReadInput,
  },
});
