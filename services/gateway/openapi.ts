/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the same zod
 * schemas the actions validate their input with (zod's JSON Schema output),
 * so the reference cannot drift from the validation. Field descriptions and
 * examples are the schemas' metadata (.describe / .meta({ description, example }))
 * and come through z.toJSONSchema; every text here is for API users: plain
 * text, no internal names (test/http/api-docs.test.ts).
 *
 * OPERATIONS has one entry per gateway route alias ("METHOD /full/path", with
 * Moleculer's `:param` syntax): the action it reaches, its auth, its input
 * schema, examples and the error codes it can answer with (shared/errors.ts).
 * test/http/openapi.test.ts fails when an alias of the gateway has no entry,
 * or an entry no alias.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../../shared/errors";
import * as Accounts from "../accounts/schemas";
import * as Attribution from "../attribution/schemas";
import * as Commissions from "../commissions/schemas";
import * as Notifications from "../notifications/schemas";
import * as Processor from "../processor/schemas";
import * as Programs from "../programs/schemas";
import * as Sales from "../sales/schemas";

/** How a caller authenticates on a route (the gateway's `authentication` method). */
export type Auth = "none" | "apiKey" | "optionalApiKey" | "session" | "operator" | "stripeSignature";

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface OperationSpec {
  /** The alias target: an action name, or null for a route answered by the gateway itself (a page, a file). */
  action: string | null;
  tag: "Health" | "Tracking" | "Dashboard" | "Processor" | "Reference" | "Operator";
  summary: string;
  /** What a reader of the reference needs: plain text (no Markdown code spans), no internal names or file paths. */
  description: string;
  auth: Auth;
  /**
   * The zod schema the action parses its params with (path parameters, then
   * the query for GET or the JSON body otherwise), `"none"` when it takes no
   * input, or a raw body the action verifies itself.
   */
  input: AnyObject | "none" | { raw: string; description: string };
  /** A valid input (path, query and body fields together); the test parses it with `input`. */
  example?: Record<string, unknown>;
  /** Error codes this operation answers with beyond those its auth, input and the bus imply. */
  errors?: ErrorCode[];
  response: { status?: number; description: string; contentType?: string; example?: unknown };
  /** Other documented answers that are not errors of the envelope (e.g. readiness' 503). */
  otherResponses?: Record<string, { description: string; example: unknown }>;
  /** False for routes answered by the gateway alone, which cannot meet an unavailable service. */
  busErrors?: false;
}

const refundedExample = { success: true, status: "refunded", deductionAmount: 6, commission_id: 7 };
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
const programExample = {
  id: 1,
  workspaceId: 1,
  name: "Acme",
  currency: "usd",
  commissionRule: { type: "percentage", basisPoints: 2000 },
  holdDays: 30,
  paymentTrackingMode: "s2s",
  testMode: false,
};
const endpointExample = {
  id: 4,
  workspaceId: 1,
  url: "https://merchant.example/hooks",
  eventTypes: ["commission.created", "commission.refunded", "commission.reversed"],
  enabled: true,
};

/** Every route alias of the gateway, keyed "METHOD /full/path". */
export const OPERATIONS: Record<string, OperationSpec> = {
  // --- Health and reference ---------------------------------------------------------------
  "GET /api/health": {
    action: "gateway.health",
    tag: "Health",
    summary: "Readiness",
    description:
      "200 only when every storage service reaches its database and the message bus is connected; 503 otherwise (also while the server shuts down), with the state of each. Use it as the readiness probe.",
    auth: "none",
    input: "none",
    busErrors: false,
    response: {
      description: "Ready.",
      example: { status: "ok", transporter: "connected", services: { programs: "ok", attribution: "ok", sales: "ok", commissions: "ok", notifications: "ok", accounts: "ok", processor: "ok" } },
    },
    otherResponses: {
      "503": {
        description: "Not ready: a storage service or the message bus is down (unavailable), or the server is shutting down (stopping).",
        example: { status: "unavailable", transporter: "connected", services: { programs: "ok", attribution: "ok", sales: "ok", commissions: "unavailable", notifications: "ok", accounts: "ok", processor: "ok" } },
      },
    },
  },
  "GET /api/health/live": {
    action: "gateway.live",
    tag: "Health",
    summary: "Liveness",
    description: "200 while the server process responds; checks no dependency. Use it as the liveness probe.",
    auth: "none",
    input: "none",
    busErrors: false,
    response: { description: "Alive.", example: { status: "ok", nodeID: "gateway-1", uptimeSeconds: 3600 } },
  },
  "GET /api/openapi.json": {
    action: null,
    tag: "Reference",
    summary: "This document",
    description: "The OpenAPI 3.1 description of this API, generated from the same schemas that validate requests. Cached for five minutes; CORS open.",
    auth: "none",
    input: "none",
    response: { description: "The OpenAPI 3.1 document.", contentType: "application/json" },
  },
  "GET /api/docs": {
    action: null,
    tag: "Reference",
    summary: "API reference page",
    description: "An HTML page rendering this document with an interactive viewer. Everything it loads comes from this server (no other host is contacted).",
    auth: "none",
    input: "none",
    response: { description: "The reference page.", contentType: "text/html" },
  },

  "GET /api/docs/scalar.js": {
    action: null,
    tag: "Reference",
    summary: "API reference viewer script",
    description: "The viewer the reference page runs (Scalar API Reference), served from this server so the page needs no other host. Cached for a year: the page names the viewer's version in the query.",
    auth: "none",
    input: "none",
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },

  // --- Tracking ---------------------------------------------------------------------------
  "POST /api/v1/track/click": {
    action: "attribution.trackClick",
    tag: "Tracking",
    summary: "Track a referral click",
    description:
      "Called from the browser snippet (no secret, CORS open). When the program lists allowed origins, the request's Origin header must be one of them. Keep the returned click_id: the snippet stores it in the svc_click_id cookie.",
    auth: "none",
    input: Attribution.TrackClickRequest,
    example: { program_id: 1, referral_code: "jane", url: "https://shop.example/?via=jane", referrer: "https://blog.example/" },
    errors: ["forbidden", "not_found"],
    response: { description: "The click.", example: { success: true, click_id: "clk_3f9a6c1e2b7d4a50", id: 1, test: false } },
  },
  "POST /api/v1/track/lead": {
    action: "attribution.trackLead",
    tag: "Tracking",
    summary: "Track a signup (lead)",
    description:
      "From a merchant server with the program's API key, or from the browser without a key when program_id and a valid click_id of the program are sent. Leads are first-touch per customer key: the first lead of a customer keeps its partner.",
    auth: "optionalApiKey",
    input: Attribution.TrackLeadRequest,
    example: { customer_key: "user-42", email: "jane@example.com", click_id: "clk_3f9a6c1e2b7d4a50" },
    errors: ["forbidden", "not_found"],
    response: {
      description: "The lead; created is false when the customer key was already known.",
      example: { success: true, lead_id: 1, customer_key: "user-42", created: true, attributed: true, partner_id: 3, test: false },
    },
  },
  "POST /api/v1/track/sale": {
    action: "sales.track",
    tag: "Tracking",
    summary: "Track a sale",
    description:
      "Server to server only (no CORS). The transaction id is unique per program: a repeat is 409 already_recorded. An attributed, non-test sale gets a commission at the program's rule (commission_status is processing while it is still being created).",
    auth: "apiKey",
    input: Sales.TrackSaleRequest,
    example: { transaction_id: "order-1001", amount_cents: 10000, currency: "usd", customer_key: "user-42" },
    errors: ["already_recorded"],
    response: {
      description: "The recorded sale and its commission.",
      example: {
        success: true,
        sale_id: 1,
        transaction_id: "order-1001",
        amount_cents: 10000,
        currency: "usd",
        test: false,
        attributed: true,
        partner_id: 3,
        attribution_method: "customer_key",
        commission_id: 7,
        commission_status: "pending",
      },
    },
  },
  "POST /api/v1/track/refund": {
    action: "sales.refund",
    tag: "Tracking",
    summary: "Refund (or charge back) a sale",
    description:
      "Reduces the sale's commission in proportion to the refunded share of the sale. Omitting refund_amount_cents (or 0) refunds the rest (refund_id is then ignored); an over-refund is capped. The status is refunded, reversed (fully refunded), skipped or no_commission. " +
      "Retries are skipped and change nothing. With a refund_id: skipped when that refund_id was already applied to the sale, whatever the amount. " +
      "Without a refund_id: skipped when refund_amount_cents equals the amount asked for (before capping) by any earlier refund of the sale, whether or not that refund had a refund_id; a different amount is applied. So two real refunds of the same amount need refund ids. " +
      "The other way round, a refund with a new refund_id is applied even when an earlier refund without one had the same amount: an id names a refund explicitly. Once the commission is reversed, every call is skipped.",
    auth: "apiKey",
    input: Sales.RefundRequest,
    example: { transaction_id: "order-1001", refund_amount_cents: 3000, refund_id: "re_1", refund_reason: "customer request" },
    errors: ["not_found"],
    response: { description: "What the refund did to the commission (deductionAmount is in major units).", example: refundedExample },
  },

  // --- Processor --------------------------------------------------------------------------
  "POST /api/v1/webhooks/processor": {
    action: "gateway.processorWebhook",
    tag: "Processor",
    summary: "Processor (Stripe Connect) webhook",
    description:
      "The signature in the Stripe-Signature header is verified over the exact body. Completed checkout sessions, paid invoices and payment links record sales; refunds and disputes reduce commissions; account updates keep the program's connection current. 2xx for every event that was taken or that can never succeed (the reason is recorded on the event and listed by the operator's processor events endpoint); 503 only for a temporary problem (a refund whose sale is not linked yet, a database outage), so the processor retries.",
    auth: "stripeSignature",
    input: { raw: "application/json", description: "The Stripe event, byte for byte as Stripe sent it." },
    errors: ["invalid_signature", "invalid_request", "conflict", "payload_too_large", "service_unavailable"],
    response: {
      description: "Received (also for events that are not used, ignored or rejected, with the reason).",
      example: { received: true, handled: true, transactionId: "cs_1", settled: { targetRefundedCents: 3000 } },
    },
  },

  // --- Dashboard --------------------------------------------------------------------------
  "POST /api/auth/login": {
    action: "gateway.login",
    tag: "Dashboard",
    summary: "Sign in",
    description:
      "Sets the svc_session cookie (HttpOnly, SameSite=Lax, Secure over HTTPS). Failed sign-ins are throttled per email and client address, per email and per client address, with growing delays (a 429 names which limit was reached).",
    auth: "none",
    input: Accounts.LoginRequest,
    example: { email: "owner@example.com", password: "correct horse battery staple" },
    errors: ["unauthorized", "rate_limit_exceeded"],
    response: { description: "Signed in; the session is in the Set-Cookie header.", example: { success: true, user: { id: 5, email: "owner@example.com", name: "Owner" } } },
  },
  "POST /api/auth/logout": {
    action: "gateway.logout",
    tag: "Dashboard",
    summary: "Sign out",
    description: "Ends the session of the svc_session cookie, if any, and clears the cookie. Always succeeds.",
    auth: "none",
    input: "none",
    response: { description: "Signed out; the cookie is cleared.", example: { success: true } },
  },
  "GET /api/auth/me": {
    action: "accounts.me",
    tag: "Dashboard",
    summary: "The signed-in user and their workspaces",
    description: "The user of the session cookie, with each workspace they belong to and their role in it.",
    auth: "session",
    input: "none",
    response: { description: "The user.", example: { user: { id: 5, email: "owner@example.com", name: "Owner" }, workspaces: [{ workspaceId: 1, role: "owner" }] } },
  },
  "GET /api/tracking/status/:programId": {
    action: "status.forProgram",
    tag: "Dashboard",
    summary: "Integration status of a program",
    description: "The integration checklist: page views (test clicks), referrals (test leads) and payments, each pending or complete, with counts and the latest test event. For a member of the program's workspace whose role grants tracking:read; API keys are refused.",
    auth: "session",
    input: Programs.ProgramIdInput,
    example: { programId: 1 },
    errors: ["forbidden", "not_found"],
    response: {
      description: "The three integration steps with their state, test event counts and latest test event.",
      example: { programId: "1", steps: { pageview: { status: "complete" }, referrals: { status: "complete" }, payments: { status: "pending" } } },
    },
  },
  "GET /api/workspaces/:workspaceId/notifications": {
    action: "notifications.listForWorkspace",
    tag: "Dashboard",
    summary: "The workspace's notices and warnings",
    description: "Newest first, with unread counts per kind. Pass nextBefore as before for the next page. For members of the workspace whose role grants programs:read.",
    auth: "session",
    input: Notifications.WorkspaceListInput,
    example: { workspaceId: 1, kind: "partner_notice", unread: "true", limit: 50 },
    errors: ["forbidden", "not_found"],
    response: { description: "A page of notifications.", example: { data: [notificationExample], unread: unreadExample, nextBefore: null } },
  },
  "POST /api/workspaces/:workspaceId/notifications/read-all": {
    action: "notifications.markAllRead",
    tag: "Dashboard",
    summary: "Mark all (of a kind) read",
    description: "Marks every unread notification of the workspace read, or only those of one kind.",
    auth: "session",
    input: Notifications.MarkAllReadInput,
    example: { workspaceId: 1, kind: "partner_notice" },
    errors: ["forbidden", "not_found"],
    response: { description: "How many were marked, and the new unread counts.", example: { updated: 1, unread: { partner_notice: 0, advertiser_warning: 0, total: 0 } } },
  },
  "POST /api/workspaces/:workspaceId/notifications/:notificationId/read": {
    action: "notifications.markRead",
    tag: "Dashboard",
    summary: "Mark one notification read",
    description: "Sets the notification's read time; marking one that is already read changes nothing.",
    auth: "session",
    input: Notifications.MarkReadInput,
    example: { workspaceId: 1, notificationId: 12 },
    errors: ["forbidden", "not_found"],
    response: { description: "The notification and the new unread counts.", example: { data: { ...notificationExample, readAt: "2026-01-02T00:00:00.000Z" }, unread: { partner_notice: 0, advertiser_warning: 0, total: 0 } } },
  },
  "GET /dashboard": {
    action: null,
    tag: "Dashboard",
    summary: "The integration checklist page",
    description: "The dashboard page showing a program's integration checklist; it asks for a sign-in and then reads the status endpoint.",
    auth: "none",
    input: "none",
    response: { description: "The page; it shows a sign-in form when there is no session.", contentType: "text/html" },
  },
  "GET /sdk/svc.js": {
    action: null,
    tag: "Tracking",
    summary: "The browser snippet",
    description: "Include it on your pages with a data-program-id attribute: on a referral link it tracks the click and stores the click id in the svc_click_id cookie, and svc.signup(userId) tracks the lead.",
    auth: "none",
    input: "none",
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },

  // --- Operator (admin) -------------------------------------------------------------------
  "POST /api/admin/programs": {
    action: "programs.create",
    tag: "Operator",
    summary: "Create a program",
    description: "A program has a currency, a commission rule, a hold period and a way sales arrive (the processor's webhooks or your server). Create an API key and partners for it next.",
    auth: "operator",
    input: Programs.CreateProgramInput,
    example: { workspaceId: 1, name: "Acme", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30, paymentTrackingMode: "s2s" },
    errors: ["not_found"],
    response: { description: "The program.", example: programExample },
  },
  "GET /api/admin/programs/:programId": {
    action: "programs.get",
    tag: "Operator",
    summary: "A program",
    description: "The program's settings and its processor connection.",
    auth: "operator",
    input: Programs.ProgramIdInput,
    example: { programId: 1 },
    errors: ["not_found"],
    response: { description: "The program.", example: programExample },
  },
  "POST /api/admin/programs/:programId/api-keys": {
    action: "programs.createApiKey",
    tag: "Operator",
    summary: "Create an API key",
    description: "The key authenticates your server's tracking calls for the program. The whole key is in this answer only: it is stored as a hash.",
    auth: "operator",
    input: Programs.ProgramIdInput,
    example: { programId: 1 },
    errors: ["not_found"],
    response: { description: "The key with its secret.", example: { id: 2, programId: 1, prefix: "svc_sk_0123456789abcdef", apiKey: "svc_sk_0123456789abcdef_..." } },
  },
  "POST /api/admin/api-keys/:keyId/retire": {
    action: "programs.retireApiKey",
    tag: "Operator",
    summary: "Retire an API key",
    description: "From now on the key is refused with 401 api_key_retired. Retiring it again changes nothing.",
    auth: "operator",
    input: Programs.KeyIdInput,
    example: { keyId: 2 },
    errors: ["not_found"],
    response: { description: "The retired key.", example: { id: 2, programId: 1, retiredAt: "2026-01-01T00:00:00.000Z" } },
  },
  "POST /api/admin/programs/:programId/partners": {
    action: "programs.createPartner",
    tag: "Operator",
    summary: "Create a partner",
    description: "The partner is enrolled in the program, approved, with a referral code that is unique in the program (409 when taken).",
    auth: "operator",
    input: Programs.CreatePartnerInput,
    example: { programId: 1, name: "Jane", email: "jane@example.com", referralCode: "jane" },
    errors: ["not_found", "conflict"],
    response: { description: "The partner and its enrollment.", example: { partner: { id: 3, name: "Jane" }, enrollment: { partnerId: 3, programId: 1, status: "approved", referralCode: "jane" } } },
  },
  "GET /api/admin/programs/:programId/sales/:transactionId": {
    action: "sales.get",
    tag: "Operator",
    summary: "A sale by transaction id",
    description: "The sale as recorded, with its attribution and commission.",
    auth: "operator",
    input: Sales.GetSaleInput,
    example: { programId: 1, transactionId: "order-1001" },
    errors: ["not_found"],
    response: { description: "The sale.", example: { id: 1, programId: 1, transactionId: "order-1001", amountCents: 10000, currency: "usd", partnerId: 3, commissionId: 7 } },
  },
  "GET /api/admin/commissions/:commissionId": {
    action: "commissions.get",
    tag: "Operator",
    summary: "A commission with its refunds and events",
    description: "The commission, every refund applied to it, and the events it produced with their delivery state.",
    auth: "operator",
    input: Commissions.CommissionIdInput,
    example: { commissionId: 7 },
    errors: ["not_found"],
    response: { description: "The commission.", example: { id: 7, status: "refunded", amountCents: 2000, refunds: [{ refundId: "re_1", deductionCents: 600 }], outbox: [{ id: 2, type: "commission.refunded", status: "dispatched" }] } },
  },
  "POST /api/admin/commissions/approve-due": {
    action: "commissions.approveDue",
    tag: "Operator",
    summary: "Credit commissions whose hold has passed",
    description: "Approves every pending commission whose hold period is over, crediting the partners' balances. The server also does this periodically; this runs it now.",
    auth: "operator",
    input: Commissions.ApproveDueInput,
    example: { programId: 1 },
    response: { description: "What was approved.", example: { approved: 1, commissionIds: [7] } },
  },
  "GET /api/admin/programs/:programId/partners/:partnerId/balance": {
    action: "commissions.balance",
    tag: "Operator",
    summary: "A partner's balance, with withdrawals",
    description: "Credited, deducted and paid amounts and the available balance, in minor units of one currency.",
    auth: "operator",
    input: Commissions.BalanceKeyInput,
    example: { programId: 1, partnerId: 3, currency: "usd" },
    errors: ["not_found"],
    response: { description: "The balance in minor units.", example: { partnerId: 3, programId: 1, currency: "usd", balanceCents: 1400, creditedCents: 2000, deductedCents: 600, paidCents: 0, withdrawals: [] } },
  },
  "POST /api/admin/programs/:programId/partners/:partnerId/withdrawals": {
    action: "commissions.createWithdrawal",
    tag: "Operator",
    summary: "Create a withdrawal",
    description: "Takes the amount (default: the whole available balance) out of the partner's balance for a payout. With an idempotency key, the same request again returns the same withdrawal; another request with that key is 409.",
    auth: "operator",
    input: Commissions.CreateWithdrawalInput,
    example: { programId: 1, partnerId: 3, amountCents: 1000, idempotencyKey: "payout-2030-01-partner-3" },
    errors: ["not_found", "conflict"],
    response: {
      description: "The withdrawal (for a key already used with the same request, the earlier withdrawal as it is now; another request with the key is 409).",
      example: { id: 2, partnerId: 3, programId: 1, currency: "usd", requestedCents: 1000, amountCents: 1000, status: "open", idempotencyKey: "payout-2030-01-partner-3" },
    },
  },
  "POST /api/admin/withdrawals/:withdrawalId/pay": {
    action: "commissions.payWithdrawal",
    tag: "Operator",
    summary: "Mark a withdrawal paid",
    description: "Records that the payout was sent. A withdrawal is paid once (409 otherwise).",
    auth: "operator",
    input: Commissions.WithdrawalIdInput,
    example: { withdrawalId: 2 },
    errors: ["not_found", "conflict"],
    response: { description: "The paid withdrawal.", example: { id: 2, status: "paid", amountCents: 1000 } },
  },
  "GET /api/admin/outbox": {
    action: "commissions.outboxBacklog",
    tag: "Operator",
    summary: "Commission events not yet delivered",
    description: "How many commission events still wait to become notifications and webhook deliveries. A number that keeps growing means their delivery is stuck.",
    auth: "operator",
    input: "none",
    response: { description: "The backlog.", example: { pending: 0 } },
  },
  "GET /api/admin/processor/events": {
    action: "processor.listEvents",
    tag: "Operator",
    summary: "Processor webhook events, newest first",
    description: "Every event the processor sent for a connected account, with its status (processed, ignored, rejected, failed, processing) and outcome: why an event was ignored or rejected, which sale it touched.",
    auth: "operator",
    input: Processor.ListEventsInput,
    example: { status: "rejected", limit: 20 },
    response: { description: "The events.", example: [{ eventId: "evt_1", type: "refund.created", status: "rejected", outcome: { reason: "rejected: Invalid 'amount'" } }] },
  },
  "GET /api/admin/processor/events/:eventId": {
    action: "processor.getEvent",
    tag: "Operator",
    summary: "One processor webhook event and its outcome",
    description: "The event's state, attempts and outcome, or null when it was never received.",
    auth: "operator",
    input: Processor.GetEventInput,
    example: { eventId: "evt_1" },
    response: { description: "The event, or null when it was never received.", example: { eventId: "evt_1", type: "charge.refunded", status: "processed", attempts: 1, outcome: { transactionId: "cs_1" } } },
  },
  "GET /api/admin/reconcile": {
    action: "commissions.reconcile",
    tag: "Operator",
    summary: "Check that the books add up",
    description: "Checks that balances, commissions, refunds and withdrawals agree, over one consistent snapshot. ok is false and violations lists them when any rule is broken.",
    auth: "operator",
    input: "none",
    response: { description: "The report.", example: { ok: true, violations: [], violationsNotShown: 0, checkedAt: "2026-01-01T00:00:00.000Z", durationMs: 12 } },
  },
  "GET /api/admin/notifications": {
    action: "notifications.list",
    tag: "Operator",
    summary: "Notifications by workspace, program, partner or kind",
    description: "Partner notices and advertiser warnings, newest first, filtered by the given fields.",
    auth: "operator",
    input: Notifications.ListInput,
    example: { partnerId: 3, kind: "partner_notice", limit: 50 },
    response: { description: "Newest first.", example: [notificationExample] },
  },
  "POST /api/admin/workspaces/:workspaceId/webhook-endpoints": {
    action: "notifications.createWebhookEndpoint",
    tag: "Operator",
    summary: "Register a webhook endpoint",
    description: "Commission events of the workspace are posted to the URL, signed with the endpoint's secret. The secret is in this answer only.",
    auth: "operator",
    input: Notifications.CreateEndpointInput,
    example: { workspaceId: 1, url: "https://merchant.example/hooks", eventTypes: ["commission.refunded", "commission.reversed"] },
    errors: ["not_found"],
    response: { description: "The endpoint with its secret.", example: { ...endpointExample, secret: "whsec_..." } },
  },
  "GET /api/admin/workspaces/:workspaceId/webhook-endpoints": {
    action: "notifications.listWebhookEndpoints",
    tag: "Operator",
    summary: "A workspace's webhook endpoints",
    description: "Every endpoint of the workspace, enabled or not, without secrets.",
    auth: "operator",
    input: Notifications.WorkspaceIdInput,
    example: { workspaceId: 1 },
    response: { description: "The endpoints (without secrets).", example: [endpointExample] },
  },
  "POST /api/admin/webhook-endpoints/:endpointId/disable": {
    action: "notifications.disableWebhookEndpoint",
    tag: "Operator",
    summary: "Disable a webhook endpoint",
    description: "Nothing more is sent to it until it is enabled again. Endpoints are also disabled by themselves after repeated failed deliveries.",
    auth: "operator",
    input: Notifications.DisableEndpointInput,
    example: { endpointId: 4, reason: "moving servers" },
    errors: ["not_found"],
    response: { description: "The endpoint.", example: { ...endpointExample, enabled: false, disabledReason: "moving servers" } },
  },
  "POST /api/admin/webhook-endpoints/:endpointId/enable": {
    action: "notifications.enableWebhookEndpoint",
    tag: "Operator",
    summary: "Enable a webhook endpoint",
    description: "Deliveries resume, with a fresh count of failures.",
    auth: "operator",
    input: Notifications.EndpointIdInput,
    example: { endpointId: 4 },
    errors: ["not_found"],
    response: { description: "The endpoint.", example: endpointExample },
  },
  "GET /api/admin/webhook-endpoints/:endpointId/deliveries": {
    action: "notifications.listWebhookDeliveries",
    tag: "Operator",
    summary: "Deliveries of an endpoint, with every attempt",
    description: "Newest first, each with its attempts (status code or error).",
    auth: "operator",
    input: Notifications.ListDeliveriesInput,
    example: { endpointId: 4, status: "failed", limit: 50 },
    errors: ["not_found"],
    response: { description: "Newest first.", example: [{ id: 9, eventId: 2, status: "failed", attempts: [{ attempt: 1, statusCode: 500, error: null }] }] },
  },
  "POST /api/admin/workspaces": {
    action: "accounts.createWorkspace",
    tag: "Operator",
    summary: "Create a workspace",
    description: "A workspace groups programs, dashboard users and webhook endpoints.",
    auth: "operator",
    input: Accounts.CreateWorkspaceInput,
    example: { name: "Acme Inc" },
    response: { description: "The workspace.", example: { id: 1, name: "Acme Inc" } },
  },
  "POST /api/admin/users": {
    action: "accounts.createUser",
    tag: "Operator",
    summary: "Create a dashboard user",
    description: "The email must be unused (409 otherwise). Grant the user a role in a workspace next.",
    auth: "operator",
    input: Accounts.CreateUserInput,
    example: { email: "dev@acme.test", name: "Dev", password: "at least 12 chars" },
    errors: ["conflict"],
    response: { description: "The user.", example: { id: 5, email: "dev@acme.test", name: "Dev" } },
  },
  "POST /api/admin/workspaces/:workspaceId/members": {
    action: "accounts.grantRole",
    tag: "Operator",
    summary: "Grant a role in a workspace",
    description: "Roles: owner, admin, developer, viewer and billing. Granting a role to a member changes their role.",
    auth: "operator",
    input: Accounts.GrantRoleInput,
    example: { workspaceId: 1, userId: 5, role: "developer" },
    errors: ["not_found"],
    response: { description: "The membership.", example: { workspaceId: 1, userId: 5, role: "developer" } },
  },
  "PUT /api/admin/programs/:programId/processor": {
    action: "programs.updateProcessorConnection",
    tag: "Operator",
    summary: "Set a program's processor connection",
    description:
      "Changes the fields given. The connection date (connectedAt, the status endpoint's connectionDate) is set by the first update that leaves the connection connected: to connectedAt when given, else now. Later updates keep it, also across a disconnect and reconnect of the same account; linking another accountId starts a new connection and a new date. The processor's account.updated events follow the same rule.",
    auth: "operator",
    input: Programs.UpdateProcessorConnectionInput,
    example: { programId: 1, connectionStatus: "connected", accountId: "acct_123", chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true },
    errors: ["not_found", "conflict"],
    response: { description: "The program.", example: programExample },
  },
};

// ---------------------------------------------------------------------------------------------
// Building the document

type Json = Record<string, unknown>;

const TAGS = [
  { name: "Tracking", description: "Clicks, leads, sales and refunds: the integration API." },
  { name: "Dashboard", description: "Sign-in and the endpoints of the dashboard (session cookie)." },
  { name: "Processor", description: "Webhooks from the payment processor." },
  { name: "Health", description: "Readiness and liveness probes." },
  { name: "Reference", description: "This document and its page." },
  { name: "Operator", description: "The operator API (Authorization: Bearer with the operator token), also reached by the CLI." },
];

const SECURITY: Record<Auth, Json[] | undefined> = {
  none: [],
  apiKey: [{ apiKey: [] }],
  optionalApiKey: [{}, { apiKey: [] }],
  session: [{ session: [] }],
  operator: [{ operatorToken: [] }],
  stripeSignature: [{ stripeSignature: [] }],
};

const AUTH_ERRORS: Record<Auth, ErrorCode[]> = {
  none: [],
  apiKey: ["unauthorized", "api_key_retired", "rate_limit_exceeded"],
  optionalApiKey: ["unauthorized", "api_key_retired", "rate_limit_exceeded"],
  session: ["unauthorized"],
  operator: ["unauthorized", "rate_limit_exceeded"],
  stripeSignature: ["service_unavailable"],
};

const ERROR_MESSAGES: Record<ErrorCode, string> = {
  invalid_request: "Invalid 'amount_cents': must be a positive integer number of cents",
  invalid_signature: "The Stripe-Signature header does not verify.",
  unauthorized: "Missing or invalid API key. Send 'Authorization: Bearer <API_KEY>'.",
  forbidden: "You are not a member of the workspace that owns program 1.",
  not_found: "No sale with transaction_id 'order-1001' in this program.",
  method_not_allowed: "OPTIONS is answered only as a CORS preflight of a browser endpoint.",
  conflict: "The request conflicts with the current state.",
  already_recorded: "A sale with transaction_id 'order-1001' is already recorded for this program.",
  payload_too_large: "The request body is too large.",
  unsupported_media_type: "Send the body as UTF-8 JSON.",
  internal_error: "An internal error occurred. Retry later; if it persists, contact support.",
  service_unavailable: "The service handling this request is not available. Retry later.",
  api_key_retired: "This API key has been retired. Create a new key for the program and use it instead.",
  rate_limit_exceeded: "Too many requests for this API key. Retry after 30 s.",
};

/** What each error means to the caller, in the error responses' descriptions. */
const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: "the input is invalid; the message names the field and the rule",
  invalid_signature: "the Stripe-Signature header does not verify against the body",
  unauthorized: "the credentials are missing or invalid",
  forbidden: "the credentials do not reach this (another program or workspace, a role without the permission, or an origin the program does not allow)",
  not_found: "a record named in the request does not exist",
  method_not_allowed: "the path does not take this method",
  conflict: "the request conflicts with the current state; the message says how",
  already_recorded: "a sale with this transaction id is already recorded for the program; nothing changed",
  payload_too_large: "the body is over the size limit",
  unsupported_media_type: "the body is not UTF-8 JSON (send Content-Type: application/json)",
  internal_error: "an unexpected error; retry later",
  service_unavailable: "a service or its database is briefly unavailable; nothing changed, retry after the seconds in Retry-After",
  api_key_retired: "the API key was retired; use another key of the program",
  rate_limit_exceeded: "too many requests; retry after the seconds in Retry-After",
};

/** "Error: forbidden or not_found. forbidden: ...; not_found: ...". */
function errorResponseDescription(codes: ErrorCode[]): string {
  return `Error: ${codes.join(" or ")}. ${codes.map((c) => `${c}: ${ERROR_DESCRIPTIONS[c]}.`).join(" ")}`;
}

function errorExample(code: ErrorCode): Json {
  const spec = ERROR_CODES[code];
  const message = ERROR_MESSAGES[code];
  return spec.envelope === "typed" ? { error: { type: (spec as { type: string }).type, code, message } } : { success: false, error: { code, message } };
}

/** zod -> JSON Schema (2020-12, which OpenAPI 3.1 uses), for what a client sends. */
export function jsonSchemaOf(schema: z.ZodType): Json {
  const out = z.toJSONSchema(schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Json;
  delete out.$schema;
  return out;
}

/** `/api/tracking/status/:programId` -> `/api/tracking/status/{programId}`. */
export const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
export const pathParams = (p: string) => [...p.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

function operationId(method: string, p: string): string {
  const words = p
    .replace(/^\/api\/?/, "")
    .split(/[/.-]/)
    .filter(Boolean)
    .map((w) => (w.startsWith(":") ? `By ${w.slice(1)}` : w));
  const camel = words
    .join(" ")
    .split(" ")
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1)))
    .join("");
  return `${method.toLowerCase()}${camel[0]?.toUpperCase() ?? ""}${camel.slice(1)}`;
}

function buildOperation(key: string, op: OperationSpec): Json {
  const [method, p] = key.split(" ");
  const inPath = pathParams(p);
  const parameters: Json[] = [{ $ref: "#/components/parameters/RequestId" }];
  let requestBody: Json | undefined;
  const example = op.example ?? {};
  const errors = new Set<ErrorCode>([...AUTH_ERRORS[op.auth], ...(op.errors ?? [])]);

  if (op.input !== "none" && "raw" in op.input) {
    requestBody = { required: true, description: op.input.description, content: { [op.input.raw]: { schema: { type: "object" } } } };
    errors.add("payload_too_large");
  } else if (op.input !== "none") {
    const schema = jsonSchemaOf(op.input);
    const props = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required ?? []) as string[]);
    // A parameter's description and example are the parameter's (where viewers show them), taken from its schema.
    const parameter = (name: string, where: "path" | "query", isRequired: boolean): Json => {
      const { description, example: schemaExample, ...paramSchema } = props[name] ?? { type: "string" };
      const value = name in example ? example[name] : schemaExample;
      return { name, in: where, required: isRequired, ...(description ? { description } : {}), schema: paramSchema, ...(value !== undefined ? { example: value } : {}) };
    };
    for (const name of inPath) parameters.push(parameter(name, "path", true));
    const rest = Object.keys(props).filter((k) => !inPath.includes(k));
    if (method === "GET") {
      for (const name of rest) parameters.push(parameter(name, "query", required.has(name)));
    } else if (rest.length > 0) {
      const bodySchema: Json = { ...schema, properties: Object.fromEntries(rest.map((k) => [k, props[k]])), required: [...required].filter((k) => rest.includes(k)) };
      if ((bodySchema.required as string[]).length === 0) delete bodySchema.required;
      const bodyExample = Object.fromEntries(Object.entries(example).filter(([k]) => !inPath.includes(k)));
      requestBody = {
        required: (bodySchema.required as string[] | undefined)?.length ? true : false,
        content: { "application/json": { schema: bodySchema, ...(Object.keys(bodyExample).length ? { example: bodyExample } : {}) } },
      };
      errors.add("payload_too_large");
      errors.add("unsupported_media_type");
    }
    errors.add("invalid_request");
  }
  if (op.action && op.busErrors !== false) {
    errors.add("internal_error");
    errors.add("service_unavailable");
  }

  const status = String(op.response.status ?? 200);
  const contentType = op.response.contentType ?? "application/json";
  const responses: Json = {
    [status]: {
      description: op.response.description,
      headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" } },
      content: { [contentType]: { schema: contentType === "application/json" ? { type: ["object", "array"] } : { type: "string" }, ...(op.response.example !== undefined ? { example: op.response.example } : {}) } },
    },
  };
  for (const [other, r] of Object.entries(op.otherResponses ?? {})) {
    responses[other] = {
      description: r.description,
      headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" } },
      content: { "application/json": { schema: { type: "object" }, example: r.example } },
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errors) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  for (const [httpStatus, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const typed = codes.some((c) => ERROR_CODES[c].envelope === "typed");
    const platform = codes.some((c) => ERROR_CODES[c].envelope === "platform");
    const schema =
      typed && platform
        ? { oneOf: [{ $ref: "#/components/schemas/Error" }, { $ref: "#/components/schemas/TypedError" }] }
        : { $ref: typed ? "#/components/schemas/TypedError" : "#/components/schemas/Error" };
    responses[String(httpStatus)] = {
      description: errorResponseDescription(codes),
      headers: {
        "X-Request-Id": { $ref: "#/components/headers/RequestId" },
        ...(codes.includes("rate_limit_exceeded") || codes.includes("service_unavailable")
          ? { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } } }
          : {}),
      },
      content: { "application/json": { schema, examples: Object.fromEntries(codes.map((c) => [c, { value: errorExample(c) }])) } },
    };
  }

  return {
    operationId: operationId(method, p),
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.auth === "none" ? { security: [] } : { security: SECURITY[op.auth] }),
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

function packageVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")).version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The whole document. */
export function buildOpenApiDocument(operations: Record<string, OperationSpec> = OPERATIONS): Json {
  const paths: Record<string, Json> = {};
  for (const [key, op] of Object.entries(operations)) {
    const [method, p] = key.split(" ");
    const openApiPath = toOpenApiPath(p);
    paths[openApiPath] = { ...paths[openApiPath], [method.toLowerCase()]: buildOperation(key, op) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Affiliate tracking API",
      version: packageVersion(),
      description:
        "Clicks, leads, sales and refunds with their commissions. Amounts are integer minor units (cents). Every error has a stable code in the envelope {\"success\": false, \"error\": {\"code\": ..., \"message\": ...}}, except a retired API key and rate limiting, which answer {\"error\": {\"type\": ..., \"code\": ..., \"message\": ...}}. Send an X-Request-Id header to choose the request id (echoed back and written in every log line of the request).",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/" }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "A program's API key (it starts with svc_sk_), from your server only." },
        operatorToken: { type: "http", scheme: "bearer", description: "The operator token: the ADMIN_TOKEN setting, or the token the server generated at its first start (it says where it wrote it)." },
        session: { type: "apiKey", in: "cookie", name: "svc_session", description: "The dashboard session, set by signing in." },
        stripeSignature: { type: "apiKey", in: "header", name: "Stripe-Signature", description: "Stripe's signature of the raw body, made with the webhook signing secret (the PROCESSOR_WEBHOOK_SECRET setting)." },
      },
      parameters: {
        RequestId: {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description: "Your id for this request (letters, digits and . _ : @ / + = -, at most 128 characters); a UUID is generated otherwise.",
          schema: { type: "string", maxLength: 128 },
        },
      },
      headers: {
        RequestId: { description: "The request id (yours, or the generated one).", schema: { type: "string" } },
      },
      schemas: {
        Error: {
          type: "object",
          description: "The error envelope of every error but a retired API key and rate limiting.",
          required: ["success", "error"],
          properties: {
            success: { const: false, description: "Always false." },
            error: {
              type: "object",
              description: "What went wrong.",
              required: ["code", "message"],
              properties: {
                code: {
                  type: "string",
                  description: "A stable code to act on.",
                  enum: Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c as ErrorCode].envelope === "platform"),
                },
                message: { type: "string", description: "A sentence for people; it may change." },
              },
            },
          },
        },
        TypedError: {
          type: "object",
          description: "The error envelope of a retired API key and of rate limiting.",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              description: "What went wrong.",
              required: ["type", "code", "message"],
              properties: {
                type: { type: "string", description: "The kind of error.", enum: ["authentication_error", "rate_limit_error"] },
                code: {
                  type: "string",
                  description: "A stable code to act on.",
                  enum: Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c as ErrorCode].envelope === "typed"),
                },
                message: { type: "string", description: "A sentence for people; it may change." },
              },
            },
          },
        },
      },
    },
  };
}

let cached: string | null = null;

/** The document as JSON text, built once per process. */
export function openApiJson(): string {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return cached;
}

/** The gateway's route aliases as "METHOD /full/path" (Moleculer's `:param` syntax), from its settings at runtime. */
export function routeAliasKeys(routes: Array<{ path?: string; aliases?: Record<string, unknown> }>): string[] {
  const keys: string[] = [];
  for (const route of routes) {
    for (const alias of Object.keys(route.aliases ?? {})) {
      const [method, aliasPath = ""] = alias.trim().split(/\s+/);
      const full = `/${route.path ?? ""}/${aliasPath}`.replace(/\/+/g, "/").replace(/(.)\/$/, "$1");
      keys.push(`${method.toUpperCase()} ${full}`);
    }
  }
  return keys;
}
