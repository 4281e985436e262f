import { DEFAULT_FRAUD_SETTINGS } from "../../shared/domain/fraud-rules";
/** The programs service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { csvExample, exportDescription } from "../../shared/csv-export";
import { declareActions, programRoutes, programApiRoute } from "../../shared/endpoint";
import { PARTNERS_CSV } from "./export";
import * as S from "./schemas";

const programExample = {
  id: 1,
  workspaceId: 1,
  name: "Acme",
  currency: "usd",
  commissionRule: { type: "percentage", basisPoints: 2000 },
  holdDays: 30,
  paymentTrackingMode: "s2s",
  testMode: false,
  allowedOrigins: ["https://shop.example"],
  cookieWindowDays: 90,
  defaultLandingUrl: null,
  applications: { open: false, autoApprove: false, autoApproveGroupId: null, description: "", questions: [], terms: "" },
};

/** What the breakdowns answer (the dashboard's, operators' and the merchant API's routes alike). */
export const BREAKDOWNS_DESCRIPTION =
  "Clicks (bots' and hosting networks' left out), referred signups (leads) and referred sales with their revenue over the range, by the country, device type (desktop, mobile, tablet, other), browser and referrer domain of the click that brought them. Per family and dimension: the 10 values with the most (sales: the most revenue), and other: the rest summed (null when there is none). A value the click did not tell is unknown (direct for a referrer domain: no referrer); a signup or sale attributed without a click (coupon code, email, customer key) counts as unknown and direct too. Money in minor units of the program's currency. Range: from and to, inclusive UTC days, at most 366; default the last 30 days. With partnerId, that partner's figures only (404 when not enrolled).";

const breakdownsExample = {
  programId: 1,
  currency: "usd",
  currencyExponent: 2,
  from: "2026-01-01",
  to: "2026-01-30",
  test: false,
  partnerId: null,
  clicks: {
    country: {
      values: [
        { value: "DE", clicks: 120 },
        { value: "unknown", clicks: 4 },
      ],
      other: null,
    },
    device: {
      values: [
        { value: "mobile", clicks: 80 },
        { value: "desktop", clicks: 44 },
      ],
      other: null,
    },
    browser: {
      values: [
        { value: "Chrome", clicks: 70 },
        { value: "Mobile Safari", clicks: 54 },
      ],
      other: null,
    },
    referrer: {
      values: [
        { value: "blog.example", clicks: 100 },
        { value: "direct", clicks: 24 },
      ],
      other: { clicks: 3 },
    },
  },
  leads: {
    country: { values: [{ value: "DE", leads: 12 }], other: null },
    device: { values: [{ value: "mobile", leads: 12 }], other: null },
    browser: { values: [{ value: "Chrome", leads: 12 }], other: null },
    referrer: { values: [{ value: "blog.example", leads: 12 }], other: null },
  },
  sales: {
    country: { values: [{ value: "DE", sales: 3, amountCents: 30000 }], other: null },
    device: { values: [{ value: "mobile", sales: 3, amountCents: 30000 }], other: null },
    browser: { values: [{ value: "Chrome", sales: 3, amountCents: 30000 }], other: null },
    referrer: { values: [{ value: "blog.example", sales: 3, amountCents: 30000 }], other: null },
  },
};

const applicationSettingsExample = {
  open: true,
  autoApprove: false,
  autoApproveGroupId: null,
  description: "We pay 20% on every sale you refer, for 12 months.",
  questions: ["Where will you promote us?"],
  terms: "Paid monthly once your balance reaches $50.",
};

const applicationExample = {
  id: 7,
  programId: 1,
  partnerId: 3,
  name: "Jane Doe",
  email: "jane@example.com",
  website: "https://jane.example/",
  promotion: "A weekly newsletter on home baking, 4,000 readers.",
  answers: [{ question: "Where will you promote us?", answer: "In my newsletter and on Instagram." }],
  status: "pending",
  declineMessage: null,
  groupId: null,
  createdAt: "2026-01-05T09:30:00.000Z",
  decidedAt: null,
};

const settingsExample = {
  programId: 1,
  name: "Acme partners",
  currency: "usd",
  currencyFixed: true,
  cookieWindowDays: 90,
  holdDays: 30,
  defaultLandingUrl: "https://shop.example/pricing",
  brandColor: "#6d28d9",
  logoUrl: "https://shop.example/logo.svg",
  allowedOrigins: ["https://shop.example"],
  applications: applicationSettingsExample,
};

const activityExample = {
  id: 41,
  programId: 1,
  actorType: "api_key",
  actorId: 2,
  actorLabel: "Production server",
  kind: "commissions",
  operation: "commissions.voidCommission",
  summary: "Void a commission",
  method: "POST",
  path: "/api/v1/commissions/12/void",
  location: null,
  status: 200,
  clientAddress: "203.0.113.7",
  userAgent: "billing-sync/2.1",
  requestId: "3f1c8a52-6d0e-4f7e-9b1a-2c4d5e6f7a8b",
  createdAt: "2026-03-01T12:00:00.000Z",
};

const apiKeyExample = {
  id: 2,
  programId: 1,
  name: "Production server",
  prefix: "svc_sk_0123456789abcdef",
  createdAt: "2026-01-01T00:00:00.000Z",
  lastUsedAt: "2026-01-02T09:30:00.000Z",
  retiredAt: null,
};

const SETTINGS_TEXT =
  "Name, currency (fixed once the program has a sale or a commission), how many days the browser snippet keeps a referral click (cookieWindowDays), the hold days of the default partner group (the partners not moved to another group), where referral links lead (defaultLandingUrl; null: the first allowed origin), your brand colour and logo on the embedded referrals page (brandColor, logoUrl), the origins whose pages may use the browser snippet (empty: any) and the public application form (applications: whether it is open, whether applications are approved at once and into which live partner group, the description, up to 5 questions and the terms to accept).";

const figuresExample = { clicks: 12, leads: 4, sales: 2, revenueCents: 20000, commissions: 2, pendingCents: 2000, creditedCents: 1400, paidCents: 0, reversedCents: 600 };

const overviewExample = {
  programId: 1,
  workspaceId: 1,
  currency: "usd",
  currencyExponent: 2,
  from: "2026-01-01",
  to: "2026-01-30",
  test: false,
  partnerId: null,
  days: [{ date: "2026-01-01", ...figuresExample }],
  totals: figuresExample,
  partners: [{ partnerId: 3, name: "Jane", status: "approved", referralCode: "jane", ...figuresExample, balanceCents: 1400 }],
  partnersWithRevenue: 1,
  partnersWithClicks: 1,
};

const partnerRowExample = {
  partnerId: 3,
  name: "Jane",
  email: "jane@example.com",
  status: "approved",
  referralCode: "jane",
  enrolledAt: "2026-01-01T00:00:00.000Z",
  totals: { ...figuresExample, balanceCents: 1400 },
};

const partnerDetailExample = {
  ...partnerRowExample,
  heldForReviewCents: 0,
  notes: "Met at the March webinar; prefers monthly payouts.",
  tenantId: "user_8731",
  metadata: { plan: "pro" },
  application: { ...applicationExample, status: "approved", decidedAt: "2026-01-06T10:00:00.000Z" },
  country: "DE",
  payoutMethod: "bank",
};

const decisionExample = { partnerId: 3, programId: 1, status: "approved", referralCode: "jane", changed: true };

const FRAUD_SETTINGS_TEXT =
  "When a lead or sale earns a commission, the rules that are on read what is known of it (the customer's email, the click's referrer, ad parameters and network address, seen only as a hash of the day, the partner's payout details and recent refunds); a conversion a rule flags has its commission held for review, not credited until the review clears it. A new program has every rule off.";

export const PROGRAMS = declareActions("programs", {
  create: {
    input: S.CreateProgramInput,
    http: {
      method: "POST",
      path: "/api/admin/programs",
      route: "admin",
      tag: "Operator",
      summary: "Create a program",
      description: "A program has a currency, a commission rule, a hold period and a way sales arrive (the processor's webhooks or your server). Create an API key and partners for it next.",
      example: { workspaceId: 1, name: "Acme", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30, paymentTrackingMode: "s2s" },
      errors: ["not_found"],
      response: { description: "The program.", example: programExample },
    },
  },
  get: {
    input: S.ProgramIdInput,
    http: {
      method: "GET",
      path: "/api/admin/programs/:programId",
      route: "admin",
      tag: "Operator",
      summary: "A program",
      description: "The program's settings and its processor connection.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: { description: "The program.", example: programExample },
    },
  },
  list: {
    input: S.ListProgramsInput,
    http: {
      method: "GET",
      path: "/api/admin/programs",
      route: "admin",
      tag: "Operator",
      summary: "Programs",
      description: "Every program, or one workspace's, with their settings. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.",
      example: { workspaceId: 1, limit: 50 },
      response: { description: "A page of programs.", example: { data: [programExample], nextCursor: null } },
    },
  },
  listForWorkspace: {
    input: S.ListWorkspaceProgramsInput,
    http: {
      method: "GET",
      path: "/api/workspaces/:workspaceId/programs",
      route: "workspace-notifications",
      tag: "Dashboard",
      summary: "The workspace's programs",
      description:
        "The programs of the workspace, with their settings. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page. For members of the workspace whose role grants programs:read.",
      example: { workspaceId: 1 },
      response: { description: "A page of programs.", example: { data: [programExample], nextCursor: null } },
    },
  },
  fraudSettings: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/fraud-settings",
      scope: "fraud:read",
      tag: "Risk",
      summary: "The program's fraud rules",
      description: FRAUD_SETTINGS_TEXT,
      example: { programId: 1 },
      response: { description: "Every rule with its switch and settings.", example: { settings: DEFAULT_FRAUD_SETTINGS } },
    }),
  },
  updateFraudSettings: {
    input: S.UpdateFraudSettingsInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/fraud-settings",
      scope: "fraud:write",
      permission: "programs:write",
      tag: "Risk",
      summary: "Change the program's fraud rules",
      description: `Sets each rule given, whole (its switch and its settings); the rules left out keep theirs. ${FRAUD_SETTINGS_TEXT} Conversions already recorded keep their review or its absence. A bad field changes nothing (400 naming it).`,
      example: { programId: 1, paid_traffic: { enabled: true }, click_injection: { enabled: true, seconds: 30 } },
      response: {
        description: "Every rule after the change.",
        example: { settings: { ...DEFAULT_FRAUD_SETTINGS, paid_traffic: { enabled: true }, click_injection: { enabled: true, seconds: 30 } } },
      },
    }),
  },
  partnerFraudFacts: {
    input: S.EnrollmentInput,
  },
  settings: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/settings",
      tag: "Dashboard",
      summary: "The program's settings",
      description: `${SETTINGS_TEXT} currencyFixed says whether the currency can still change.`,
      example: { programId: 1 },
      response: { description: "The settings.", example: settingsExample },
    }),
  },
  updateSettings: {
    input: S.UpdateSettingsInput,
    http: programRoutes({
      method: "PATCH",
      path: "/:programId/settings",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Change the program's settings",
      description: `Sets the fields given and keeps the others (each field of applications too): ${SETTINGS_TEXT} A bad field changes nothing (400 naming it; also an autoApproveGroupId that is not a live group of the program); another currency once the program has a sale or a commission is 409 conflict. Hold days apply to commissions created from now on, as a change of the default group on the Rewards screen does.`,
      example: {
        programId: 1,
        name: "Acme partners",
        cookieWindowDays: 60,
        holdDays: 14,
        defaultLandingUrl: "https://shop.example/pricing",
        allowedOrigins: ["https://shop.example"],
        applications: { open: true, questions: ["Where will you promote us?"] },
      },
      errors: ["conflict"],
      response: { description: "The settings after the change.", example: settingsExample },
    }),
  },
  createApiKey: {
    input: S.CreateApiKeyInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/api-keys",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Create an API key",
      description:
        "The key authenticates your server's tracking calls for the program. The whole key (apiKey) is in this answer only: it is stored as a hash, and the list of keys shows its prefix. A name is required from the dashboard.",
      example: { programId: 1, name: "Production server" },
      response: {
        description: "The key with its secret.",
        example: { ...apiKeyExample, lastUsedAt: null, apiKey: "svc_sk_0123456789abcdef_VGhpcyBpcyBub3QgYSByZWFsIGtleSBzZWNyZXQ" },
      },
    }),
  },
  listApiKeys: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/api-keys",
      tag: "Dashboard",
      summary: "The program's API keys",
      description:
        "Every key of the program, newest first, retired ones included: its name, its prefix (the beginning of the key), when it was created, last used (to within a few minutes; null: never) and retired. Never the key itself.",
      example: { programId: 1 },
      response: { description: "The keys.", example: { programId: 1, data: [apiKeyExample] } },
    }),
  },
  recordActivity: {
    input: S.RecordActivityInput,
  },
  listActivity: {
    input: S.ListActivityInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/activity",
      permission: "programs:write",
      scope: "audit:read",
      tag: "Dashboard",
      summary: "The program's activity log",
      description:
        "Every change made to the program through this API (by a team member in the console, an API key, or the operator), newest first, one page at a time (pass nextCursor as cursor for the next, with the same filters), optionally of one actor or one kind (partners, commissions, payouts, rewards, coupons, webhooks, api_keys, settings). Each entry: who (actorType user, api_key or operator; actorId; actorLabel, the member's email or the key's name as they were then), what (kind, the operation's summary, method, path and the created resource's location), the answer's status, and from where (client address, user agent, request id). Tracking calls (clicks, leads, sales, refunds) and Stripe's webhooks are not entries: they are the program's data. Refused requests are not entries: they changed nothing.",
      example: { programId: 1, actor: "api_key:2", kind: "commissions", limit: 25 },
      errors: ["not_found"],
      response: { description: "A page of entries.", example: { data: [activityExample], nextCursor: null } },
    }),
  },
  retireApiKey: {
    input: S.RetireApiKeyInput,
    http: [
      {
        method: "POST",
        path: "/api/programs/:programId/api-keys/:keyId/retire",
        route: "program-dashboard",
        permission: "programs:write",
        tag: "Dashboard",
        summary: "Retire an API key",
        description:
          "From now on the key is refused with 401 api_key_retired. Retiring it again changes nothing. A key of another program is not found. For members of the program's workspace whose role grants programs:write.",
        example: { programId: 1, keyId: 2 },
        errors: ["forbidden", "not_found"],
        response: { description: "The retired key.", example: { id: 2, programId: 1, retiredAt: "2026-01-01T00:00:00.000Z" } },
      },
      {
        method: "POST",
        path: "/api/admin/api-keys/:keyId/retire",
        route: "admin",
        tag: "Operator",
        summary: "Retire an API key",
        description: "From now on the key is refused with 401 api_key_retired. Retiring it again changes nothing.",
        example: { keyId: 2 },
        errors: ["not_found"],
        response: { description: "The retired key.", example: { id: 2, programId: 1, retiredAt: "2026-01-01T00:00:00.000Z" } },
      },
    ],
  },
  recordKeyUse: {
    input: S.RecordKeyUseInput,
  },
  claimIdempotencyKey: {
    input: S.ClaimIdempotencyKeyInput,
  },
  completeIdempotencyKey: {
    input: S.CompleteIdempotencyKeyInput,
  },
  releaseIdempotencyKey: {
    input: S.ReleaseIdempotencyKeyInput,
  },
  createPartner: {
    input: S.CreatePartnerInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/partners",
      scope: "partners:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Create (enroll) a partner",
      description:
        "A new partner enrolled in the program: approved (their links are tracked at once) or pending, with a referral code unique in the program (generated when omitted; 409 when taken), optionally in a live group of the program (404 otherwise), with your own id of them (tenantId, unique in the program: 409 when taken; find them by it later) and your metadata. Enrolling a user of yours as a partner when they sign up is this call.",
      example: { programId: 1, name: "Jane", email: "jane@example.com", referralCode: "jane", tenantId: "user_8731", metadata: { plan: "pro" } },
      errors: ["not_found", "conflict"],
      response: {
        description: "The partner and its enrollment.",
        example: {
          partner: { id: 3, name: "Jane", email: "jane@example.com" },
          enrollment: { partnerId: 3, programId: 1, status: "approved", referralCode: "jane", tenantId: "user_8731", metadata: { plan: "pro" } },
        },
      },
    }),
  },
  updateProcessorConnection: {
    input: S.UpdateProcessorConnectionInput,
    http: {
      method: "PUT",
      path: "/api/admin/programs/:programId/processor",
      route: "admin",
      tag: "Operator",
      summary: "Set a program's processor connection",
      description:
        "Changes the fields given. The connection date (connectedAt, the status endpoint's connectionDate) is set by the first update that leaves the connection connected: to connectedAt when given, else now. Later updates keep it, also across a disconnect and reconnect of the same account; linking another accountId starts a new connection and a new date. The processor's account.updated events follow the same rule.",
      example: { programId: 1, connectionStatus: "connected", accountId: "acct_123", chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true },
      errors: ["not_found", "conflict"],
      response: { description: "The program.", example: programExample },
    },
  },
  findByProcessorAccount: {
    input: S.ProcessorAccountInput,
  },
  findReferral: {
    input: S.FindReferralInput,
  },
  enrolledPartnerIds: {
    input: S.EnrolledPartnerIdsInput,
  },
  /** What a payout run needs of each partner: enrollment status, name and payout details (bus only: the commissions service's runs). */
  payoutRecipients: {
    input: S.PayoutRecipientsInput,
  },
  getEnrollment: {
    input: S.EnrollmentInput,
  },
  creditRecipient: {
    input: S.EnrollmentInput,
  },
  getPartner: {
    input: S.PartnerIdInput,
  },
  hasApprovedPartners: {
    input: S.ProgramIdInput,
  },
  enrollPartner: {
    input: S.EnrollPartnerInput,
    http: {
      method: "POST",
      path: "/api/admin/programs/:programId/enrollments",
      route: "admin",
      tag: "Operator",
      summary: "Enroll an existing partner in a program",
      description:
        "The same partner (one partner portal sign-in) in one more program, with a referral code unique in that program (generated when omitted). 404 when the program or partner does not exist, 409 when the partner is already enrolled or the code is taken.",
      example: { programId: 2, partnerId: 3, referralCode: "jane-2" },
      errors: ["not_found", "conflict"],
      response: { description: "The enrollment.", example: { id: 4, partnerId: 3, programId: 2, status: "approved", referralCode: "jane-2" } },
    },
  },
  findPartnerForSignIn: {
    input: S.PartnerEmailInput,
  },
  getPartnerEnrollments: {
    input: S.PartnerIdInput,
  },
  /** The partner portal's profile and payout details (bus only: the portal's routes call them for the signed-in partner). */
  getPartnerProfile: {
    input: S.PartnerIdInput,
  },
  updatePartnerProfile: {
    input: S.UpdatePartnerProfileInput,
  },
  /** The partner's language for their emails (bus only: notifications, the sign-in mail). */
  getPartnerLocale: {
    input: S.PartnerIdInput,
  },
  overview: {
    input: S.OverviewInput,
    http: [
      {
        method: "GET",
        path: "/api/programs/:programId/overview",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "Program overview: figures over time and per partner",
        description:
          "Clicks, referred signups (leads), referred sales and their revenue, and commissions by state (pending, credited, paid, and what refunds reversed) for each UTC day of the range (days without anything are zeros), per partner (the 100 with the most revenue) and in total. Money in minor units of the program's currency. Commissions count on the day they were created, in the state they are in now. With partnerId, every figure is that partner's alone (404 when the partner is not enrolled in the program). For members whose role grants programs:read.",
        example: { programId: 1, from: "2026-01-01", to: "2026-01-30" },
        errors: ["forbidden", "not_found"],
        response: { description: "The overview.", example: overviewExample },
      },
      {
        method: "GET",
        path: "/api/admin/programs/:programId/overview",
        route: "admin",
        tag: "Operator",
        summary: "A program's overview",
        description:
          "The same figures as the dashboard's program overview: per UTC day of the range, per partner and in total, money in minor units; with partnerId, one partner's figures only.",
        example: { programId: 1, from: "2026-01-01", to: "2026-01-30" },
        errors: ["not_found"],
        response: { description: "The overview.", example: overviewExample },
      },
    ],
  },
  breakdowns: {
    input: S.BreakdownsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/breakdowns",
      scope: "sales:read",
      tag: "Dashboard",
      summary: "Traffic breakdowns: clicks, leads and sales by country, device, browser and referrer",
      description: BREAKDOWNS_DESCRIPTION,
      example: { programId: 1, from: "2026-01-01", to: "2026-01-30" },
      errors: ["invalid_request"],
      response: { description: "The breakdowns of the range.", example: breakdownsExample },
    }),
  },
  listPartners: {
    input: S.ListPartnersInput,
    http: [
      programApiRoute({
        method: "GET",
        path: "/partners",
        scope: "partners:read",
        summary: "The program's partners with their totals",
        description:
          "Newest enrollment first, one page at a time (pass nextCursor as cursor for the next, with the same filters). Each row: the partner, the enrollment's status and referral code, when they enrolled, and their all-time totals (clicks, leads, sales, revenue, commissions by state) and current balance, in minor units. q keeps the partners whose name, email or referral code contains it, in any case; email and tenantId find one partner by their exact email or your id of them.",
        example: { status: "pending", limit: 25 },
        response: { description: "A page of partners.", example: { data: [partnerRowExample], nextCursor: null } },
      }),
      {
        method: "GET",
        path: "/api/programs/:programId/partners",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "The program's partners with their totals",
        description:
          "Newest enrollment first, one page at a time (pass nextCursor as cursor for the next, with the same filters). Each row: the partner, the enrollment's status and referral code, when they enrolled, and their all-time totals (clicks, leads, sales, revenue, commissions by state) and current balance, in minor units. q keeps the partners whose name, email or referral code contains it, in any case. For members whose role grants programs:read.",
        example: { programId: 1, status: "pending", limit: 25 },
        errors: ["forbidden", "not_found"],
        response: { description: "A page of partners.", example: { data: [partnerRowExample], nextCursor: null } },
      },
      {
        method: "GET",
        path: "/api/admin/programs/:programId/partners",
        route: "admin",
        tag: "Operator",
        summary: "A program's partners with their totals",
        description:
          "The same list as the dashboard's: newest enrollment first, a page at a time, with each partner's all-time totals and balance in minor units; q searches the partners' names, emails and referral codes.",
        example: { programId: 1, status: "pending", limit: 25 },
        errors: ["not_found"],
        response: { description: "A page of partners.", example: { data: [partnerRowExample], nextCursor: null } },
      },
    ],
  },
  exportPartners: {
    input: S.ExportPartnersInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/partners.csv",
      scope: "partners:read",
      tag: "Dashboard",
      summary: "The program's partners as a CSV file",
      description: exportDescription(
        "The partners of the program, filtered like the partners list, newest enrollment first, one row per partner: the enrollment's status and referral code, and the partner's all-time totals and current balance.",
      ),
      example: { programId: 1, status: "approved" },
      response: { description: "The CSV file (Content-Disposition: attachment).", contentType: "text/csv", example: csvExample(PARTNERS_CSV, { ...partnerRowExample, currency: "usd" }) },
    }),
  },
  partnerDetail: {
    input: S.PartnerDetailInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/partners/:partnerId",
      scope: "partners:read",
      tag: "Dashboard",
      summary: "A partner of the program",
      description:
        "The partner's row of the partners list (their email, the enrollment's status and referral code, when they enrolled, their all-time totals and current balance in minor units; heldForReviewCents: of the pending commissions, those held for a fraud review) with the team's private notes on them in this program (empty when none), their newest application to the program (what they wrote and the decision; null when they did not apply), and from the partner's own profile their country (ISO 3166-1 alpha-2) and chosen payout method (paypal, bank or stripe; null when not chosen), without their payout account details. 404 when the partner is not enrolled in the program.",
      example: { programId: 1, partnerId: 3 },
      errors: ["not_found"],
      response: { description: "The partner.", example: partnerDetailExample },
    }),
  },
  updatePartner: {
    input: S.UpdatePartnerInput,
    http: programRoutes({
      method: "PATCH",
      path: "/:programId/partners/:partnerId",
      scope: "partners:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Change a partner: notes, referral code, group, tenant id, metadata",
      description:
        "Sets the fields given and keeps the others. notes: the team's private notes on the partner in this program, plain text of up to 2000 characters, stored and answered as sent (never interpreted as HTML); an empty text clears them. The partner never sees them. referralCode: a new code for their links (links with the old code stop counting at once). groupId: a live group of the program (404 otherwise). tenantId: your id of them (null clears it). metadata: replaces what was stored. A code or tenant id another partner of the program has is 409, and nothing changes. Answers the partner as the partner endpoint does; 404 when the partner is not enrolled in the program.",
      example: { programId: 1, partnerId: 3, notes: "Met at the March webinar; prefers monthly payouts.", metadata: { plan: "pro" } },
      errors: ["not_found", "conflict"],
      response: { description: "The partner after the change.", example: partnerDetailExample },
    }),
  },
  banPartner: {
    input: S.BanPartnerInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/partners/:partnerId/ban",
      scope: "partners:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Ban a partner",
      description:
        "The partner is declined in the program (their links stop being attributed at once), every commission of theirs not yet credited is voided with the reason (credited ones stay theirs: claw money back with a manual clawback), and they are emailed the reason; a partner.banned event goes to the webhooks. Banning a declined partner again voids what is still uncredited and sends nothing (changed false). Approve the partner to take them back.",
      example: { programId: 1, partnerId: 3, reason: "Incentivised traffic against the terms" },
      errors: ["not_found"],
      response: { description: "The enrollment after the call and how many commissions were voided.", example: { ...decisionExample, status: "declined", voidedCommissions: 2 } },
    }),
  },
  approvePartner: {
    input: S.EnrollmentDecisionInput,
    http: {
      method: "POST",
      path: "/api/programs/:programId/partners/:partnerId/approve",
      route: "program-dashboard",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Approve a partner",
      description:
        "A pending or declined partner becomes approved: their referral links are tracked from now on; a pending application of theirs is approved with it (and they are mailed a sign-in link). Approving an approved partner changes nothing (changed is false). For members whose role grants programs:write.",
      example: { programId: 1, partnerId: 3 },
      errors: ["forbidden", "not_found"],
      response: { description: "The enrollment after the call.", example: decisionExample },
    },
  },
  declinePartner: {
    input: S.EnrollmentDecisionInput,
    http: {
      method: "POST",
      path: "/api/programs/:programId/partners/:partnerId/decline",
      route: "program-dashboard",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Decline a partner",
      description:
        "A pending or approved partner becomes declined: their referral links stop being tracked (commissions already earned stay); a pending application of theirs is declined with it (and they are mailed). Declining a declined partner changes nothing (changed is false). For members whose role grants programs:write.",
      example: { programId: 1, partnerId: 3 },
      errors: ["forbidden", "not_found"],
      response: { description: "The enrollment after the call.", example: { ...decisionExample, status: "declined" } },
    },
  },
  setPartnerStatus: {
    input: S.SetEnrollmentStatusInput,
    http: {
      method: "POST",
      path: "/api/admin/programs/:programId/partners/:partnerId/status",
      route: "admin",
      tag: "Operator",
      summary: "Approve or decline a partner",
      description:
        "Sets an enrollment to approved (from pending or declined) or declined (from pending or approved); nothing goes back to pending. A pending application of the partner is decided the same way (and the applicant mailed). Setting the status it already has changes nothing (changed is false).",
      example: { programId: 1, partnerId: 3, status: "approved" },
      errors: ["not_found"],
      response: { description: "The enrollment after the call.", example: decisionExample },
    },
  },
  applicationForm: {
    input: S.ApplicationFormInput,
    http: {
      method: "GET",
      path: "/api/public/programs/:programId/application",
      route: "applications",
      tag: "Applications",
      summary: "A program's application form",
      description:
        "What the public application page shows, without sign-in: the program's name, the merchant's description, the questions to answer (one answer each, in this order) and the terms to accept (empty: none), all plain text, and whether the program takes applications now (open; a closed form answers too, with open false). 404 when there is no such program.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: {
        description: "The form.",
        example: {
          programId: 1,
          programName: "Acme partners",
          description: applicationSettingsExample.description,
          questions: applicationSettingsExample.questions,
          terms: applicationSettingsExample.terms,
          open: true,
        },
      },
    },
  },
  apply: {
    input: S.ApplyInput,
    http: {
      method: "POST",
      path: "/api/public/programs/:programId/applications",
      route: "applications",
      tag: "Applications",
      summary: "Apply to become a partner",
      description:
        "Anyone may apply, without an account: name, email, optionally a website, how they will promote the program, one answer per question of the form and, when the form has terms, acceptTerms true (400 naming the field otherwise). The merchant reviews the application in the dashboard; an email confirms it arrived and another tells the decision (an approval carries a sign-in link to the partner portal). When the program approves applications at once, the status is approved and that email comes at once. 409 applications_closed when the program takes no applications, application_exists when an application with this email waits for a decision, already_enrolled when the email is already an approved or pending partner of the program. At most 5 applications per client address and hour by default (429).",
      example: {
        programId: 1,
        name: "Jane Doe",
        email: "jane@example.com",
        website: "https://jane.example",
        promotion: "A weekly newsletter on home baking, 4,000 readers.",
        answers: ["In my newsletter and on Instagram."],
        acceptTerms: true,
      },
      errors: ["not_found", "applications_closed", "application_exists", "already_enrolled", "rate_limit_exceeded"],
      response: {
        status: 201,
        description: "The application: received (waiting for the merchant's decision) or approved. Location: the application on the merchant's dashboard API.",
        example: { applicationId: 7, status: "received" },
      },
    },
  },
  listApplications: {
    input: S.ListApplicationsInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/applications",
      scope: "partners:read",
      tag: "Dashboard",
      summary: "The program's applications",
      description:
        "Applications from the program's public form, newest first, one page at a time (pass nextCursor as cursor for the next, with the same filter), optionally of one status (pending, approved, declined). Each: the applicant's name, email, website, how they will promote the program, the questions as asked with their answers (plain text as written: show it as text, never as HTML), the partner it enrolled (pending until decided), the status, the decline message, the group chosen on approval and when it was decided.",
      example: { programId: 1, status: "pending", limit: 25 },
      errors: ["not_found"],
      response: { description: "A page of applications.", example: { data: [applicationExample], nextCursor: null } },
    }),
  },
  getApplication: {
    input: S.ApplicationIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/applications/:applicationId",
      scope: "partners:read",
      tag: "Dashboard",
      summary: "One application",
      description: "One application of the program, as the applications list shows it (the Location of a new application from the public form).",
      example: { programId: 1, applicationId: 7 },
      errors: ["not_found"],
      response: { description: "The application.", example: applicationExample },
    }),
  },
  approveApplication: {
    input: S.ApproveApplicationInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/applications/:applicationId/approve",
      scope: "partners:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Approve an application",
      description:
        "The application and its partner become approved (their referral links are tracked from now on) and, with groupId, the partner moves into that live partner group of the program (404 for an unknown group, 409 for an archived one; nothing is decided then). The applicant gets an email with a sign-in link to the partner portal. Approving an approved application changes nothing and sends nothing (changed is false); a declined application cannot be approved (409: approve the partner on the partners endpoints instead).",
      example: { programId: 1, applicationId: 7, groupId: 2 },
      errors: ["not_found", "conflict"],
      response: {
        description: "The application after the call.",
        example: { application: { ...applicationExample, status: "approved", groupId: 2, decidedAt: "2026-01-06T10:00:00.000Z" }, changed: true },
      },
    }),
  },
  declineApplication: {
    input: S.DeclineApplicationInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/applications/:applicationId/decline",
      scope: "partners:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Decline an application",
      description:
        "The application and its partner become declined; the applicant gets an email saying so, with the message when one is given (plain text, up to 1000 characters). Declining a declined application changes nothing and sends nothing (changed is false); an approved application cannot be declined (409: decline the partner on the partners endpoints instead). A declined applicant may apply again.",
      example: { programId: 1, applicationId: 7, message: "We only work with food blogs for now." },
      errors: ["not_found", "conflict"],
      response: {
        description: "The application after the call.",
        example: {
          application: { ...applicationExample, status: "declined", declineMessage: "We only work with food blogs for now.", decidedAt: "2026-01-06T10:00:00.000Z" },
          changed: true,
        },
      },
    }),
  },
});
