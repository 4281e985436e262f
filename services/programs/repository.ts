import type { CommissionRule } from "../../shared/domain/commission-rules";
import type { Page, PageRequest } from "../../shared/pagination";
import type { OutboxStore } from "../../shared/outbox/outbox";

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
  processor: ProcessorConnection;
  createdAt: Date;
}

/** The browser snippet's cookie window when a program names none (sdk/browser/svc.js, data-cookie-days). */
export const DEFAULT_COOKIE_WINDOW_DAYS = 90;

/** A new program; the settings added later (cookie window, landing URL) take their defaults when left out. */
export type NewProgram = Omit<Program, "id" | "createdAt" | "processor" | "cookieWindowDays" | "defaultLandingUrl"> & Partial<Pick<Program, "cookieWindowDays" | "defaultLandingUrl">>;

/** The settings a merchant changes (docs/dashboard-api.md, "Settings"); a field left out keeps its value. */
export type ProgramSettingsPatch = Partial<Pick<Program, "name" | "currency" | "holdDays" | "cookieWindowDays" | "defaultLandingUrl" | "allowedOrigins">>;

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
}

export interface Partner {
  id: number;
  name: string;
  email: string | null;
  /** The partner's own customer key in the merchant's product, if they are also a customer (self-referral guard). */
  customerKey: string | null;
  createdAt: Date;
}

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
  createApiKey(input: { programId: number; prefix: string; secretHash: string; name?: string | null }): Promise<ApiKey>;
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
   * Replaces the merchant's notes on an enrollment (one write; the last write wins) and returns the enrollment
   * as getEnrolledPartner does; null when the partner is not enrolled in the program.
   */
  setEnrollmentNotes(programId: number, partnerId: number, notes: string): Promise<EnrolledPartnerDetail | null>;
  /** The enrollments of these partners in the program, with their partners (any order; none for a partner not enrolled). */
  findEnrolledPartners(programId: number, partnerIds: readonly number[]): Promise<EnrolledPartner[]>;
  /** The programs outbox (table or collection `programs_outbox`), for its relay. */
  readonly outbox: OutboxStore;
  /** Partners with this (lower-case) email, oldest first: the partner portal's sign-in. */
  findPartnersByEmail(email: string): Promise<Partner[]>;
  /** The partner's enrollments in every program, oldest first. */
  listPartnerEnrollments(partnerId: number): Promise<Enrollment[]>;
}

/** An enrollment with its partner, as the partners list shows it. */
export interface EnrolledPartner extends Enrollment {
  partner: Partner;
}

/** The partners list's filters: a status, and text the partner's name, email or referral code contains. */
export interface EnrollmentListFilter extends PageRequest {
  status?: EnrollmentStatus;
  q?: string;
}

/**
 * An enrollment with its partner and the merchant's private notes on it (per program: plain text, empty when
 * none). Notes are kept off `Enrollment`, which other services and the partner portal receive: only the
 * program's team reads them.
 */
export interface EnrolledPartnerDetail extends EnrolledPartner {
  notes: string;
}
