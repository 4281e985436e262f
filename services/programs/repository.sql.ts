import type { CommissionRule } from "../../shared/domain/commission-rules";
import { isUniqueViolation } from "../../shared/storage/errors";
import { likeContains, migrate, type SqlDatabase, type SqlExecutor } from "../../shared/storage/sql";
import { pageOf, sqlPosition, SqlConditions, type Page, type SqlListed, type SqlQuery } from "../../shared/pagination";
import {
  DEFAULT_COOKIE_WINDOW_DAYS,
  type ApiKey,
  type Enrollment,
  type NewProgram,
  type Partner,
  type ProcessorConnection,
  type Program,
  type ProgramListFilter,
  type ProgramSettingsPatch,
  type ProgramsRepository,
  type EnrollmentStatus,
  type EnrolledPartner,
  type EnrolledPartnerDetail,
  type EnrollmentListFilter,
} from "./repository";
import { partnerEnrolledPayload } from "../../shared/events";
import { outboxTableMigration, SqlOutbox } from "../../shared/outbox/sql";

const MIGRATIONS = [
  `CREATE TABLE programs (
     id SERIAL PRIMARY KEY,
     name TEXT NOT NULL,
     currency TEXT NOT NULL,
     commission_type TEXT NOT NULL CHECK (commission_type IN ('percentage', 'flat')),
     commission_value BIGINT NOT NULL CHECK (commission_value >= 0),
     hold_days INTEGER NOT NULL DEFAULT 30,
     payment_tracking_mode TEXT NOT NULL DEFAULT 'processor_connect',
     allowed_origins TEXT[] NOT NULL DEFAULT '{}',
     processor_connection_status TEXT NOT NULL DEFAULT 'not_connected',
     processor_account_id TEXT UNIQUE,
     processor_charges_enabled BOOLEAN NOT NULL DEFAULT false,
     processor_payouts_enabled BOOLEAN NOT NULL DEFAULT false,
     processor_details_submitted BOOLEAN NOT NULL DEFAULT false,
     processor_connected_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now());
   CREATE TABLE api_keys (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL REFERENCES programs(id),
     prefix TEXT NOT NULL UNIQUE,
     secret_hash TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     retired_at TIMESTAMPTZ);
   CREATE TABLE partners (
     id SERIAL PRIMARY KEY,
     name TEXT NOT NULL,
     email TEXT,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now());
   CREATE TABLE enrollments (
     id SERIAL PRIMARY KEY,
     partner_id INTEGER NOT NULL REFERENCES partners(id),
     program_id INTEGER NOT NULL REFERENCES programs(id),
     status TEXT NOT NULL,
     referral_code TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     UNIQUE (program_id, referral_code),
     UNIQUE (program_id, partner_id));
   CREATE INDEX enrollments_approved ON enrollments (program_id) WHERE status = 'approved';`,
  `ALTER TABLE programs ADD COLUMN workspace_id INTEGER;
   CREATE INDEX programs_workspace ON programs (workspace_id);`,
  `ALTER TABLE programs ADD COLUMN recurring_commission_months INTEGER;
   ALTER TABLE programs ADD COLUMN test_mode BOOLEAN NOT NULL DEFAULT false;`,
  `ALTER TABLE programs ADD COLUMN self_referral_guard BOOLEAN NOT NULL DEFAULT true;
   ALTER TABLE partners ADD COLUMN customer_key TEXT;`,
  // The program lists (listProgramsQuery): a workspace's programs for the dashboard, every program for operators.
  `CREATE INDEX programs_workspace_list ON programs (workspace_id, created_at DESC, id DESC);
   CREATE INDEX programs_list ON programs (created_at DESC, id DESC);`,
  // partner.enrolled events, written with the enrollment's approval (shared/outbox).
  outboxTableMigration("programs_outbox"),
  // The partner portal: sign-in finds a partner by email, and lists the partner's programs.
  `CREATE INDEX partners_email ON partners (email);
   CREATE INDEX enrollments_partner ON enrollments (partner_id, id);`,
  // The partners list (listEnrollments): newest first per program, and per program and status.
  `CREATE INDEX enrollments_list ON enrollments (program_id, created_at DESC, id DESC);
   CREATE INDEX enrollments_list_status ON enrollments (program_id, status, created_at DESC, id DESC);`,
  // Settings (docs/merchants.md): the snippet's cookie window and the referral links' landing page; API keys get a
  // name and the time of their last use, and are listed per program (listApiKeys).
  `ALTER TABLE programs ADD COLUMN cookie_window_days INTEGER NOT NULL DEFAULT 90;
   ALTER TABLE programs ADD COLUMN default_landing_url TEXT;
   ALTER TABLE api_keys ADD COLUMN name TEXT;
   ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ;
   CREATE INDEX api_keys_program ON api_keys (program_id, id DESC);`,
  // The partner detail: the program team's private notes on a partner, per program (so on the enrollment).
  `ALTER TABLE enrollments ADD COLUMN notes TEXT NOT NULL DEFAULT '';`,
];

/** The exact query of listProgramsPage (exported so the query-plan test explains what runs). */
export function listProgramsQuery(f: ProgramListFilter): SqlQuery {
  const c = new SqlConditions();
  if (f.workspaceId !== undefined) c.add("workspace_id = ?", f.workspaceId);
  return c.page(f).query("*", "programs", f.limit);
}

const PROCESSOR_COLUMNS: Record<keyof ProcessorConnection, string> = {
  connectionStatus: "processor_connection_status",
  accountId: "processor_account_id",
  chargesEnabled: "processor_charges_enabled",
  payoutsEnabled: "processor_payouts_enabled",
  detailsSubmitted: "processor_details_submitted",
  connectedAt: "processor_connected_at",
};

const SETTINGS_COLUMNS: Record<keyof ProgramSettingsPatch, string> = {
  name: "name",
  currency: "currency",
  holdDays: "hold_days",
  cookieWindowDays: "cookie_window_days",
  defaultLandingUrl: "default_landing_url",
  allowedOrigins: "allowed_origins",
};

/** A row of programs. */
interface ProgramRow {
  id: number;
  workspace_id: number | null;
  name: string;
  currency: string;
  commission_type: CommissionRule["type"];
  commission_value: number;
  hold_days: number;
  recurring_commission_months: number | null;
  test_mode: boolean;
  self_referral_guard: boolean;
  payment_tracking_mode: Program["paymentTrackingMode"];
  allowed_origins: string[];
  cookie_window_days: number;
  default_landing_url: string | null;
  processor_connection_status: string;
  processor_account_id: string | null;
  processor_charges_enabled: boolean;
  processor_payouts_enabled: boolean;
  processor_details_submitted: boolean;
  processor_connected_at: Date | null;
  created_at: Date;
}

/** A row of api_keys. */
interface ApiKeyRow {
  id: number;
  program_id: number;
  name: string | null;
  prefix: string;
  secret_hash: string;
  created_at: Date;
  last_used_at: Date | null;
  retired_at: Date | null;
}

/** A row of partners. */
interface PartnerRow {
  id: number;
  name: string;
  email: string | null;
  customer_key: string | null;
  created_at: Date;
}

/** A row of enrollments. */
interface EnrollmentRow {
  id: number;
  partner_id: number;
  program_id: number;
  status: EnrollmentStatus;
  referral_code: string;
  /** The program team's private notes (only the partner detail reads them). */
  notes: string;
  created_at: Date;
}

/** A row of enrollments joined with its partner (listEnrollmentsQuery, findEnrolledPartners). */
interface EnrolledPartnerRow extends EnrollmentRow {
  partner_name: string;
  partner_email: string | null;
  partner_customer_key: string | null;
  partner_created_at: Date;
}

const toProgram = (r: ProgramRow): Program => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  currency: r.currency,
  commissionRule: r.commission_type === "percentage" ? { type: "percentage", basisPoints: r.commission_value } : { type: "flat", amountCents: r.commission_value },
  holdDays: r.hold_days,
  recurringCommissionMonths: r.recurring_commission_months,
  testMode: r.test_mode,
  selfReferralGuard: r.self_referral_guard,
  paymentTrackingMode: r.payment_tracking_mode,
  allowedOrigins: r.allowed_origins ?? [],
  cookieWindowDays: r.cookie_window_days,
  defaultLandingUrl: r.default_landing_url,
  processor: {
    connectionStatus: r.processor_connection_status,
    accountId: r.processor_account_id,
    chargesEnabled: r.processor_charges_enabled,
    payoutsEnabled: r.processor_payouts_enabled,
    detailsSubmitted: r.processor_details_submitted,
    connectedAt: r.processor_connected_at,
  },
  createdAt: r.created_at,
});

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  programId: r.program_id,
  name: r.name,
  prefix: r.prefix,
  secretHash: r.secret_hash,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  retiredAt: r.retired_at,
});

const toPartner = (r: PartnerRow): Partner => ({ id: r.id, name: r.name, email: r.email, customerKey: r.customer_key, createdAt: r.created_at });

const toEnrollment = (r: EnrollmentRow): Enrollment => ({
  id: r.id,
  partnerId: r.partner_id,
  programId: r.program_id,
  status: r.status,
  referralCode: r.referral_code,
  createdAt: r.created_at,
});

/** The columns of an enrollment `e` joined with its partner `p` (an EnrolledPartnerRow). */
const ENROLLED_PARTNER_COLUMNS = "e.*, p.name AS partner_name, p.email AS partner_email, p.customer_key AS partner_customer_key, p.created_at AS partner_created_at";

/** The exact query of listEnrollments (exported so the query-plan test explains what runs). */
export function listEnrollmentsQuery(programId: number, filter: EnrollmentListFilter): SqlQuery {
  const where = new SqlConditions().add("e.program_id = ?", programId);
  if (filter.status) where.add("e.status = ?", filter.status);
  if (filter.q !== undefined) {
    // A "contains" match cannot use a b-tree: the list's index is read newest first and the page's rows filtered.
    const pattern = likeContains(filter.q);
    where.add("(p.name ILIKE ? ESCAPE '\\' OR p.email ILIKE ? ESCAPE '\\' OR e.referral_code ILIKE ? ESCAPE '\\')", pattern, pattern, pattern);
  }
  where.page(filter, "e.created_at", "e.id");
  return where.query(ENROLLED_PARTNER_COLUMNS, "enrollments e JOIN partners p ON p.id = e.partner_id", filter.limit, "e.created_at", "e.id");
}

/** A row of enrollments joined with its partner (columns partner_*). */
const withPartner = (r: EnrolledPartnerRow): EnrolledPartner => ({
  ...toEnrollment(r),
  partner: toPartner({ id: r.partner_id, name: r.partner_name, email: r.partner_email, customer_key: r.partner_customer_key, created_at: r.partner_created_at }),
});

/** The same, with the program team's notes (the partner detail). */
const withPartnerAndNotes = (r: EnrolledPartnerRow): EnrolledPartnerDetail => ({ ...withPartner(r), notes: r.notes });

export class SqlProgramsRepository implements ProgramsRepository {
  readonly outbox: SqlOutbox;

  private constructor(private readonly db: SqlDatabase) {
    this.outbox = new SqlOutbox(db, "programs_outbox");
  }

  static async create(db: SqlDatabase): Promise<SqlProgramsRepository> {
    await migrate(db, "programs", MIGRATIONS);
    return new SqlProgramsRepository(db);
  }

  async createProgram(p: NewProgram): Promise<Program> {
    const value = p.commissionRule.type === "percentage" ? p.commissionRule.basisPoints : p.commissionRule.amountCents;
    const [row] = await this.db.query<ProgramRow>(
      `INSERT INTO programs (name, currency, commission_type, commission_value, hold_days, payment_tracking_mode, allowed_origins, workspace_id,
         recurring_commission_months, test_mode, self_referral_guard, cookie_window_days, default_landing_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
      [
        p.name,
        p.currency,
        p.commissionRule.type,
        value,
        p.holdDays,
        p.paymentTrackingMode,
        p.allowedOrigins,
        p.workspaceId,
        p.recurringCommissionMonths,
        p.testMode,
        p.selfReferralGuard,
        p.cookieWindowDays ?? DEFAULT_COOKIE_WINDOW_DAYS,
        p.defaultLandingUrl ?? null,
      ],
    );
    return toProgram(row);
  }

  async getProgram(id: number): Promise<Program | null> {
    const [row] = await this.db.query<ProgramRow>("SELECT * FROM programs WHERE id = $1", [id]);
    return row ? toProgram(row) : null;
  }

  async listProgramsPage(f: ProgramListFilter): Promise<Page<Program>> {
    const q = listProgramsQuery(f);
    return pageOf(await this.db.query<SqlListed<ProgramRow>>(q.text, q.values), f.limit, sqlPosition, toProgram);
  }

  async findProgramByProcessorAccount(accountId: string): Promise<Program | null> {
    const [row] = await this.db.query<ProgramRow>("SELECT * FROM programs WHERE processor_account_id = $1", [accountId]);
    return row ? toProgram(row) : null;
  }

  async updateProcessorConnection(id: number, patch: Partial<ProcessorConnection>): Promise<Program | null> {
    const entries = Object.entries(patch).filter(([, v]) => v !== undefined) as [keyof ProcessorConnection, unknown][];
    if (!entries.length) return this.getProgram(id);
    const sets = entries.map(([k], i) => `${PROCESSOR_COLUMNS[k]} = $${i + 2}`).join(", ");
    const [row] = await this.db.query<ProgramRow>(`UPDATE programs SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
    return row ? toProgram(row) : null;
  }

  async updateProgramSettings(id: number, patch: ProgramSettingsPatch): Promise<Program | null> {
    const entries = Object.entries(patch).filter(([, v]) => v !== undefined) as [keyof ProgramSettingsPatch, unknown][];
    if (!entries.length) return this.getProgram(id);
    const sets = entries.map(([k], i) => `${SETTINGS_COLUMNS[k]} = $${i + 2}`).join(", ");
    const [row] = await this.db.query<ProgramRow>(`UPDATE programs SET ${sets} WHERE id = $1 RETURNING *`, [id, ...entries.map(([, v]) => v)]);
    return row ? toProgram(row) : null;
  }

  async createApiKey(k: { programId: number; prefix: string; secretHash: string; name?: string | null }): Promise<ApiKey> {
    const [row] = await this.db.query<ApiKeyRow>("INSERT INTO api_keys (program_id, prefix, secret_hash, name) VALUES ($1, $2, $3, $4) RETURNING *", [
      k.programId,
      k.prefix,
      k.secretHash,
      k.name ?? null,
    ]);
    return toApiKey(row);
  }

  async listApiKeys(programId: number): Promise<ApiKey[]> {
    return (await this.db.query<ApiKeyRow>("SELECT * FROM api_keys WHERE program_id = $1 ORDER BY id DESC", [programId])).map(toApiKey);
  }

  async recordApiKeyUse(id: number, at: Date): Promise<void> {
    await this.db.query("UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)", [id, at]);
  }

  async findApiKeyByPrefix(prefix: string): Promise<ApiKey | null> {
    const [row] = await this.db.query<ApiKeyRow>("SELECT * FROM api_keys WHERE prefix = $1", [prefix]);
    return row ? toApiKey(row) : null;
  }

  async retireApiKey(id: number, at: Date, programId?: number): Promise<ApiKey | null> {
    const [row] = await this.db.query<ApiKeyRow>("UPDATE api_keys SET retired_at = COALESCE(retired_at, $2) WHERE id = $1 AND ($3::int IS NULL OR program_id = $3) RETURNING *", [
      id,
      at,
      programId ?? null,
    ]);
    return row ? toApiKey(row) : null;
  }

  async createPartner(p: { name: string; email: string | null; customerKey?: string | null }): Promise<Partner> {
    const [row] = await this.db.query<PartnerRow>("INSERT INTO partners (name, email, customer_key) VALUES ($1, $2, $3) RETURNING *", [p.name, p.email, p.customerKey ?? null]);
    return toPartner(row);
  }

  async getPartner(id: number): Promise<Partner | null> {
    const [row] = await this.db.query<PartnerRow>("SELECT * FROM partners WHERE id = $1", [id]);
    return row ? toPartner(row) : null;
  }

  async createEnrollment(e: { partnerId: number; programId: number; referralCode: string; status: string }): Promise<Enrollment | null> {
    try {
      // A unique violation rolls the transaction back: no enrollment, no event.
      return await this.db.transaction(async (q) => {
        const [row] = await q.query<EnrollmentRow>("INSERT INTO enrollments (partner_id, program_id, referral_code, status) VALUES ($1, $2, $3, $4) RETURNING *", [
          e.partnerId,
          e.programId,
          e.referralCode,
          e.status,
        ]);
        const enrollment = toEnrollment(row);
        if (enrollment.status === "approved") await this.enqueueEnrolled(q, enrollment, enrollment.createdAt);
        return enrollment;
      });
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  async setEnrollmentStatus(
    programId: number,
    partnerId: number,
    status: EnrollmentStatus,
    now: Date,
    allowedFrom?: readonly EnrollmentStatus[],
  ): Promise<{ enrollment: Enrollment; enrolled: boolean; changed: boolean } | null> {
    return this.db.transaction(async (q) => {
      // Locked, so two concurrent approvals write one event, and two concurrent decisions apply one.
      const [before] = await q.query<EnrollmentRow>("SELECT * FROM enrollments WHERE program_id = $1 AND partner_id = $2 FOR UPDATE", [programId, partnerId]);
      if (!before) return null;
      if (before.status === status || (allowedFrom && !allowedFrom.includes(before.status))) return { enrollment: toEnrollment(before), enrolled: false, changed: false };
      const [row] = await q.query<EnrollmentRow>("UPDATE enrollments SET status = $3 WHERE program_id = $1 AND partner_id = $2 RETURNING *", [programId, partnerId, status]);
      const enrollment = toEnrollment(row);
      const enrolled = status === "approved";
      if (enrolled) await this.enqueueEnrolled(q, enrollment, now);
      return { enrollment, enrolled, changed: true };
    });
  }

  private async enqueueEnrolled(q: SqlExecutor, enrollment: Enrollment, at: Date): Promise<void> {
    const [partner] = await q.query<{ name: string }>("SELECT name FROM partners WHERE id = $1", [enrollment.partnerId]);
    await this.outbox.enqueue(q, "partner.enrolled", partnerEnrolledPayload(enrollment, partner?.name ?? "", at), at);
  }

  async findEnrollmentByReferralCode(programId: number, referralCode: string): Promise<Enrollment | null> {
    const [row] = await this.db.query<EnrollmentRow>("SELECT * FROM enrollments WHERE program_id = $1 AND referral_code = $2", [programId, referralCode]);
    return row ? toEnrollment(row) : null;
  }

  async findEnrollment(programId: number, partnerId: number): Promise<Enrollment | null> {
    const [row] = await this.db.query<EnrollmentRow>("SELECT * FROM enrollments WHERE program_id = $1 AND partner_id = $2", [programId, partnerId]);
    return row ? toEnrollment(row) : null;
  }

  async hasApprovedEnrollment(programId: number): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM enrollments WHERE program_id = $1 AND status = 'approved' LIMIT 1", [programId]);
    return rows.length > 0;
  }

  async findPartnersByEmail(email: string): Promise<Partner[]> {
    return (await this.db.query<PartnerRow>("SELECT * FROM partners WHERE email = $1 ORDER BY id", [email])).map(toPartner);
  }

  async listPartnerEnrollments(partnerId: number): Promise<Enrollment[]> {
    return (await this.db.query<EnrollmentRow>("SELECT * FROM enrollments WHERE partner_id = $1 ORDER BY id", [partnerId])).map(toEnrollment);
  }
  async listEnrollments(programId: number, filter: EnrollmentListFilter): Promise<Page<EnrolledPartner>> {
    const q = listEnrollmentsQuery(programId, filter);
    return pageOf(await this.db.query<SqlListed<EnrolledPartnerRow>>(q.text, q.values), filter.limit, sqlPosition, withPartner);
  }

  async getEnrolledPartner(programId: number, partnerId: number): Promise<EnrolledPartnerDetail | null> {
    const [row] = await this.db.query<EnrolledPartnerRow>(
      `SELECT ${ENROLLED_PARTNER_COLUMNS} FROM enrollments e JOIN partners p ON p.id = e.partner_id WHERE e.program_id = $1 AND e.partner_id = $2`,
      [programId, partnerId],
    );
    return row ? withPartnerAndNotes(row) : null;
  }

  async setEnrollmentNotes(programId: number, partnerId: number, notes: string): Promise<EnrolledPartnerDetail | null> {
    // One statement: the write and the read of the row it wrote, with its partner.
    const [row] = await this.db.query<EnrolledPartnerRow>(
      `WITH e AS (UPDATE enrollments SET notes = $3 WHERE program_id = $1 AND partner_id = $2 RETURNING *)
       SELECT ${ENROLLED_PARTNER_COLUMNS} FROM e JOIN partners p ON p.id = e.partner_id`,
      [programId, partnerId, notes],
    );
    return row ? withPartnerAndNotes(row) : null;
  }

  async findEnrolledPartners(programId: number, partnerIds: readonly number[]): Promise<EnrolledPartner[]> {
    if (!partnerIds.length) return [];
    const rows = await this.db.query<EnrolledPartnerRow>(
      `SELECT ${ENROLLED_PARTNER_COLUMNS} FROM enrollments e JOIN partners p ON p.id = e.partner_id WHERE e.program_id = $1 AND e.partner_id = ANY($2::int[])`,
      [programId, partnerIds],
    );
    return rows.map(withPartner);
  }
}
