/**
 * The merchant API (docs/api.md) as typed methods: partners, commissions, payouts, sales, customers and activity of the key's
 * program. Money is in integer minor units of the program's currency; answers are the API's JSON as it is (camelCase,
 * dates as ISO 8601 strings). Every method needs its scope on the key (a Read only key reads, a Full access key
 * writes); a missing scope is an AffiliateApiError with code insufficient_scope.
 */

/** One call of the merchant API; the client sends it with its retry policy and, for a write, one Idempotency-Key. */
export type ApiTransport = (call: {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: Record<string, unknown>;
  /** Your own key for a write: the same key and body within 24 h replay the first answer. Default: one per call. */
  idempotencyKey?: string;
}) => Promise<unknown>;

/** Per call: your Idempotency-Key for a write (e.g. your own user id for enrolling that user). */
export interface WriteOptions {
  idempotencyKey?: string;
}

export interface Page<T> {
  data: T[];
  /** Pass as `cursor` for the next page (with the same filters); null on the last. */
  nextCursor: string | null;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
  /** Created from / to (ISO dates), where the list takes them. */
  from?: string;
  to?: string;
}

export type EnrollmentStatus = "approved" | "pending" | "declined";

/** A partner of the program with their all-time totals and balance (minor units). */
export interface PartnerRow {
  partnerId: number;
  name: string;
  email: string | null;
  status: EnrollmentStatus;
  referralCode: string;
  enrolledAt: string;
  totals: Record<string, number>;
}

export interface PartnerDetail extends PartnerRow {
  notes: string;
  tenantId: string | null;
  metadata: Record<string, string>;
  country: string | null;
  payoutMethod: "paypal" | "bank" | "stripe" | null;
  application: Record<string, unknown> | null;
}

export interface CreatePartnerInput {
  name: string;
  email?: string;
  /** Your id of them (your user id), unique in the program: find them by it later. */
  tenantId?: string;
  /** Up to 50 keys of text values. */
  metadata?: Record<string, string>;
  /** The code in their links; generated when omitted. */
  referralCode?: string;
  groupId?: number;
  /** approved (default) or pending (you approve them later). */
  status?: "approved" | "pending";
  /** Their own customer key in your product, for the self-referral guard. */
  customerKey?: string;
}

export interface CreatedPartner {
  partner: { id: number; name: string; email: string | null };
  enrollment: { id: number; partnerId: number; programId: number; status: EnrollmentStatus; referralCode: string; tenantId: string | null; metadata: Record<string, string> };
}

/** A user of your app for the embedded referrals page (docs/embedded-referrals.md). */
export interface CreateEmbedTokenInput {
  /** Your id of the user (your user id): the same tenantId always gets the same partner. */
  tenantId: string;
  /** Their email: a partner of the program with it is the same partner. */
  email: string;
  /** Their name, for a partner enrolled now. */
  name: string;
  /** A partner group of the program for a partner enrolled now (e.g. Customers); default: the default group. */
  groupId?: number;
}

export interface EmbedToken {
  /** Put it in the iframe's address (`embedUrl` has it); it lasts 10 minutes and may be used again in that time. */
  token: string;
  expiresAt: string;
  programId: number;
  partnerId: number;
  /** True when this call enrolled the user as a partner. */
  enrolled: boolean;
  /** The page to put in your iframe, with the token in its fragment. */
  embedUrl: string;
}

export interface UpdatePartnerInput {
  notes?: string;
  referralCode?: string;
  groupId?: number;
  tenantId?: string | null;
  metadata?: Record<string, string>;
}

export interface PartnerListQuery extends PageQuery {
  status?: EnrollmentStatus;
  /** Name, email or referral code containing this text. */
  q?: string;
  email?: string;
  tenantId?: string;
}

export interface Commission {
  id: number;
  programId: number;
  partnerId: number;
  kind: "sale" | "lead" | "manual";
  saleId: number | null;
  transactionId: string;
  currency: string;
  amountCents: number;
  netCents: number;
  deductedCents: number;
  status: "pending" | "approved" | "paid" | "refunded" | "reversed";
  reason: string | null;
  description: string | null;
  heldAt: string | null;
  holdReason: string | null;
  approvableAt: string;
  creditedAt: string | null;
  paidOutAt: string | null;
  createdAt: string;
  refunds: Array<{ id: number; refundId: string | null; amountCents: number; deductionCents: number; reasonCode: string; reason: string; createdAt: string }>;
}

export interface CommissionListQuery extends PageQuery {
  partnerId?: number;
  status?: Commission["status"];
}

export interface ManualCommissionInput {
  partnerId: number;
  /** bonus: money for the partner; clawback: money taken back (credited at once; the balance may go below zero). */
  type: "bonus" | "clawback";
  /** Positive, in minor units of the program's currency. */
  amountCents: number;
  description: string;
}

export interface ReversalResult {
  success: boolean;
  status: string;
  deductionAmount?: number;
  commission_id?: number;
}

export interface Withdrawal {
  id: number;
  partnerId: number;
  programId: number;
  currency: string;
  amountCents: number;
  status: "open" | "processing" | "paid" | "failed" | "cancelled";
  runId: number | null;
  method: "stripe" | "paypal" | "bank" | null;
  createdAt: string;
  paidAt: string | null;
  failedAt: string | null;
}

export interface PayoutRun {
  id: number;
  programId: number;
  currency: string;
  periodKey: string;
  status: "processing" | "completed";
  createdAt: string;
  completedAt: string | null;
  payouts?: Withdrawal[];
  [field: string]: unknown;
}

export interface Sale {
  id: number;
  programId: number;
  transactionId: string;
  amountCents: number;
  currency: string;
  partnerId: number | null;
  [field: string]: unknown;
}

export interface Customer {
  customerKey: string;
  partnerId: number | null;
  [field: string]: unknown;
}

/** An entry of the program's activity log (`audit:read`): who changed what, from where. */
export interface ActivityEntry {
  id: number;
  actorType: "user" | "api_key" | "operator";
  actorId: number | null;
  actorLabel: string | null;
  kind: "partners" | "commissions" | "payouts" | "rewards" | "coupons" | "webhooks" | "api_keys" | "settings";
  operation: string;
  summary: string;
  method: string;
  path: string;
  location: string | null;
  status: number;
  clientAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  createdAt: string;
}

/** The query string of a call, without the undefined fields. */
export function queryString(query: Record<string, string | number | boolean | undefined> | undefined): string {
  const pairs = Object.entries(query ?? {}).filter(([, v]) => v !== undefined) as [string, string | number | boolean][];
  return pairs.length ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&")}` : "";
}

const pathId = (id: number) => {
  if (!Number.isSafeInteger(id) || id <= 0) throw new TypeError(`ids are positive integers, not ${String(id)}`);
  return String(id);
};

/** A list of the program's records, newest first, a page at a time. */
export class ListApi<T> {
  constructor(
    protected readonly request: ApiTransport,
    private readonly path: string,
  ) {}

  list(query: PageQuery & Record<string, string | number | boolean | undefined> = {}): Promise<Page<T>> {
    return this.request({ method: "GET", path: this.path, query }) as Promise<Page<T>>;
  }
}

export class PartnersApi {
  constructor(private readonly request: ApiTransport) {}

  /** Enrolls a new partner (e.g. one of your users at signup, with `tenantId` = your user id). */
  create(input: CreatePartnerInput, options: WriteOptions = {}): Promise<CreatedPartner> {
    return this.request({ method: "POST", path: "/partners", body: { ...input }, ...options }) as Promise<CreatedPartner>;
  }

  list(query: PartnerListQuery = {}): Promise<Page<PartnerRow>> {
    return this.request({ method: "GET", path: "/partners", query: { ...query } }) as Promise<Page<PartnerRow>>;
  }

  get(partnerId: number): Promise<PartnerDetail> {
    return this.request({ method: "GET", path: `/partners/${pathId(partnerId)}` }) as Promise<PartnerDetail>;
  }

  /** The partner with your id of them, or null. */
  async findByTenantId(tenantId: string): Promise<PartnerDetail | null> {
    return this.firstOf(await this.list({ tenantId, limit: 1 }));
  }

  /** The partner with this email in the program, or null. */
  async findByEmail(email: string): Promise<PartnerDetail | null> {
    return this.firstOf(await this.list({ email, limit: 1 }));
  }

  update(partnerId: number, patch: UpdatePartnerInput, options: WriteOptions = {}): Promise<PartnerDetail> {
    return this.request({ method: "PATCH", path: `/partners/${pathId(partnerId)}`, body: { ...patch }, ...options }) as Promise<PartnerDetail>;
  }

  /** Links stop at once, commissions not yet credited are voided with the reason, the partner is emailed. */
  ban(partnerId: number, reason: string, options: WriteOptions = {}): Promise<{ partnerId: number; status: EnrollmentStatus; changed: boolean; voidedCommissions: number }> {
    return this.request({ method: "POST", path: `/partners/${pathId(partnerId)}/ban`, body: { reason }, ...options }) as Promise<{
      partnerId: number;
      status: EnrollmentStatus;
      changed: boolean;
      voidedCommissions: number;
    }>;
  }

  private firstOf(page: Page<PartnerRow>): Promise<PartnerDetail | null> {
    return page.data.length ? this.get(page.data[0].partnerId) : Promise.resolve(null);
  }
}

export class CommissionsApi extends ListApi<Commission> {
  constructor(request: ApiTransport) {
    super(request, "/commissions");
  }

  override list(query: CommissionListQuery = {}): Promise<Page<Commission>> {
    return super.list({ ...query });
  }

  get(commissionId: number): Promise<Commission> {
    return this.request({ method: "GET", path: `/commissions/${pathId(commissionId)}` }) as Promise<Commission>;
  }

  /** A bonus or a clawback in the program's currency, through the ledger like any commission. */
  createManual(input: ManualCommissionInput, options: WriteOptions = {}): Promise<Commission> {
    return this.request({ method: "POST", path: "/commissions", body: { ...input }, ...options }) as Promise<Commission>;
  }

  /** Takes the commission back in full; the partner is told the reason. */
  void(commissionId: number, reason?: string, options: WriteOptions = {}): Promise<ReversalResult> {
    return this.request({ method: "POST", path: `/commissions/${pathId(commissionId)}/void`, body: { reason }, ...options }) as Promise<ReversalResult>;
  }

  /** Keeps a commission not yet credited from being credited until released. */
  hold(commissionId: number, reason?: string, options: WriteOptions = {}): Promise<{ commission: Commission; changed: boolean }> {
    return this.request({ method: "POST", path: `/commissions/${pathId(commissionId)}/hold`, body: { reason }, ...options }) as Promise<{ commission: Commission; changed: boolean }>;
  }

  release(commissionId: number, options: WriteOptions = {}): Promise<{ commission: Commission; changed: boolean }> {
    return this.request({ method: "POST", path: `/commissions/${pathId(commissionId)}/release`, ...options }) as Promise<{ commission: Commission; changed: boolean }>;
  }
}

export class PayoutsApi {
  constructor(private readonly request: ApiTransport) {}

  listWithdrawals(query: PageQuery & { partnerId?: number; status?: Withdrawal["status"] } = {}): Promise<Page<Withdrawal>> {
    return this.request({ method: "GET", path: "/withdrawals", query: { ...query } }) as Promise<Page<Withdrawal>>;
  }

  /** Who a run for this period would pay, and who it would skip and why. */
  previewRun(periodKey: string): Promise<Record<string, unknown>> {
    return this.request({ method: "GET", path: "/payout-runs/preview", query: { periodKey } }) as Promise<Record<string, unknown>>;
  }

  /** Pays every partner with enough available (one run per period: a second call returns the first run). */
  startRun(input: { periodKey: string; expectedTotalCents?: number }, options: WriteOptions = {}): Promise<{ run: PayoutRun; created: boolean }> {
    return this.request({ method: "POST", path: "/payout-runs", body: { ...input }, ...options }) as Promise<{ run: PayoutRun; created: boolean }>;
  }

  listRuns(query: PageQuery = {}): Promise<Page<PayoutRun>> {
    return this.request({ method: "GET", path: "/payout-runs", query: { ...query } }) as Promise<Page<PayoutRun>>;
  }

  getRun(runId: number): Promise<PayoutRun> {
    return this.request({ method: "GET", path: `/payout-runs/${pathId(runId)}` }) as Promise<PayoutRun>;
  }

  /** The run's payouts sent by file (bank or PayPal) are paid: from your bank's confirmation. */
  markRunPaid(runId: number, method: "bank" | "paypal", options: WriteOptions = {}): Promise<{ paid: number }> {
    return this.request({ method: "POST", path: `/payout-runs/${pathId(runId)}/mark-paid`, body: { method }, ...options }) as Promise<{ paid: number }>;
  }

  /** A payout that failed or came back: its amount is in the balance again; the partner is told the reason. */
  failWithdrawal(withdrawalId: number, reason: string, options: WriteOptions = {}): Promise<{ withdrawal: Withdrawal; changed: boolean }> {
    return this.request({ method: "POST", path: `/withdrawals/${pathId(withdrawalId)}/fail`, body: { reason }, ...options }) as Promise<{ withdrawal: Withdrawal; changed: boolean }>;
  }
}

/** The fraud rules a program turns on (each `{ enabled, ...settings }`); docs/fraud.md has what each reads. */
export interface FraudSettings {
  partner_identity: { enabled: boolean };
  disposable_email: { enabled: boolean };
  shared_payout_details: { enabled: boolean };
  banned_referrer: { enabled: boolean; domains: string[] };
  paid_traffic: { enabled: boolean };
  click_injection: { enabled: boolean; seconds: number };
  address_velocity: { enabled: boolean; perDay: number };
  refund_rate: { enabled: boolean; percent: number; minSales: number };
}

/** A conversion the rules flagged: its commission is held until the review is cleared or rejected. */
export interface FraudReview {
  id: number;
  programId: number;
  partnerId: number;
  partnerName: string;
  commissionId: number;
  kind: "sale" | "lead";
  status: "pending" | "cleared" | "rejected";
  flags: Array<{ rule: keyof FraudSettings; evidence: Record<string, unknown>; description: string }>;
  commission: { amountCents: number; currency: string; status: string; transactionId: string };
  createdAt: string;
  decidedAt: string | null;
  /** On a rejection, what the partner was told. */
  decisionReason: string | null;
}

export interface FraudReviewListQuery extends PageQuery {
  status?: FraudReview["status"];
  partnerId?: number;
  from?: string;
  to?: string;
}

/** The program's fraud rules and the review of what they flag (scopes fraud:read, fraud:write). */
export class FraudApi extends ListApi<FraudReview> {
  constructor(request: ApiTransport) {
    super(request, "/fraud/reviews");
  }

  override list(query: FraudReviewListQuery = {}): Promise<Page<FraudReview>> {
    return super.list({ ...query });
  }

  async settings(): Promise<FraudSettings> {
    return ((await this.request({ method: "GET", path: "/fraud-settings" })) as { settings: FraudSettings }).settings;
  }

  /** Sets each rule given, whole; the others keep theirs. */
  async updateSettings(rules: Partial<FraudSettings>, options: WriteOptions = {}): Promise<FraudSettings> {
    return ((await this.request({ method: "PUT", path: "/fraud-settings", body: { ...rules }, ...options })) as { settings: FraudSettings }).settings;
  }

  /** The conversion is fine: its commission proceeds, its hold counted from now. */
  clear(reviewId: number, options: WriteOptions = {}): Promise<{ review: FraudReview; changed: boolean }> {
    return this.request({ method: "POST", path: `/fraud/reviews/${pathId(reviewId)}/clear`, ...options }) as Promise<{ review: FraudReview; changed: boolean }>;
  }

  /** The commission is voided; the partner is told the rules' plain words, then `reason`. */
  reject(reviewId: number, reason?: string, options: WriteOptions = {}): Promise<{ review: FraudReview; changed: boolean }> {
    return this.request({ method: "POST", path: `/fraud/reviews/${pathId(reviewId)}/reject`, body: { reason }, ...options }) as Promise<{ review: FraudReview; changed: boolean }>;
  }
}

/** A value of a traffic breakdown with its figures (clicks; leads; sales and amountCents). */
export type BreakdownEntry = { value: string } & Record<string, number>;

/** One family's top 10 values per dimension and the rest summed (`other`, null when there is none). */
export type BreakdownFamily = Record<"country" | "device" | "browser" | "referrer", { values: BreakdownEntry[]; other: Record<string, number> | null }>;

/** Clicks, leads and sales by country, device, browser and referrer domain over a range of UTC days (docs/dashboard-api.md). */
export interface Breakdowns {
  programId: number;
  currency: string;
  currencyExponent: number;
  from: string;
  to: string;
  test: boolean;
  clicks: BreakdownFamily;
  leads: BreakdownFamily;
  sales: BreakdownFamily;
}
