import type { FraudSettings } from "../../shared/domain/fraud-rules";
import type { CommissionRule } from "../../shared/domain/commission-rules";
import type { ApiKeyScope } from "../../shared/domain/api-key-scopes";
import type { ActivityEntry, ActivityKind, ActorType } from "../../shared/domain/audit";

export type { ActivityEntry };
import type { Page, PageRequest } from "../../shared/pagination";
import type { OutboxStore } from "../../shared/outbox/outbox";
import type { BankDetails, PayoutMethod } from "../../shared/partner-profile";
import type { Locale } from "../../shared/i18n";

export type PaymentTrackingMode = "processor_connect" | "s2s";

export interface ProcessorConnection {
  connectionStatus: string;
  accountId: string | null;
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  connectedAt: Date | null;
}

export interface Program {
  id: number;
  /** The dashboard workspace that owns the program (null for programs created before workspaces). */
  workspaceId: number | null;
  name: string;
  currency: string;
  commissionRule: CommissionRule;
  holdDays: number;
  /** How long a subscription keeps earning: null for its lifetime, 0 for the first payment only, N months otherwise. */
  recurringCommissionMonths: number | null;
  /** A test-mode program also takes the processor's test-mode (livemode: false) events. */
  testMode: boolean;
  /** On: a lead or sale whose email or customer key is the partner's own is not attributed (services/attribution/self-referral.ts). */
  selfReferralGuard: boolean;
  paymentTrackingMode: PaymentTrackingMode;
  /** Browser origins allowed to call the public tracking endpoints (empty: any). */
  allowedOrigins: string[];
  /** How many days the browser snippet keeps a referral click in its cookie (svc_click_id); default 90. */
  cookieWindowDays: number;
  /** Where partners' referral links lead (the partner portal's link); null: the first allowed origin. */
  defaultLandingUrl: string | null;
  /** The merchant's brand on the pages partners see (the embedded referrals page): a colour `#rrggbb` and an https logo, or null. */
  brandColor: string | null;
  logoUrl: string | null;
  /** The public application form (docs/dashboard-api.md, "Applications"). */
  applications: ApplicationSettings;
  /** Which fraud rules hold a conversion's commission for review, and their settings (docs/fraud.md). */
  fraudSettings: FraudSettings;
  processor: ProcessorConnection;
  createdAt: Date;
}

/** How a program takes applications from would-be partners (its public application form). */
export interface ApplicationSettings {
  /** Whether the form takes applications (default false). */
  open: boolean;
  /** Approve every application at once (into `autoApproveGroupId`, or the default group when null). */
  autoApprove: boolean;
  autoApproveGroupId: number | null;
  /** Plain text shown above the form (up to 2000 characters; empty: none). */
  description: string;
  /** Up to 5 questions (1 to 200 characters each), one answer each. */
  questions: string[];
  /** Plain text the applicant must accept when not empty (up to 5000 characters). */
  terms: string;
}

/** A program's application settings until the merchant changes them: closed, nothing asked. */
export const DEFAULT_APPLICATION_SETTINGS: ApplicationSettings = { open: false, autoApprove: false, autoApproveGroupId: null, description: "", questions: [], terms: "" };

/** The browser snippet's cookie window when a program names none (sdk/browser/svc.js, data-cookie-days). */
export const DEFAULT_COOKIE_WINDOW_DAYS = 90;

/** A new program; the settings added later (cookie window, landing URL, applications) take their defaults when left out. */
export type NewProgram = Omit<Program, "id" | "createdAt" | "processor" | "cookieWindowDays" | "defaultLandingUrl" | "brandColor" | "logoUrl" | "applications" | "fraudSettings"> &
  Partial<Pick<Program, "cookieWindowDays" | "defaultLandingUrl">>;

/**
 * The settings a merchant changes (docs/dashboard-api.md, "Settings"); a field left out keeps its value, also each
 * field of `applications` and each rule of `fraudSettings` (so two changes of different fields never undo each other).
 */
export type ProgramSettingsPatch = Partial<Pick<Program, "name" | "currency" | "holdDays" | "cookieWindowDays" | "defaultLandingUrl" | "brandColor" | "logoUrl" | "allowedOrigins">> & {
  applications?: Partial<ApplicationSettings>;
  fraudSettings?: Partial<FraudSettings>;
};

/** A page of programs: one workspace's, or every program (operators). */
export interface ProgramListFilter extends PageRequest {
  workspaceId?: number;
}

export interface ApiKey {
  id: number;
  programId: number;
  /** What the merchant called it (null for keys created without one). */
  name: string | null;
  /** Public part of the key, used to find it; the secret is stored only as a hash. */
  prefix: string;
  secretHash: string;
  createdAt: Date;
  /** When a request last used it, recorded at most once per key per API_KEY_USE_INTERVAL_MS by each gateway; null: never. */
  lastUsedAt: Date | null;
  retiredAt: Date | null;
  /** What it may do (shared/domain/api-key-scopes.ts); keys made before scopes have `tracking` only. */
  scopes: ApiKeyScope[];
}

export interface Partner {
  id: number;
  name: string;
  email: string | null;
  /** The partner's own customer key in the merchant's product, if they are also a customer (self-referral guard). */
  customerKey: string | null;
  createdAt: Date;
}

/**
 * The partner's profile and payout details (docs/partners.md, "Profile and payout details"), kept off `Partner`,
 * which other services receive: only the partner (in the portal) reads all of it; bank details are never logged.
 */
export interface PartnerProfile {
  partnerId: number;
  name: string;
  email: string | null;
  /** ISO 3166-1 alpha-2, upper-case. */
  country: string | null;
  payoutMethod: PayoutMethod | null;
  paypalEmail: string | null;
  bank: BankDetails | null;
  /** The language of the portal and the partner's emails (docs/partners.md, "Languages"); null: the browser's, English for emails. */
  locale: Locale | null;
  /** The last change of the profile; the partner's creation until one. */
  updatedAt: Date;
}

/** What a profile change writes: every changeable field (the change is computed from the stored profile). */
export type PartnerProfileFields = Pick<PartnerProfile, "name" | "country" | "payoutMethod" | "paypalEmail" | "bank" | "locale">;

export type EnrollmentStatus = "approved" | "pending" | "declined";

export interface Enrollment {
  id: number;
  partnerId: number;
  programId: number;
  status: EnrollmentStatus;
  referralCode: string;
  createdAt: Date;
}

/** Storage contract of the programs service: programs, API keys, partners and enrollments. */
export interface ProgramsRepository {
  createProgram(input: NewProgram): Promise<Program>;
  getProgram(id: number): Promise<Program | null>;
  /** A page of programs sorted by (createdAt desc, id desc), served by an index on (workspace, createdAt, id) or (createdAt, id). */
  listProgramsPage(filter: ProgramListFilter): Promise<Page<Program>>;
  /** The program a processor connected account belongs to. */
  findProgramByProcessorAccount(accountId: string): Promise<Program | null>;
  /** Changes the processor connection fields given; null when the program does not exist. */
  updateProcessorConnection(id: number, patch: Partial<ProcessorConnection>): Promise<Program | null>;
  /** Changes the settings given (one write) and keeps the rest; an empty patch changes nothing. Null when the program does not exist. */
  updateProgramSettings(id: number, patch: ProgramSettingsPatch): Promise<Program | null>;
  /** A new key; without scopes, tracking only. */
  createApiKey(input: { programId: number; prefix: string; secretHash: string; name?: string | null; scopes?: readonly ApiKeyScope[] }): Promise<ApiKey>;
  findApiKeyByPrefix(prefix: string): Promise<ApiKey | null>;
  /** The program's keys, retired ones included, newest first (served by an index on program and id). */
  listApiKeys(programId: number): Promise<ApiKey[]>;
  /**
   * Sets `retiredAt` once; retiring again keeps the first date. With `programId`, only a key of that program
   * (null for a key of another program, as for an unknown one).
   */
  retireApiKey(id: number, at: Date, programId?: number): Promise<ApiKey | null>;
  /** Records a use of the key: `lastUsedAt` moves forward to `at`, never back (uses reported late or twice change nothing). */
  recordApiKeyUse(id: number, at: Date): Promise<void>;
  createPartner(input: { name: string; email: string | null; customerKey?: string | null }): Promise<Partner>;
  getPartner(id: number): Promise<Partner | null>;
  /**
   * Returns null when the referral code (or the partner) is already enrolled in the program. An approved
   * enrollment's partner.enrolled event is written to the programs outbox in the same transaction.
   */
  createEnrollment(input: { partnerId: number; programId: number; referralCode: string; status: EnrollmentStatus }): Promise<Enrollment | null>;
  /**
   * Sets an enrollment's status; null when the partner is not enrolled in the program. With `allowedFrom`, only
   * an enrollment whose current status is in it changes (decided under the row's lock: two concurrent decisions
   * cannot both apply); otherwise it is returned as it is. `changed` says whether this call changed it. When it
   * becomes `approved` (from another status), the partner.enrolled event is written in the same transaction, once:
   * `enrolled` says whether this call wrote it (the caller nudges the relay then). Setting the status an
   * enrollment already has changes nothing.
   */
  setEnrollmentStatus(
    programId: number,
    partnerId: number,
    status: EnrollmentStatus,
    now: Date,
    allowedFrom?: readonly EnrollmentStatus[],
    /** A ban (docs/api.md, "Partners"): when the status changes, its partner.banned event is written with it. */
    ban?: { reason: string },
  ): Promise<{ enrollment: Enrollment; enrolled: boolean; changed: boolean } | null>;
  findEnrollmentByReferralCode(programId: number, referralCode: string): Promise<Enrollment | null>;
  findEnrollment(programId: number, partnerId: number): Promise<Enrollment | null>;
  hasApprovedEnrollment(programId: number): Promise<boolean>;
  /**
   * The program's enrollments with their partners, newest first by
   * (createdAt desc, id desc), one page (shared/pagination.ts), optionally of one
   * status. Served by the enrollments_list and enrollments_list_status indexes.
   * With `q`, only the enrollments whose partner's name or email, or whose
   * referral code, contains `q` in any case (every character literal: `%`, `_`,
   * `\` and regular-expression characters match themselves); the same index is
   * read newest first and rows not matching are skipped, so the keyset cursor
   * works unchanged.
   */
  listEnrollments(programId: number, filter: EnrollmentListFilter): Promise<Page<EnrolledPartner>>;
  /** One enrollment with its partner and the merchant's notes; null when the partner is not enrolled in the program. */
  getEnrolledPartner(programId: number, partnerId: number): Promise<EnrolledPartnerDetail | null>;
  /**
   * Sets the fields given of an enrollment (one write; the last write wins) and returns it as getEnrolledPartner
   * does; null when the partner is not enrolled in the program, "duplicate" when the referral code or tenant id is
   * another enrollment's in the program (nothing is written then).
   */
  updateEnrollment(programId: number, partnerId: number, patch: EnrollmentPatch): Promise<EnrolledPartnerDetail | null | "duplicate">;
  /** The enrollments of these partners in the program, with their partners (any order; none for a partner not enrolled). */
  findEnrolledPartners(programId: number, partnerIds: readonly number[]): Promise<EnrolledPartner[]>;
  /** The programs outbox (table or collection `programs_outbox`), for its relay. */
  readonly outbox: OutboxStore;
  /** Partners with this (lower-case) email, oldest first: the partner portal's sign-in. */
  findPartnersByEmail(email: string): Promise<Partner[]>;
  /** The partner's enrollments in every program, oldest first. */
  listPartnerEnrollments(partnerId: number): Promise<Enrollment[]>;
  /**
   * Stores an application, in one transaction under the program's lock (so two applications with one email, at
   * once, are decided one after the other): refused when the program does not exist (`no_program`), when an
   * application of this program with this email is pending (`application_exists`; also kept by a unique index on
   * pending applications), or when a partner with this email is enrolled in the program, approved or pending
   * (`already_enrolled`). Otherwise the partner is the oldest with this email whose enrollment in the program was
   * declined (that enrollment takes the application's status: a new application is a new decision), else the
   * oldest with this email not enrolled in it, else a new partner (`name`, `email`) with a new enrollment of
   * `referralCode`. The enrollment has the application's status; an approved one writes the partner.enrolled
   * event in the same transaction (`enrolled`).
   */
  createApplication(input: NewApplication): Promise<ApplyOutcome>;
  /** One application of the program; null when the program has none with this id. */
  getApplication(programId: number, applicationId: number): Promise<Application | null>;
  /** The partner's newest application to the program (the partner detail shows its answers); null when none. */
  findPartnerApplication(programId: number, partnerId: number): Promise<Application | null>;
  /**
   * The program's applications newest first by (createdAt desc, id desc), one page, optionally of one status;
   * served by the applications_list and applications_list_status indexes.
   */
  listApplications(programId: number, filter: ApplicationListFilter): Promise<Page<Application>>;
  /**
   * Decides a pending application, in one transaction: the application (locked first) becomes `decision.status`
   * with `decidedAt` = `now`, `groupId` and `declineMessage`, and its enrollment changes as `setEnrollmentStatus`
   * changes it (`allowedFrom`; the partner.enrolled event when it becomes approved). An application decided
   * already is returned as it is (`changed` false, `enrollment` null), so of two decisions at once one applies.
   * Null when the program has no application with this id.
   */
  decideApplication(
    programId: number,
    applicationId: number,
    decision: ApplicationDecision,
    now: Date,
    allowedFrom: readonly EnrollmentStatus[],
  ): Promise<{ application: Application; changed: boolean; enrollment: { enrollment: Enrollment; enrolled: boolean; changed: boolean } | null } | null>;
  /** The partner's profile and payout details; null when there is no such partner. */
  getPartnerProfile(partnerId: number): Promise<PartnerProfile | null>;
  /**
   * The other partners enrolled in the program (any status) whose PayPal email (ignoring case), IBAN, or account and
   * routing numbers are the partner's own (the fraud rule shared_payout_details), by id, at most 20.
   */
  partnersSharingPayoutDetails(programId: number, partnerId: number): Promise<number[]>;
  /**
   * Changes the partner's profile: `change` gets the profile as stored and returns every changeable field, which
   * are written with `updatedAt` = `now`. Read and write are one unit under the partner's lock (SQL: the row locked
   * in a transaction; MongoDB: a transaction, whose conflict with a concurrent change runs `change` again on what
   * that one wrote), so a check in `change` holds for what is stored. What `change` throws leaves the profile as it
   * was and is thrown. Null when there is no such partner.
   */
  updatePartnerProfile(partnerId: number, change: (current: PartnerProfile) => PartnerProfileFields, now: Date): Promise<PartnerProfile | null>;

  /**
   * Claims an API key's `Idempotency-Key` for a request (docs/api.md, "Idempotency"): `claimed` when no request holds
   * it (a record older than `expiresBefore` counts as none and is replaced), else the record that does: the same
   * request's finished answer or its run still in progress, or another request's (`requestHash` differs).
   */
  claimIdempotencyKey(claim: { apiKeyId: number; key: string; requestHash: string; now: Date; expiresBefore: Date }): Promise<IdempotencyClaim>;
  /** Keeps the answer of the claimed request, for its replays. */
  completeIdempotencyKey(apiKeyId: number, key: string, answer: { status: number; body: unknown }): Promise<void>;
  /** Lets a claimed request that did not finish (a failure worth retrying) be run again by the next one with its key. */
  releaseIdempotencyKey(apiKeyId: number, key: string): Promise<void>;
  /** Forgets the records claimed before `before` (past their lifetime); returns how many. */
  deleteIdempotencyKeysBefore(before: Date): Promise<number>;

  /** Adds an entry to the program's activity log (docs/dashboard-api.md, "Activity"). */
  recordActivity(entry: NewActivityEntry): Promise<ActivityEntry>;
  /** The program's activity log, newest first, optionally of one actor or kind. */
  listActivity(programId: number, filter: ActivityListFilter): Promise<Page<ActivityEntry>>;
}

export type NewActivityEntry = Omit<ActivityEntry, "id">;

export interface ActivityListFilter extends PageRequest {
  actorType?: ActorType;
  actorId?: number | null;
  kind?: ActivityKind;
}

/** What claiming an Idempotency-Key found. */
export type IdempotencyClaim = { state: "claimed" } | { state: "mismatch" } | { state: "in_progress" } | { state: "done"; status: number; body: unknown };

/** What a stored record means for a request with its key: another request's, the same one's answer, or still running. */
export function idempotencyClaimOf(sameRequest: boolean, status: number | null, body: unknown): IdempotencyClaim {
  if (!sameRequest) return { state: "mismatch" };
  return status === null ? { state: "in_progress" } : { state: "done", status, body };
}

/** An enrollment with its partner, as the partners list shows it. */
export interface EnrolledPartner extends Enrollment {
  partner: Partner;
}

/** The partners list's filters: a status, text the partner's name, email or referral code contains, an exact (lower-case) email or tenant id. */
export interface EnrollmentListFilter extends PageRequest {
  status?: EnrollmentStatus;
  q?: string;
  email?: string;
  tenantId?: string;
}

/** The merchant's own data on an enrollment (docs/api.md, "Partners"): kept off `Enrollment`, like the notes. */
export interface EnrollmentMerchantFields {
  notes: string;
  /** The merchant's own id of the partner (their user id), unique in the program; null when none. */
  tenantId: string | null;
  /** Up to 50 string values under keys of the merchant's choosing. */
  metadata: Record<string, string>;
}

export type EnrollmentPatch = Partial<EnrollmentMerchantFields> & { referralCode?: string };

/**
 * An enrollment with its partner and the merchant's private notes on it (per program: plain text, empty when
 * none). Notes are kept off `Enrollment`, which other services and the partner portal receive: only the
 * program's team reads them.
 */
export interface EnrolledPartnerDetail extends EnrolledPartner, EnrollmentMerchantFields {}

export type ApplicationStatus = "pending" | "approved" | "declined";

/** A question of the form as it was asked, with the applicant's answer (plain text, stored as sent). */
export interface ApplicationAnswer {
  question: string;
  answer: string;
}

/** An application to a program from its public form: what the applicant wrote, and the merchant's decision. */
export interface Application {
  id: number;
  programId: number;
  /** The partner it enrolled (pending until decided); an existing partner with the same email is reused. */
  partnerId: number;
  name: string;
  /** Lower case, as partners' emails are. */
  email: string;
  website: string | null;
  /** How the applicant will promote the program. */
  promotion: string;
  answers: ApplicationAnswer[];
  status: ApplicationStatus;
  /** The merchant's message to a declined applicant (null: none). */
  declineMessage: string | null;
  /** The group the partner was moved into on approval (null: not moved). */
  groupId: number | null;
  createdAt: Date;
  decidedAt: Date | null;
}

/** What an application stores: `status` approved when the program approves at once (into `groupId`). */
export type NewApplication = Pick<Application, "programId" | "name" | "email" | "website" | "promotion" | "answers" | "groupId"> & {
  status: "pending" | "approved";
  /** The referral code of a new enrollment (an enrollment set again keeps its own). */
  referralCode: string;
  now: Date;
};

export type ApplyOutcome =
  | {
      outcome: "created";
      application: Application;
      partner: Partner;
      enrollment: Enrollment;
      /** Whether this call wrote the partner.enrolled event (an approved enrollment). */
      enrolled: boolean;
    }
  | { outcome: "no_program" }
  | { outcome: "application_exists" }
  | { outcome: "already_enrolled"; status: EnrollmentStatus };

/** The merchant's decision on an application. */
export interface ApplicationDecision {
  status: "approved" | "declined";
  groupId: number | null;
  declineMessage: string | null;
}

/** The applications list's filter: one status. */
export interface ApplicationListFilter extends PageRequest {
  status?: ApplicationStatus;
}
