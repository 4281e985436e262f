/** The gateway service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions, type HttpEndpoint } from "../../shared/endpoint";
import { PROCESSOR_WEBHOOK_PATH } from "../../shared/processor-webhook-events";
import { ACCOUNTS } from "../accounts/endpoints";
import { PaddleWebhookParams, ProgramWebhookParams } from "./path-params";

export const GATEWAY = declareActions("gateway", {
  health: {
    http: {
      method: "GET",
      path: "/api/health",
      route: "health",
      tag: "Health",
      summary: "Readiness",
      description:
        "200 only when every storage service reaches its database and the message bus is connected; 503 otherwise (also while the server shuts down), with the state of each. Use it as the readiness probe.",
      busErrors: false,
      response: {
        description: "Ready.",
        example: {
          status: "ok",
          transporter: "connected",
          services: { programs: "ok", attribution: "ok", sales: "ok", commissions: "ok", notifications: "ok", accounts: "ok", processor: "ok" },
        },
      },
      otherResponses: {
        "503": {
          description: "Not ready: a storage service or the message bus is down (unavailable), or the server is shutting down (stopping).",
          example: {
            status: "unavailable",
            transporter: "connected",
            services: { programs: "ok", attribution: "ok", sales: "ok", commissions: "unavailable", notifications: "ok", accounts: "ok", processor: "ok" },
          },
        },
      },
    },
  },
  live: {
    http: {
      method: "GET",
      path: "/api/health/live",
      route: "health",
      tag: "Health",
      summary: "Liveness",
      description: "200 while the server process responds; checks no dependency. Use it as the liveness probe.",
      busErrors: false,
      response: { description: "Alive.", example: { status: "ok", nodeID: "gateway-1", uptimeSeconds: 3600 } },
    },
  },
  // The same action on two paths: the platform's (Connect) endpoint and each program's own (docs/processor-webhooks.md).
  processorWebhook: {
    http: [
      {
        method: "POST",
        path: PROCESSOR_WEBHOOK_PATH,
        route: "processor-webhooks",
        rawBody: { contentType: "application/json", description: "The Stripe event, byte for byte as Stripe sent it." },
        tag: "Processor",
        summary: "Processor (Stripe Connect) webhook of the platform",
        description:
          "For a Connect platform: the endpoint listening to events on connected accounts, verified with the service's own signing secret. Each event names its connected account, whose program is the one the account is linked to; an event that names none, or an account linked to no program, is recorded as ignored. The signature in the Stripe-Signature header is verified over the exact body. Completed checkout sessions, paid invoices and payment links record sales; refunds and disputes reduce commissions; account updates keep the program's connection current. 2xx for every event that was taken or that can never succeed (the reason is recorded on the event and listed by the operator's processor events endpoint); 503 only for a temporary problem (a refund whose sale is not linked yet, a database outage, no signing secret configured), so the processor retries.",
        errors: ["invalid_signature", "invalid_request", "conflict", "payload_too_large", "service_unavailable"],
        response: {
          description: "Received (also for events that are not used, ignored or rejected, with the reason).",
          example: { received: true, handled: true, transactionId: "cs_1", settled: { targetRefundedCents: 3000 } },
        },
      },
      {
        method: "POST",
        path: `${PROCESSOR_WEBHOOK_PATH}/programs/:programId`,
        route: "processor-webhooks",
        rawBody: { contentType: "application/json", description: "The Stripe event, byte for byte as Stripe sent it.", params: ProgramWebhookParams },
        tag: "Processor",
        summary: "Processor (Stripe) webhook of one program",
        description:
          "For a merchant's own Stripe account: the webhook endpoint of the program in the path, verified with the signing secret entered for the program in the dashboard's Stripe settings, and with no other. Its events are the program's: an event that names no account is processed for this program; an event that names an account other than the one linked to the program is refused (processor_account_mismatch) and nothing is recorded. Without a signing secret of the program every call is refused (webhook_secret_missing). Otherwise as the platform's endpoint: the same events, the same answers, and an event id is processed once whichever endpoint receives it.",
        example: { programId: 1 },
        errors: ["invalid_signature", "webhook_secret_missing", "processor_account_mismatch", "invalid_request", "conflict", "payload_too_large", "service_unavailable"],
        response: {
          description: "Received (also for events that are not used, ignored or rejected, with the reason).",
          example: { received: true, handled: true, transactionId: "cs_1", attributionMethod: "click" },
        },
      },
    ],
  },
  paddleWebhook: {
    http: {
      method: "POST",
      path: "/api/v1/webhooks/paddle/programs/:programId",
      route: "processor-webhooks",
      rawBody: { contentType: "application/json", description: "The Paddle notification, byte for byte as Paddle sent it.", params: PaddleWebhookParams },
      tag: "Processor",
      summary: "Paddle Billing notifications of one program",
      description:
        "The notification destination of a program's Paddle account, verified with the destination's secret key entered in Settings → Paddle: the Paddle-Signature header (ts and h1) over the exact body, within the tolerance window. transaction.completed records a sale (a first payment or a renewal) net of tax; adjustment.created and adjustment.updated reverse its commission for approved refunds and chargebacks, and restore it for a chargeback's reversal, exactly as Stripe's refunds and disputes. A notification is processed once (by its event_id). 2xx for every notification taken or that can never succeed (the reason is recorded); 503 only for a temporary problem (an adjustment whose sale has not arrived yet, Paddle's API unreachable, a database outage), so Paddle retries.",
      example: { programId: 1 },
      errors: ["invalid_signature", "webhook_secret_missing", "invalid_request", "conflict", "payload_too_large", "service_unavailable"],
      response: {
        description: "Received (also for notifications that are not used, ignored or rejected, with the reason).",
        example: { received: true, handled: true, transactionId: "txn_01hv8wptq8987qeep44cyrewp9", attributionMethod: "click" },
      },
    },
  },
  login: {
    // The same schema accounts.login validates with: the gateway refuses a bad body before any call.
    input: ACCOUNTS.actions.login.input,
    http: {
      method: "POST",
      path: "/api/auth/login",
      route: "auth",
      auth: "none",
      tag: "Dashboard",
      summary: "Sign in",
      description:
        "Sets the svc_session cookie (HttpOnly, SameSite=Lax, Secure over HTTPS). Failed sign-ins are throttled per email and client address, per email and per client address, with growing delays (a 429 names which limit was reached).",
      example: { email: "owner@example.com", password: "correct horse battery staple" },
      errors: ["unauthorized", "rate_limit_exceeded"],
      response: { description: "Signed in; the session is in the Set-Cookie header.", example: { success: true, user: { id: 5, email: "owner@example.com", name: "Owner" } } },
    },
  },
  logout: {
    http: {
      method: "POST",
      path: "/api/auth/logout",
      route: "auth",
      auth: "none",
      tag: "Dashboard",
      summary: "Sign out",
      description: "Ends the session of the svc_session cookie, if any, and clears the cookie. Always succeeds.",
      response: { description: "Signed out; the cookie is cleared.", example: { success: true } },
    },
  },
  partnerSignIn: {
    // The same schema accounts.signInPartner validates with.
    input: ACCOUNTS.actions.signInPartner.input,
    http: {
      method: "POST",
      path: "/api/partner/auth/sign-in",
      route: "partner",
      auth: "none",
      tag: "Partner portal",
      summary: "Sign in with a one-time link",
      description:
        "Takes the token of a sign-in link (the page the link opens sends it) and sets the svc_partner_session cookie (HttpOnly, SameSite=Lax, Secure over HTTPS; same lifetime as a dashboard session). A link works once, within its lifetime, for a partner who still has an approved enrollment; otherwise 401, the same for every reason.",
      example: { token: "q3T0...43 characters" },
      errors: ["unauthorized"],
      response: { description: "Signed in; the session is in the Set-Cookie header.", example: { success: true, partnerId: 3 } },
    },
  },
  partnerSignOut: {
    http: {
      method: "POST",
      path: "/api/partner/auth/sign-out",
      route: "partner",
      auth: "none",
      tag: "Partner portal",
      summary: "Sign out of the partner portal",
      description: "Ends the session of the svc_partner_session cookie, if any, and clears the cookie. Always succeeds.",
      response: { description: "Signed out; the cookie is cleared.", example: { success: true } },
    },
  },
});

/** The console's screens, each a route of the one console page: [path, summary, what the screen is for]. */
const CONSOLE_SCREENS: Array<[path: string, summary: string, description: string]> = [
  ["/dashboard", "Console: Overview", "Figures and charts over time, partners with their totals, approvals, balances and withdrawals, the integration checklist and the inbox."],
  ["/dashboard/partners", "Console: Partners", "The program's partners with their totals, searchable by name, email or referral code, filtered by status; CSV download."],
  [
    "/dashboard/partner",
    "Console: a partner (?partner=<id>)",
    "One partner: totals over time, referral code, group, commissions with their refunds, balance, payouts, private notes; change group or status.",
  ],
  ["/dashboard/sales", "Console: Sales", "The program's sales with filters, pages and the CSV of the filtered rows."],
  ["/dashboard/commissions", "Console: Commissions", "The program's commissions with their refunds, filters, pages and CSV."],
  [
    "/dashboard/payouts",
    "Console: Payouts",
    "Payout runs: preview, confirm and pay, each run (?run=ID) with its PayPal and bank files, failures and skipped partners, mark payouts paid or failed; the payout schedule; every payout with filters, pages and CSV.",
  ],
  [
    "/dashboard/risk",
    "Console: Risk",
    "The conversions the program's fraud rules held, grouped per partner with the rules fired and their evidence (never a raw address): clear one (its commission proceeds), reject one (voided; the partner is told why in plain words), ban the partner; cleared and rejected ones by the state filter.",
  ],
  [
    "/dashboard/risk/rules",
    "Console: fraud rules",
    "Each fraud rule of the program on or off, with its settings (banned domains, seconds, per-day limit, refund rate), saved with one button.",
  ],
  ["/dashboard/rewards", "Console: Rewards", "Partner groups with their rewards and partners; create and edit rewards with a live preview."],
  [
    "/dashboard/emails",
    "Console: Emails",
    "The program's partner email settings (reply-to, commission emails, monthly summary) and the log of every email to its partners, with Send again for a failed one.",
  ],
  ["/dashboard/settings", "Console: Settings", "The program's settings: name, cookie window, hold days, landing URL, allowed origins."],
  ["/dashboard/settings/api-keys", "Console: API keys", "Create (the secret shown once), list with last use, retire."],
  ["/dashboard/settings/webhooks", "Console: webhook endpoints", "Add with event types, rotate the signing secret, send a test event, the delivery log with retry."],
  ["/dashboard/settings/stripe", "Console: Stripe", "How to connect step by step, the connection state, the last event and its result."],
  ["/dashboard/settings/paypal", "Console: PayPal payouts", "The program's PayPal API credentials: their state, enter them (checked with PayPal), remove them."],
  ["/dashboard/settings/team", "Console: team", "Members and roles, invitations."],
  ["/dashboard/invitation", "Console: accept an invitation", "The page an invitation email links to (the token is in the URL fragment): accept, with a new account or an existing one."],
];

/** Routes the gateway answers itself (pages and files, no action); their handlers are in routes.ts. */
export const GATEWAY_PAGES = {
  openApiJson: {
    method: "GET",
    path: "/api/openapi.json",
    route: "reference",
    tag: "Reference",
    summary: "This document",
    description: "The OpenAPI 3.1 description of this API, generated from the same schemas that validate requests. Cached for five minutes; CORS open.",
    response: { description: "The OpenAPI 3.1 document.", contentType: "application/json" },
  },
  docs: {
    method: "GET",
    path: "/api/docs",
    route: "reference",
    tag: "Reference",
    summary: "API reference page",
    description: "An HTML page rendering this document with an interactive viewer. Everything it loads comes from this server (no other host is contacted).",
    response: { description: "The reference page.", contentType: "text/html" },
  },
  docsScript: {
    method: "GET",
    path: "/api/docs/scalar.js",
    route: "reference",
    tag: "Reference",
    summary: "API reference viewer script",
    description:
      "The viewer the reference page runs (Scalar API Reference), served from this server so the page needs no other host. Cached for a year: the page names the viewer's version in the query.",
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },
  // One page answers every console screen: the console routes in the browser (web/src/console).
  dashboard: CONSOLE_SCREENS.map(([path, summary, description]) => ({
    method: "GET" as const,
    path,
    route: "dashboard" as const,
    tag: "Dashboard",
    summary,
    description: `${description} The console page (web/src/console): it asks for a sign-in, then reads the API.`,
    response: { description: "The page; it shows a sign-in form when there is no session.", contentType: "text/html" },
  })),
  consoleScript: {
    method: "GET",
    path: "/assets/console.js",
    route: "assets",
    tag: "Dashboard",
    summary: "Script of the merchant console",
    description: "The console's script, served from this server: the page runs no inline script.",
    busErrors: false,
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },
  appStyles: {
    method: "GET",
    path: "/assets/app.css",
    route: "assets",
    tag: "Dashboard",
    summary: "Styles of the dashboard pages",
    description: "The stylesheet shared by the merchant console and the partner portal.",
    busErrors: false,
    response: { description: "CSS.", contentType: "text/css" },
  },
  siteIcon: {
    method: "GET",
    path: "/favicon.ico",
    route: "icon",
    tag: "Dashboard",
    summary: "The site icon",
    description: "The icon of the console, the portal and the application page (SVG), which browsers also ask for on their own.",
    busErrors: false,
    response: { description: "SVG.", contentType: "image/svg+xml" },
  },
  chartStyles: {
    method: "GET",
    path: "/assets/uplot.min.css",
    route: "assets",
    tag: "Dashboard",
    summary: "Chart styles of the dashboard pages",
    description: "uPlot's stylesheet, served from this server.",
    busErrors: false,
    response: { description: "CSS.", contentType: "text/css" },
  },
  portal: {
    method: "GET",
    path: "/portal",
    route: "portal",
    tag: "Partner portal",
    summary: "The partner portal page",
    description:
      "Partners sign in here (a sign-in link by email) and see, per program, their referral link, clicks, referred customers (masked), commissions with refunds, balance, withdrawals and notices.",
    busErrors: false,
    response: { description: "The page; it shows the sign-in form when there is no partner session.", contentType: "text/html" },
  },
  portalSignIn: {
    method: "GET",
    path: "/portal/sign-in",
    route: "portal",
    tag: "Partner portal",
    summary: "Where a sign-in link lands",
    description:
      "The page a sign-in link opens: its script sends the link's token (kept in the URL fragment, which browsers never send to servers) to the sign-in endpoint, then opens the portal.",
    busErrors: false,
    response: { description: "The page.", contentType: "text/html" },
  },
  portalUnsubscribe: {
    method: "GET",
    path: "/portal/unsubscribe",
    route: "portal",
    tag: "Partner portal",
    summary: "Where an email's unsubscribe link lands",
    description:
      "The page the unsubscribe link of a partner email opens (?token=...), no sign-in: it shows what the link stops (GET /api/public/unsubscribe/:token) and unsubscribes only when its button is pressed (opening it changes nothing); Subscribe again undoes it.",
    busErrors: false,
    response: { description: "The page.", contentType: "text/html" },
  },
  applyPage: {
    method: "GET",
    path: "/portal/apply",
    route: "portal",
    tag: "Partner portal",
    summary: "The public application page",
    description:
      "Anyone may apply to the program named by ?program=ID here, without signing in: the page shows the program's name, description, questions and terms (GET /api/public/programs/:programId/application) and sends the form to POST /api/public/programs/:programId/applications. A closed program's page says so and shows no form.",
    busErrors: false,
    response: { description: "The page.", contentType: "text/html" },
  },
  portalScript: {
    method: "GET",
    path: "/assets/portal.js",
    route: "assets",
    tag: "Partner portal",
    summary: "Script of the partner portal page",
    description: "The partner portal's script, served from this server (the page's Content-Security-Policy allows scripts from this origin only).",
    busErrors: false,
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },
  embedReferrals: {
    method: "GET",
    path: "/embed/programs/:programId/referrals",
    route: "embed",
    tag: "Partner portal",
    summary: "The embedded referrals page",
    description:
      "The page a merchant puts in an iframe of its own app (the embedUrl of POST /api/v1/embed-tokens): with the embed token in its address (#token=... or ?token=...) it opens an embedded session and shows the signed-in user's referral link with a copy button and a QR code, their clicks, signups, sales, earnings, payouts and rewards. Only the program's allowed origins may frame it (Content-Security-Policy frame-ancestors; none when the program names none). 400 for a malformed program id, 404 for an unknown program.",
    example: { programId: 1 },
    errors: ["invalid_request", "not_found"],
    response: { description: "The page.", contentType: "text/html" },
  },
  embedScript: {
    method: "GET",
    path: "/assets/embed.js",
    route: "assets",
    tag: "Partner portal",
    summary: "Script of the embedded referrals page",
    description: "The embedded referrals page's script, served from this server (the page's Content-Security-Policy allows scripts from this origin only).",
    busErrors: false,
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },
  applyScript: {
    method: "GET",
    path: "/assets/apply.js",
    route: "assets",
    tag: "Partner portal",
    summary: "Script of the application page",
    description: "The public application page's script, served from this server (the page's Content-Security-Policy allows scripts from this origin only).",
    busErrors: false,
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },
  browserSnippet: {
    method: "GET",
    path: "/sdk/svc.js",
    route: "sdk",
    tag: "Tracking",
    summary: "The browser snippet",
    description:
      "Include it on your pages with a data-program-id attribute: on a referral link it tracks the click and stores the click id in the svc_click_id cookie, and svc.signup(userId) tracks the lead.",
    response: { description: "JavaScript.", contentType: "text/javascript" },
  },
} satisfies Record<string, HttpEndpoint | HttpEndpoint[]>;
