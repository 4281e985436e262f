import { z } from "zod";
import { FRAUD_RULE_TEXT } from "../../shared/domain/fraud-rules";
import { oneLine, prose } from "../../shared/validation";
import { API_KEY_SCOPES, SCOPE_PRESET_NAMES } from "../../shared/domain/api-key-scopes";
import { exportFields } from "../../shared/csv-export";
import { PAGE_FIELDS, checkRange, RANGE_FIELDS } from "../../shared/pagination";
import { Currency, CustomerKey, Id, IdempotencyKeyValue, ReferralCode } from "../../shared/values";
import { PartnerProfilePatchFields } from "../../shared/partner-profile";
import { ACTIVITY_KINDS, ACTOR_TYPES, parseActorFilter } from "../../shared/domain/audit";

export const CommissionRuleInput = z.discriminatedUnion("type", [
  z
    .strictObject({
      type: z.literal("percentage").describe("The rule's kind: percentage."),
      basisPoints: z.number().int().min(0).max(10_000).meta({ description: "The share of the sale in hundredths of a percent (2000 is 20%).", example: 2000 }),
    })
    .describe("A share of each sale."),
  z
    .strictObject({
      type: z.literal("flat").describe("The rule's kind: flat."),
      amountCents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).meta({ description: "The commission per sale, in minor units.", example: 500 }),
    })
    .describe("A fixed amount per sale."),
]);

/** A browser origin as the Origin header sends it: http(s), host and port, no path; normalised (`https://Shop.example/` is `https://shop.example`). */
export const Origin = z
  .string()
  .trim()
  .max(300)
  .transform((value, ctx) => {
    const url = URL.canParse(value) ? new URL(value) : null;
    const ok = url && (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password && url.pathname === "/" && !url.search && !url.hash;
    if (!ok) {
      ctx.addIssue({ code: "custom", message: "must be an origin such as https://shop.example (http or https, a host and an optional port, no path)" });
      return z.NEVER;
    }
    return url.origin;
  });

/** An absolute http(s) URL a person's browser opens (no credentials in it). */
export const LandingUrl = z
  .string()
  .trim()
  .max(2000)
  .transform((value, ctx) => {
    const url = URL.canParse(value) ? new URL(value) : null;
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password || !url.hostname) {
      ctx.addIssue({ code: "custom", message: "must be an absolute http or https URL such as https://shop.example/pricing" });
      return z.NEVER;
    }
    return url.toString();
  });

const COOKIE_WINDOW_DAYS = z
  .number()
  .int()
  .min(1)
  .max(400)
  .meta({ description: "How many days the browser snippet keeps a referral click (1 to 400: browsers keep a cookie at most 400 days).", example: 90 });

export const CreateProgramInput = z.strictObject({
  workspaceId: Id.nullish()
    .transform((v) => v ?? null)
    .meta({ description: "The workspace that owns the program (its members see it in the dashboard).", example: 1 }),
  name: oneLine(z.string().trim().min(1).max(200)).meta({ description: "The program's name.", example: "Acme" }),
  currency: Currency.default("usd").meta({ description: "The program's ISO 4217 currency code.", example: "usd" }),
  commissionRule: CommissionRuleInput.describe("How a sale's commission is computed: a percentage (in basis points) or a flat amount."),
  holdDays: z.number().int().min(0).max(365).default(30).meta({
    description:
      "Days a commission is held (refunds reduce it) before it is credited (0 to 365). It is credited by the first credit run after that (hourly by default), so 0 credits within the hour, not at the sale.",
    example: 30,
  }),
  recurringCommissionMonths: z
    .number()
    .int()
    .min(0)
    .max(1200)
    .nullable()
    .default(null)
    .meta({ description: "For how many months after a subscription's first payment its renewals earn a commission; null for no limit.", example: 12 }),
  selfReferralGuard: z
    .boolean()
    .default(true)
    .describe("True (default): a lead or sale whose email or customer key is the partner's own is recorded unattributed (reason self_referral) and earns nothing."),
  testMode: z.boolean().default(false).describe("True while integrating: the processor's test-mode events are accepted (a live server otherwise ignores them)."),
  paymentTrackingMode: z
    .enum(["processor_connect", "s2s"])
    .default("processor_connect")
    .meta({ description: "How sales arrive: processor_connect (the payment processor's webhooks) or s2s (your server calls the sale endpoint).", example: "s2s" }),
  allowedOrigins: z
    .array(Origin)
    .max(50)
    .transform((origins) => [...new Set(origins)])
    .default([])
    .meta({ description: "Origins whose pages may send clicks for the program; empty allows any.", example: ["https://shop.example"] }),
  cookieWindowDays: COOKIE_WINDOW_DAYS.default(90),
  defaultLandingUrl: LandingUrl.nullable()
    .default(null)
    .meta({ description: "Where partners' referral links lead; null: the first allowed origin.", example: "https://shop.example/pricing" }),
});

/** The program's public application form (docs/dashboard-api.md, "Applications"): each field given is set, the others keep their values. */
export const ApplicationSettingsPatch = z.strictObject({
  open: z.boolean().optional().meta({ description: "Whether the public form takes applications (default false).", example: true }),
  autoApprove: z
    .boolean()
    .optional()
    .meta({ description: "Approve every application at once (default false): the partner is approved and, with autoApproveGroupId, moved into that group.", example: false }),
  autoApproveGroupId: Id.nullable().optional().meta({ description: "The partner group auto-approved partners join: a live group of the program; null: the default group.", example: 2 }),
  description: prose(z.string().max(2000))
    .optional()
    .meta({ description: "Plain text shown above the form (up to 2000 characters; never read as HTML); empty: none.", example: "We pay 20% on every sale you refer, for 12 months." }),
  questions: z
    .array(oneLine(z.string().trim().min(1).max(200)))
    .max(5)
    .optional()
    .meta({ description: "Up to 5 questions (1 to 200 characters each); the applicant answers each one.", example: ["Where will you promote us?"] }),
  terms: prose(z.string().max(5000)).optional().meta({
    description: "Plain text of the program's terms (up to 5000 characters); when not empty the applicant must accept them.",
    example: "Paid monthly once your balance reaches $50.",
  }),
});

/** The settings a merchant changes: each field given is set, the others keep their values. */
export const UpdateSettingsInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  name: oneLine(z.string().trim().min(1).max(200)).optional().meta({ description: "The program's name.", example: "Acme partners" }),
  currency: Currency.optional().meta({ description: "The program's ISO 4217 currency code; fixed once the program has a sale or a commission.", example: "eur" }),
  cookieWindowDays: COOKIE_WINDOW_DAYS.optional(),
  holdDays: z.number().int().min(0).max(365).optional().meta({
    description:
      "Days a commission of the default group's partners is held before it is credited (0 to 365). It is credited by the first credit run after that (hourly by default), so 0 credits within the hour, not at the sale.",
    example: 30,
  }),
  defaultLandingUrl: LandingUrl.nullable()
    .optional()
    .meta({ description: "Where partners' referral links lead (an absolute http or https URL); null: the first allowed origin.", example: "https://shop.example/pricing" }),
  allowedOrigins: z
    .array(Origin)
    .max(50)
    .transform((origins) => [...new Set(origins)])
    .optional()
    .meta({ description: "Origins whose pages may send clicks and signups from the browser snippet; an empty list allows any.", example: ["https://shop.example"] }),
  brandColor: z
    .string()
    .trim()
    .regex(/^#[0-9a-fA-F]{6}$/, "must be a colour as #rrggbb")
    .transform((c) => c.toLowerCase())
    .nullable()
    .optional()
    .meta({ description: "Your brand's colour on the embedded referrals page (#rrggbb; darkened there if needed so its text stays readable); null: the page's own.", example: "#6d28d9" }),
  logoUrl: LandingUrl.nullable().optional().meta({
    description: "Your logo on the embedded referrals page (an absolute https image URL; http only for a page served over http); null: none.",
    example: "https://shop.example/logo.svg",
  }),
  applications: ApplicationSettingsPatch.optional().describe("The public application form: the fields given are set, the others kept."),
});

export const CreateApiKeyInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    name: oneLine(z.string().trim().min(1).max(100))
      .optional()
      .meta({ description: "What the key is for, shown in the list of keys (required from the dashboard).", example: "Production server" }),
    preset: z.enum(SCOPE_PRESET_NAMES).optional().meta({
      description: "tracking (track clicks, leads, sales and refunds; the default), read_only (read every area) or full_access (tracking and every area's write); or give scopes.",
      example: "read_only",
    }),
    scopes: z
      .array(z.enum(API_KEY_SCOPES))
      .min(1)
      .max(API_KEY_SCOPES.length)
      .optional()
      .meta({
        description:
          "The scopes one by one instead of a preset: tracking, audit:read, embed:write (embed tokens for the embedded referrals page; in no preset), or <area>:read or <area>:write (a write grants the area's read).",
        example: ["partners:write", "commissions:read"],
      }),
  })
  .superRefine((v, ctx) => {
    if (v.preset !== undefined && v.scopes !== undefined) ctx.addIssue({ code: "custom", path: ["scopes"], message: "is not taken with preset: give one or the other" });
  });

export const RetireApiKeyInput = z.strictObject({
  programId: Id.optional().meta({ description: "The program's id: only a key of this program is retired.", example: 1 }),
  keyId: Id.meta({ description: "The API key's id (not the secret).", example: 2 }),
});

/** Internal (gateway): a use of an API key, for its lastUsedAt. */
export const ClaimIdempotencyKeyInput = z.strictObject({ keyId: Id, key: IdempotencyKeyValue, requestHash: z.string().regex(/^[0-9a-f]{64}$/) });
export const CompleteIdempotencyKeyInput = z.strictObject({ keyId: Id, key: IdempotencyKeyValue, status: z.number().int().min(200).max(599), body: z.unknown() });
export const ReleaseIdempotencyKeyInput = z.strictObject({ keyId: Id, key: IdempotencyKeyValue });

export const RecordKeyUseInput = z.object({
  keyId: Id,
  at: z.iso.datetime({ offset: true }).transform((v) => new Date(v)),
});

/** Internal (gateway): a write on a program that succeeded, for its activity log (docs/dashboard-api.md, "Activity"). */
export const RecordActivityInput = z.strictObject({
  programId: Id,
  actorType: z.enum(ACTOR_TYPES),
  /** The user's or key's id; null for the operator. */
  actorId: Id.nullable(),
  /** The user's email; for a key, programs names it from its own table. */
  actorLabel: z.string().max(320).nullable(),
  kind: z.enum(ACTIVITY_KINDS),
  operation: z.string().max(100),
  summary: z.string().max(200),
  method: z.enum(["POST", "PUT", "PATCH", "DELETE"]),
  path: z.string().max(300),
  /** The created resource's address (its Location), if any. */
  location: z.string().max(300).nullable(),
  status: z.number().int().min(200).max(299),
  clientAddress: z.string().max(100).nullable(),
  userAgent: z.string().max(300).nullable(),
  requestId: z.string().max(100).nullable(),
});

export const ListActivityInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    actor: z
      .string()
      .transform((value, ctx) => {
        const actor = parseActorFilter(value);
        if (!actor) {
          ctx.addIssue({ code: "custom", message: "must be user:<id>, api_key:<id> or operator" });
          return z.NEVER;
        }
        return actor;
      })
      .optional()
      .meta({ description: "Only changes by this actor: user:<id> (a team member), api_key:<id> (an API key) or operator.", example: "api_key:2" }),
    kind: z.enum(ACTIVITY_KINDS).optional().meta({ description: "Only changes of this kind (what they changed).", example: "commissions" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

export const ProgramIdInput = z.strictObject({ programId: Id.meta({ description: "The program's id.", example: 1 }) });
export const KeyIdInput = z.strictObject({ keyId: Id.meta({ description: "The API key's id (not the secret).", example: 2 }) });
export const AuthenticateKeyInput = z.object({ key: z.string().max(200) });

/** The merchant's own id of a partner (their user id in the merchant's product), unique in the program. */
const TenantId = oneLine(z.string().trim().min(1).max(255)).meta({ description: "Your own id of the partner (their user id in your product), unique in the program.", example: "user_8731" });

/** Metadata on a partner, as Stripe's: up to 50 keys (1 to 40 printable characters) of one-line strings up to 500 characters. */
export const PartnerMetadata = z
  .record(z.string().regex(/^[\x21-\x7e]{1,40}$/, "keys are 1 to 40 printable ASCII characters without spaces"), oneLine(z.string().max(500)))
  .refine((m) => Object.keys(m).length <= 50, "at most 50 keys")
  .meta({
    description: "Your data on the partner: up to 50 keys (1 to 40 printable characters) of text values up to 500 characters. It replaces what was stored ({} clears it).",
    example: { plan: "pro" },
  });

export const CreatePartnerInput = z.strictObject({
  programId: Id.describe("The program's id."),
  name: oneLine(z.string().trim().min(1).max(200)).meta({ description: "The partner's name.", example: "Jane" }),
  email: z.string().trim().toLowerCase().email().max(320).optional().meta({ description: "The partner's email.", example: "jane@example.com" }),
  customerKey: CustomerKey.optional().meta({
    description: "The partner's own customer key in your product, if they are also a customer; with the program's self-referral guard on, their own leads and sales are not attributed.",
    example: "user-7",
  }),
  referralCode: ReferralCode.optional().meta({ description: "The code in the partner's links (letters, digits, - and _); generated when omitted.", example: "jane" }),
  groupId: Id.optional().meta({ description: "A live partner group of the program to put the partner in; default: the default group.", example: 2 }),
  tenantId: TenantId.optional(),
  metadata: PartnerMetadata.optional(),
  status: z
    .enum(["approved", "pending"])
    .default("approved")
    .meta({ description: "approved (default): tracked at once; pending: an application the merchant approves or declines in the dashboard.", example: "approved" }),
});

/** Enrolls an existing partner in one more program (one partner, one portal sign-in, several programs). */
export const EnrollPartnerInput = z.strictObject({
  programId: Id.describe("The program's id."),
  partnerId: Id.meta({ description: "The partner's id (from creating the partner in another program).", example: 3 }),
  referralCode: ReferralCode.optional().meta({ description: "The code in the partner's links in this program; generated when omitted.", example: "jane" }),
  status: z.enum(["approved", "pending"]).default("approved").meta({ description: "approved (default) or pending.", example: "approved" }),
});

export const PartnerEmailInput = z.object({ email: z.string().trim().toLowerCase().max(320) });

export const FindReferralInput = z.object({ programId: Id, referralCode: ReferralCode });
export const EnrollmentInput = z.object({ programId: Id, partnerId: Id });
export const PartnerIdInput = z.object({ partnerId: Id });
/** Internal (the partner portal): the fields given are set on the partner's profile (shared/partner-profile.ts). */
export const UpdatePartnerProfileInput = z.object({ partnerId: Id, ...PartnerProfilePatchFields });
export const EnrolledPartnerIdsInput = z.object({ programId: Id, partnerIds: z.array(Id).max(1000) });

/** The partners a payout run pays (docs/payouts.md): a run asks for every partner with a balance at once. */
export const PayoutRecipientsInput = z.object({ programId: Id, partnerIds: z.array(Id).max(100_000) });

export const UpdateProcessorConnectionInput = z.strictObject({
  programId: Id.describe("The program's id."),
  connectionStatus: z.string().trim().min(1).max(64).optional().meta({ description: "The connection's state, for example connected or disconnected.", example: "connected" }),
  accountId: z.string().trim().min(1).max(255).nullable().optional().meta({ description: "The connected account's id at the processor; null unlinks it.", example: "acct_123" }),
  chargesEnabled: z.boolean().optional().describe("Whether the processor lets the account take payments."),
  payoutsEnabled: z.boolean().optional().describe("Whether the processor lets the account receive payouts."),
  detailsSubmitted: z.boolean().optional().describe("Whether the account's details are complete at the processor."),
  /** When it connected; used only by the update that first connects (see connection-date.ts), default now. */
  connectedAt: z.iso
    .datetime({ offset: true })
    .optional()
    .transform((v) => (v === undefined ? undefined : new Date(v)))
    .meta({ description: "When the account connected (ISO 8601 with an offset); used only by the update that first connects it. Default: now.", example: "2026-01-01T00:00:00Z" }),
});

export const ProcessorAccountInput = z.object({ accountId: z.string().trim().min(1).max(255) });

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a day written YYYY-MM-DD");
const Flag = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")]);

/** The program overview: figures per UTC day over a range, per partner, and in total. */
export const OverviewInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  from: Day.optional().meta({ description: "First day of the range (UTC, YYYY-MM-DD, inclusive); default: 29 days before to.", example: "2026-01-01" }),
  to: Day.optional().meta({ description: "Last day of the range (UTC, YYYY-MM-DD, inclusive); default: today. At most 366 days in all.", example: "2026-01-30" }),
  test: Flag.default(false).meta({ description: "true for test events and test sales only (the integration's), false (default) for live ones.", example: "false" }),
  partnerId: Id.optional().meta({
    description: "Only this partner's figures: the days, the totals and the partner table are theirs alone. The partner must be enrolled in the program.",
    example: 3,
  }),
});

/** The traffic breakdowns (shared/domain/breakdowns.ts): the overview's range, mode and partner filter. */
export const BreakdownsInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  from: Day.optional().meta({ description: "First day of the range (UTC, YYYY-MM-DD, inclusive); default: 29 days before to.", example: "2026-01-01" }),
  to: Day.optional().meta({ description: "Last day of the range (UTC, YYYY-MM-DD, inclusive); default: today. At most 366 days in all.", example: "2026-01-30" }),
  test: Flag.default(false).meta({ description: "true for test events and test sales only (the integration's), false (default) for live ones.", example: "false" }),
  partnerId: Id.optional().meta({ description: "Only this partner's figures. The partner must be enrolled in the program.", example: 3 }),
});

/** The partners list: one page of the program's enrollments with each partner's all-time totals. */
export const ListPartnersInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  status: z.enum(["approved", "pending", "declined"]).optional().meta({ description: "Only enrollments in this status.", example: "pending" }),
  q: oneLine(z.string().trim().min(1).max(100)).optional().meta({
    description: "Only partners whose name, email or referral code contains this text (1 to 100 characters, any case; % and _ are plain characters).",
    example: "jane",
  }),
  email: z.string().trim().toLowerCase().email().max(320).optional().meta({ description: "Only the partner with this email (any case).", example: "jane@example.com" }),
  tenantId: TenantId.optional().meta({ description: "Only the partner with this id of yours (tenantId).", example: "user_8731" }),
  ...PAGE_FIELDS,
});

/** The partners list as a CSV file: the list's filters, every row (docs/dashboard-api.md, "Exports (CSV)"). */
export const ExportPartnersInput = z.strictObject(exportFields(ListPartnersInput.shape));

/** Approve or decline one partner's enrollment (the dashboard). */
export const EnrollmentDecisionInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  partnerId: Id.meta({ description: "The partner's id.", example: 3 }),
});

/** One partner of the program: the partners list's row with the email and the merchant's notes. */
export const PartnerDetailInput = EnrollmentDecisionInput;

/** The merchant's private notes on a partner's enrollment (per program); each field given is set, the others keep their values. */
export const UpdatePartnerInput = EnrollmentDecisionInput.extend({
  notes: prose(z.string().max(2000)).optional().meta({
    description: "Private notes on the partner in this program (plain text, up to 2000 characters; empty clears them). Only the program's team sees them, never the partner.",
    example: "Met at the March webinar; prefers monthly payouts.",
  }),
  referralCode: ReferralCode.optional().meta({
    description: "A new code for the partner's links (their old links stop being attributed); 409 when another partner of the program has it.",
    example: "jane-2",
  }),
  groupId: Id.optional().meta({ description: "Moves the partner into this live group of the program (only future commissions change).", example: 2 }),
  tenantId: TenantId.nullable().optional().meta({ description: "Your own id of the partner (their user id in your product), unique in the program; null clears it.", example: "user_8731" }),
  metadata: PartnerMetadata.optional(),
});

/** A ban: the partner declined, their commissions not yet credited voided with the reason, and told (docs/api.md, "Partners"). */
export const BanPartnerInput = EnrollmentDecisionInput.extend({
  reason: prose(z.string().trim().min(1).max(1000)).meta({
    description: "Why (the partner is told; recorded on each voided commission).",
    example: "Incentivised traffic against the terms",
  }),
});

/** The operator's equivalent: the status to set. */
export const SetEnrollmentStatusInput = EnrollmentDecisionInput.extend({
  status: z.enum(["approved", "declined"]).meta({ description: "approved or declined (nothing goes back to pending).", example: "approved" }),
});
/** Dashboard: a workspace's programs, newest first. */
export const ListWorkspaceProgramsInput = z
  .strictObject({
    workspaceId: Id.meta({ description: "The workspace's id.", example: 1 }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

/** Operators: every program, or one workspace's, newest first. */
export const ListProgramsInput = z
  .strictObject({
    workspaceId: Id.optional().meta({ description: "Only this workspace's programs; default: every program.", example: 1 }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

/** A website an applicant gives: an absolute http(s) URL without credentials; empty text is none. */
const Website = z
  .string()
  .trim()
  .max(500)
  .transform((value, ctx) => {
    if (value === "") return null;
    const url = URL.canParse(value) ? new URL(value) : null;
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password || !url.hostname) {
      ctx.addIssue({ code: "custom", message: "must be an absolute http or https URL such as https://blog.example" });
      return z.NEVER;
    }
    return url.toString();
  });

/** The public application form of a program (no sign-in). */
export const ApplicationFormInput = z.strictObject({ programId: Id.meta({ description: "The program's id (from the application link).", example: 1 }) });

/** An application from the public form (docs/dashboard-api.md, "Applications"). */
export const ApplyInput = z.strictObject({
  programId: Id.meta({ description: "The program's id (from the application link).", example: 1 }),
  name: oneLine(z.string().trim().min(1).max(100)).meta({ description: "Your name (1 to 100 characters).", example: "Jane Doe" }),
  email: z
    .string()
    .trim()
    .toLowerCase()
    .email()
    .max(254)
    .meta({ description: "Your email (any case, kept in lower case): the decision is sent to it, and it signs you in to the partner portal once approved.", example: "jane@example.com" }),
  website: Website.optional().meta({ description: "Your website or channel (an http or https URL, up to 500 characters); optional.", example: "https://jane.example" }),
  promotion: prose(z.string().trim().min(1).max(2000)).meta({
    description: "How you will promote the program (1 to 2000 characters).",
    example: "A weekly newsletter on home baking, 4,000 readers.",
  }),
  answers: z
    .array(prose(z.string().trim().max(2000)))
    .max(5)
    .default([])
    .meta({ description: "One answer per question of the form, in its order (up to 2000 characters each).", example: ["In my newsletter and on Instagram."] }),
  acceptTerms: z.boolean().default(false).meta({ description: "True to accept the program's terms: required when the form has terms.", example: true }),
  company: z.string().max(2000).optional().meta({ description: "Leave empty: a field people do not see on the form.", example: "" }),
});

/** The applications list: newest first, optionally of one status. */
export const ListApplicationsInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  status: z.enum(["pending", "approved", "declined"]).optional().meta({ description: "Only applications in this status.", example: "pending" }),
  ...PAGE_FIELDS,
});

const ApplicationIdFields = {
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  applicationId: Id.meta({ description: "The application's id.", example: 7 }),
};

/** One application of the program. */
export const ApplicationIdInput = z.strictObject(ApplicationIdFields);

/** Approve an application, optionally into a partner group. */
export const ApproveApplicationInput = z.strictObject({
  ...ApplicationIdFields,
  groupId: Id.optional().meta({ description: "Move the partner into this live partner group of the program; default: they stay in the default group.", example: 2 }),
});

/** Decline an application, optionally with a message for the applicant. */
export const DeclineApplicationInput = z.strictObject({
  ...ApplicationIdFields,
  message: prose(z.string().trim().max(1000))
    .optional()
    .meta({ description: "A message to the applicant, in the email that tells them (plain text, up to 1000 characters); empty: none.", example: "We only work with food blogs for now." }),
});

const ruleEnabled = z.boolean().meta({ description: "On: a conversion the rule flags is held for review.", example: true });
/** A referral domain as referrerDomain gives it: lower case, no "www.", no trailing dot. */
const BannedDomain = z
  .string()
  .trim()
  .toLowerCase()
  .transform((d) => d.replace(/^www\./, "").replace(/\.$/, ""))
  .pipe(z.string().regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/, "must be a domain name such as spam.example"));
const count = (min: number, max: number, description: string, example: number) => z.number().int().min(min).max(max).meta({ description, example });

/** The fraud rules a change sets: each rule given whole (its switch and settings), the others kept (docs/fraud.md). */
export const FraudSettingsFields = {
  partner_identity: z.strictObject({ enabled: ruleEnabled }).optional().meta({ description: FRAUD_RULE_TEXT.partner_identity.merchant }),
  disposable_email: z.strictObject({ enabled: ruleEnabled }).optional().meta({ description: FRAUD_RULE_TEXT.disposable_email.merchant }),
  shared_payout_details: z.strictObject({ enabled: ruleEnabled }).optional().meta({ description: FRAUD_RULE_TEXT.shared_payout_details.merchant }),
  banned_referrer: z
    .strictObject({
      enabled: ruleEnabled,
      domains: z
        .array(BannedDomain)
        .max(500)
        .transform((domains) => [...new Set(domains)])
        .meta({ description: "The banned referral domains (a domain bans its subdomains too).", example: ["coupons.example"] }),
    })
    .optional()
    .meta({ description: FRAUD_RULE_TEXT.banned_referrer.merchant }),
  paid_traffic: z.strictObject({ enabled: ruleEnabled }).optional().meta({ description: FRAUD_RULE_TEXT.paid_traffic.merchant }),
  click_injection: z
    .strictObject({ enabled: ruleEnabled, seconds: count(1, 3600, "A sale this many seconds or less after its click is flagged.", 10) })
    .optional()
    .meta({ description: FRAUD_RULE_TEXT.click_injection.merchant }),
  address_velocity: z
    .strictObject({ enabled: ruleEnabled, perDay: count(1, 10_000, "The leads, or sales, one network address may bring in a UTC day before the next is flagged.", 5) })
    .optional()
    .meta({ description: FRAUD_RULE_TEXT.address_velocity.merchant }),
  refund_rate: z
    .strictObject({
      enabled: ruleEnabled,
      percent: count(1, 100, "The share of the partner's sales of the last 30 days refunded or charged back above which their next sale is flagged.", 30),
      minSales: count(1, 10_000, "The sales of the last 30 days a partner needs before the rule judges them.", 5),
    })
    .optional()
    .meta({ description: FRAUD_RULE_TEXT.refund_rate.merchant }),
};

export const UpdateFraudSettingsInput = z.strictObject({ programId: Id.meta({ description: "The program's id.", example: 1 }), ...FraudSettingsFields });
