import type { z } from "zod";
import type { Breakdown } from "../../shared/domain/breakdowns";
import type { Jsonified } from "../../shared/dto";
import type { Page } from "../../shared/pagination";
import type { ExportBatch } from "../../shared/csv-export";
import type { OverviewFigures } from "./overview";
import type { ApplicationForm } from "./applications";
import type { ActivityEntry, Application, ApplicationSettings, Enrollment, IdempotencyClaim, Partner, PartnerProfile, Program } from "./repository";
import type * as S from "./schemas";
import type { FraudSettings } from "../../shared/domain/fraud-rules";
import type { ApiKeyScope, ScopePreset } from "../../shared/domain/api-key-scopes";

/** A partner as a payout run sees them (programs.payoutRecipients). */
export type PayoutRecipient = Jsonified<Omit<PartnerProfile, "updatedAt" | "locale">> & { status: Enrollment["status"] };

/**
 * The programs service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from services/bus.ts, never this file directly.
 */
export interface ProgramsContract {
  "programs.create": { params: z.input<typeof S.CreateProgramInput>; result: Jsonified<Program> };
  "programs.list": { params: z.input<typeof S.ListProgramsInput>; result: Page<Jsonified<Program>> };
  "programs.listForWorkspace": { params: z.input<typeof S.ListWorkspaceProgramsInput>; result: Page<Jsonified<Program>> };
  "programs.get": { params: z.input<typeof S.ProgramIdInput>; result: Jsonified<Program> };
  "programs.updateProcessorConnection": { params: z.input<typeof S.UpdateProcessorConnectionInput>; result: Jsonified<Program> | null };
  "programs.findByProcessorAccount": { params: z.input<typeof S.ProcessorAccountInput>; result: Jsonified<Program> | null };
  /** The program's settings, its default group's hold days included (docs/dashboard-api.md, "Settings"). */
  "programs.settings": { params: z.input<typeof S.ProgramIdInput>; result: ProgramSettings };
  "programs.updateSettings": { params: z.input<typeof S.UpdateSettingsInput>; result: ProgramSettings };
  /** Its fraud rules (docs/fraud.md): every rule with its switch and settings. */
  "programs.fraudSettings": { params: z.input<typeof S.ProgramIdInput>; result: { settings: FraudSettings } };
  "programs.updateFraudSettings": { params: z.input<typeof S.UpdateFraudSettingsInput>; result: { settings: FraudSettings } };
  /** What the fraud rules read of a partner (commissions, when a conversion earns): their email, and who shares their payout details. */
  "programs.partnerFraudFacts": { params: z.input<typeof S.EnrollmentInput>; result: { email: string | null; payoutDetailsSharedWith: number[] } };
  /** The secret `apiKey` is in this answer only. */
  "programs.createApiKey": { params: z.input<typeof S.CreateApiKeyInput>; result: ApiKeyView & { apiKey: string } };
  /** Never the secret nor its hash. */
  "programs.listApiKeys": { params: z.input<typeof S.ProgramIdInput>; result: { programId: number; data: ApiKeyView[] } };
  "programs.retireApiKey": { params: z.input<typeof S.RetireApiKeyInput>; result: { id: number; programId: number; retiredAt: string } };
  /** Internal (gateway): a use of a key, reported at most once per key per API_KEY_USE_INTERVAL_MS by each gateway. */
  /** Internal (gateway): a write on the program that succeeded, for its activity log. */
  "programs.recordActivity": { params: z.input<typeof S.RecordActivityInput>; result: null };
  "programs.listActivity": { params: z.input<typeof S.ListActivityInput>; result: Page<Jsonified<ActivityEntry>> };
  "programs.recordKeyUse": { params: z.input<typeof S.RecordKeyUseInput>; result: null };
  /** The merchant API's Idempotency-Key of a write (docs/api.md, "Idempotency"): claimed, or what holds it. */
  "programs.claimIdempotencyKey": { params: z.input<typeof S.ClaimIdempotencyKeyInput>; result: IdempotencyClaim };
  "programs.completeIdempotencyKey": { params: z.input<typeof S.CompleteIdempotencyKeyInput>; result: null };
  "programs.releaseIdempotencyKey": { params: z.input<typeof S.ReleaseIdempotencyKeyInput>; result: null };
  "programs.authenticateKey": { params: z.input<typeof S.AuthenticateKeyInput>; result: { programId: number; keyId: number; scopes: ApiKeyScope[] } };
  "programs.createPartner": { params: z.input<typeof S.CreatePartnerInput>; result: Jsonified<{ partner: Partner; enrollment: Enrollment }> };
  /** The approved enrollment behind a referral code, or null. */
  "programs.findReferral": { params: z.input<typeof S.FindReferralInput>; result: Jsonified<Enrollment> | null };
  /** Which of these partners are enrolled in the program (any status). */
  "programs.enrolledPartnerIds": { params: z.input<typeof S.EnrolledPartnerIdsInput>; result: number[] };
  "programs.getEnrollment": { params: z.input<typeof S.EnrollmentInput>; result: Jsonified<Enrollment> };
  /** Internal: the partner as the merchant's app knows them, for an account-credit payout's reward.earned. */
  "programs.creditRecipient": {
    params: z.input<typeof S.EnrollmentInput>;
    result: { partnerId: number; tenantId: string | null; email: string | null; name: string; stripeCustomerId: string | null };
  };
  "programs.getPartner": { params: z.input<typeof S.PartnerIdInput>; result: Jsonified<Partner> };
  /** The partner's language from their profile (null: none chosen; docs/partners.md, "Languages"); 404 for an unknown partner. */
  "programs.getPartnerLocale": { params: z.input<typeof S.PartnerIdInput>; result: { locale: PartnerProfile["locale"] } };
  "programs.hasApprovedPartners": { params: z.input<typeof S.ProgramIdInput>; result: boolean };
  "programs.enrollPartner": { params: z.input<typeof S.EnrollPartnerInput>; result: Jsonified<Enrollment> };
  /** The partner who signs in to the portal with this email: the oldest with an approved enrollment, or null. */
  "programs.findPartnerForSignIn": { params: z.input<typeof S.PartnerEmailInput>; result: Jsonified<Partner> | null };
  /** The partner and their enrollments in every program (any status). */
  "programs.getPartnerEnrollments": { params: z.input<typeof S.PartnerIdInput>; result: Jsonified<{ partner: Partner; enrollments: Enrollment[] }> };
  /** The partner's profile and payout details (the partner portal only: bank details never go elsewhere). */
  /** The enrolled ones of `partnerIds`, each with their enrollment status and profile (bank details included: the payout files need them). */
  "programs.payoutRecipients": { params: z.input<typeof S.PayoutRecipientsInput>; result: Array<PayoutRecipient> };
  "programs.getPartnerProfile": { params: z.input<typeof S.PartnerIdInput>; result: Jsonified<PartnerProfile> };
  /** Sets the fields given; 400 invalid_request naming the field when the resulting profile cannot be used for its payout method. */
  "programs.updatePartnerProfile": { params: z.input<typeof S.UpdatePartnerProfileInput>; result: Jsonified<PartnerProfile> };
  "programs.overview": { params: z.input<typeof S.OverviewInput>; result: ProgramOverview };
  /** Clicks, leads and sales by country, device, browser and referrer domain over a range: each family's top 10 values and the rest. */
  "programs.breakdowns": { params: z.input<typeof S.BreakdownsInput>; result: ProgramBreakdowns };
  "programs.listPartners": { params: z.input<typeof S.ListPartnersInput>; result: Page<PartnerRow> };
  /** One partner of the program: a row of the list with the program team's notes (404 when not enrolled). */
  "programs.partnerDetail": { params: z.input<typeof S.PartnerDetailInput>; result: PartnerDetail };
  /** Sets the notes given and answers the partner detail after the change. */
  "programs.banPartner": { params: z.input<typeof S.BanPartnerInput>; result: EnrollmentDecision & { voidedCommissions: number } };
  "programs.updatePartner": { params: z.input<typeof S.UpdatePartnerInput>; result: PartnerDetail };
  /** One batch of the partners CSV export (the gateway pulls them: shared/csv-export.ts). */
  "programs.exportPartners": { params: z.input<typeof S.ExportPartnersInput>; result: ExportBatch };
  "programs.approvePartner": { params: z.input<typeof S.EnrollmentDecisionInput>; result: EnrollmentDecision };
  "programs.declinePartner": { params: z.input<typeof S.EnrollmentDecisionInput>; result: EnrollmentDecision };
  "programs.setPartnerStatus": { params: z.input<typeof S.SetEnrollmentStatusInput>; result: EnrollmentDecision };
  /** The public application form of a program (no sign-in; docs/dashboard-api.md, "Applications"). */
  "programs.applicationForm": { params: z.input<typeof S.ApplicationFormInput>; result: ApplicationForm };
  /** An application from the public form; the caller's `clientAddress` (meta) is what the per-address limit counts. */
  "programs.apply": { params: z.input<typeof S.ApplyInput>; result: { applicationId: number; status: "received" | "approved" } };
  "programs.listApplications": { params: z.input<typeof S.ListApplicationsInput>; result: Page<ApplicationView> };
  "programs.approveApplication": { params: z.input<typeof S.ApproveApplicationInput>; result: ApplicationDecisionResult };
  "programs.declineApplication": { params: z.input<typeof S.DeclineApplicationInput>; result: ApplicationDecisionResult };
}

/** An application as the dashboard shows it (dates as ISO strings). */
export type ApplicationView = Jsonified<Application>;

/** What approving or declining an application did: the application after the call, and whether this call decided it. */
export interface ApplicationDecisionResult {
  application: ApplicationView;
  changed: boolean;
}

/** A program's settings as the settings API shows them. */
export interface ProgramSettings {
  programId: number;
  name: string;
  currency: string;
  /** True once the program has a sale or a commission: the currency cannot change any more. */
  currencyFixed: boolean;
  cookieWindowDays: number;
  /** The default partner group's hold days (rewards owns them: the one value commissions use). */
  holdDays: number;
  defaultLandingUrl: string | null;
  /** The merchant's brand on the embedded referrals page: #rrggbb, an https logo, or null. */
  brandColor: string | null;
  logoUrl: string | null;
  allowedOrigins: string[];
  /** The public application form (docs/dashboard-api.md, "Applications"). */
  applications: ApplicationSettings;
}

/** An API key as it is listed: never its secret nor its hash. `prefix` is the beginning of the key (svc_sk_ and 16 hex digits). */
export interface ApiKeyView {
  id: number;
  programId: number;
  name: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  retiredAt: string | null;
  /** What the key may do (docs/api.md, "Scopes"), and the console preset those scopes are, or null for a custom set. */
  scopes: ApiKeyScope[];
  preset: ScopePreset | null;
}

/** The program overview (GET /api/programs/:programId/overview): docs/merchants.md. */
/**
 * The traffic breakdowns of a range (shared/domain/breakdowns.ts): per family (clicks; attributed leads; attributed
 * sales with their amount in minor units of the program's currency) and dimension, the top 10 values and the rest.
 */
export interface ProgramBreakdowns {
  programId: number;
  currency: string;
  currencyExponent: number;
  from: string;
  to: string;
  test: boolean;
  partnerId: number | null;
  clicks: Breakdown<{ clicks: number }>;
  leads: Breakdown<{ leads: number }>;
  sales: Breakdown<{ sales: number; amountCents: number }>;
}

export interface ProgramOverview {
  programId: number;
  /** The workspace that owns the program (its notifications inbox), null for a program without one. */
  workspaceId: number | null;
  currency: string;
  /** Decimals of the currency (ISO 4217: 2 for usd, 0 for jpy): a page shows minor units as amounts with it. */
  currencyExponent: number;
  from: string;
  to: string;
  test: boolean;
  /** The partner the figures are limited to (the partnerId filter), null for the whole program. */
  partnerId: number | null;
  days: Array<{ date: string } & OverviewFigures>;
  totals: OverviewFigures;
  /** The partners with the most revenue in the range (ties: lower id first), then those without revenue with the most clicks: 100 at most. */
  partners: Array<{ partnerId: number; name: string; status: string; referralCode: string; balanceCents: number } & OverviewFigures>;
  /** How many partners had revenue in the range, and how many had clicks (with partnerId: 1 or 0 each). */
  partnersWithRevenue: number;
  partnersWithClicks: number;
}

/** One row of the partners list. */
export interface PartnerRow {
  partnerId: number;
  name: string;
  email: string | null;
  status: string;
  referralCode: string;
  enrolledAt: string;
  totals: OverviewFigures & { balanceCents: number };
}

/** One partner of the program (GET /api/programs/:programId/partners/:partnerId): a row of the list and the notes. */
export interface PartnerDetail extends PartnerRow {
  /** Of the pending commissions, the net of those held for a fraud review (docs/fraud.md): not payable until cleared. */
  heldForReviewCents: number;
  /** The program team's private notes on the partner in this program: plain text, empty when none; never shown to the partner. */
  notes: string;
  /** Your own id of the partner (their user id in your product; null when none) and your metadata on them. */
  tenantId: string | null;
  metadata: Record<string, string>;
  /** The partner's newest application to the program (what they wrote, the decision), null when they did not apply. */
  application: ApplicationView | null;
  /** From the partner's profile (theirs, across programs): where they are and how they want to be paid; bank details are not shown. */
  country: string | null;
  payoutMethod: PartnerProfile["payoutMethod"];
}

/** What approving or declining did: the enrollment after the call, and whether this call changed it. */
export interface EnrollmentDecision {
  partnerId: number;
  programId: number;
  status: string;
  referralCode: string;
  changed: boolean;
}

/** What programs broadcasts on the bus for other processes' caches (docs/architecture.md, "Bus broadcasts"). */
export interface ProgramsBroadcasts {
  "programs.changed": { programId: number };
  "programs.apiKeyRetired": { keyId: number; programId: number };
  /** An enrollment was created or its status changed (so whether the program has an approved partner may have). */
  "programs.enrollmentChanged": { programId: number; partnerId: number; referralCode: string; status: string };
}
