import { leadCreatedPayload } from "../../shared/events";
import { outboxTableMigration, SqlOutbox } from "../../shared/outbox/sql";
import { mergeRows, wantsDays, type RollupDrift, type StatsKeys, type StatsQuery, type StatsRows, type TopPartners } from "../../shared/domain/stats";
import { migrate, type SqlDatabase } from "../../shared/storage/sql";
import {
  BREAKDOWN_KEY,
  breakdownExpansion,
  pastRevision,
  ROLLUP_DAY,
  rollupCoveringMigration,
  rollupFunction,
  rollupMigration,
  rollupWhere,
  rollupsDrift,
  utcDay,
  type RollupDefinition,
} from "../../shared/storage/rollup-sql";
import { ClosedDaysCache } from "../../shared/storage/closed-days";
import { PackedDayCache, rankPackedRange, type PackedRangeRow } from "../../shared/storage/running-packed";
import {
  extendRunningTotals,
  runningCoveringKeyMigration,
  runningDrift,
  runningFiguresQuery,
  runningMigration,
  runningPackedMigration,
  runningPackedRevisionMigration,
  topPartnersQuery,
} from "../../shared/storage/running-sql";
import type {
  ActivityFigures,
  AttributionRepository,
  Click,
  CouponCode,
  CouponCodeListFilter,
  Lead,
  NewClick,
  NewCouponCode,
  NewLead,
  ProcessorCustomerLink,
  TestEventStats,
  TestEventSummary,
  LeadListFilter,
} from "./repository";
import { NO_CLICK_DETAILS } from "./repository";
import type { BreakdownRow } from "../../shared/domain/breakdowns";
import { pageOf, sqlPosition, SqlConditions, type Page, type SqlListed, type SqlQuery } from "../../shared/pagination";

/** Per program, a revision bumped by every change of a past day's clicks or leads breakdown (closed-days.ts). */
const BREAKDOWN_CHANGES = "attribution_breakdown_changes";

const MIGRATIONS = [
  `CREATE TABLE clicks (
     id SERIAL PRIMARY KEY,
     click_id TEXT NOT NULL UNIQUE,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     referral_code TEXT NOT NULL,
     is_test BOOLEAN NOT NULL DEFAULT false,
     landing_url TEXT,
     referrer TEXT,
     user_agent TEXT,
     timestamp TIMESTAMPTZ NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now());
   CREATE INDEX clicks_test ON clicks (program_id, id DESC) WHERE is_test;
   CREATE TABLE leads (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     customer_key TEXT NOT NULL,
     email TEXT,
     click_id TEXT,
     partner_id INTEGER,
     is_test BOOLEAN NOT NULL DEFAULT false,
     timestamp TIMESTAMPTZ NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     UNIQUE (program_id, customer_key));
   CREATE INDEX leads_email ON leads (program_id, email, id DESC) WHERE partner_id IS NOT NULL;
   CREATE INDEX leads_test ON leads (program_id, id DESC) WHERE is_test;
   CREATE TABLE processor_customers (
     program_id INTEGER NOT NULL,
     processor_customer_id TEXT NOT NULL,
     partner_id INTEGER NOT NULL,
     click_id TEXT,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     PRIMARY KEY (program_id, processor_customer_id));`,
  `ALTER TABLE leads ADD COLUMN unattributed_reason TEXT;`,
  // The customers lists (listLeadsQuery): newest first per program, and per partner of a program.
  `CREATE INDEX leads_program_list ON leads (program_id, created_at DESC, id DESC);
   CREATE INDEX leads_program_partner_list ON leads (program_id, partner_id, created_at DESC, id DESC);`,
  // lead.created events, written with the lead (shared/outbox).
  outboxTableMigration("attribution_outbox"),
  // The partner portal's click count: an index-only count of one partner's live clicks.
  `CREATE INDEX clicks_partner_live ON clicks (program_id, partner_id) WHERE NOT is_test;`,
  // The overview's figures (activityStats): a range scan per program and mode, partner in the index for the per-partner sums.
  `CREATE INDEX clicks_stats ON clicks (program_id, is_test, timestamp, partner_id);
   CREATE INDEX leads_stats ON leads (program_id, is_test, timestamp, partner_id) WHERE partner_id IS NOT NULL;`,
  // Partners' coupon codes (rule 5): a code key and a Stripe promotion code are live once per program; sales look
  // codes up live or archived (an archived one says so); the lists go newest first per program and per partner.
  `CREATE TABLE coupon_codes (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     code TEXT NOT NULL,
     code_key TEXT NOT NULL,
     stripe_promotion_code_id TEXT,
     stripe_coupon_id TEXT,
     source TEXT NOT NULL CHECK (source IN ('manual', 'stripe_existing', 'stripe_created')),
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     archived_at TIMESTAMPTZ);
   CREATE UNIQUE INDEX coupon_codes_live_key ON coupon_codes (program_id, code_key) WHERE archived_at IS NULL;
   CREATE UNIQUE INDEX coupon_codes_live_promotion ON coupon_codes (program_id, stripe_promotion_code_id) WHERE archived_at IS NULL AND stripe_promotion_code_id IS NOT NULL;
   CREATE INDEX coupon_codes_key ON coupon_codes (program_id, code_key, id);
   CREATE INDEX coupon_codes_promotion ON coupon_codes (program_id, stripe_promotion_code_id, id) WHERE stripe_promotion_code_id IS NOT NULL;
   CREATE INDEX coupon_codes_program_list ON coupon_codes (program_id, created_at DESC, id DESC);
   CREATE INDEX coupon_codes_program_partner_list ON coupon_codes (program_id, partner_id, created_at DESC, id DESC);`,
  // The overview's and the portal's figures from per (program, partner, UTC day) counters kept by triggers
  // (activityStats, countPartnerClicks); the range scans over the clicks and leads go.
  `${rollupMigration(activityDaily("clicks", true))}
   ${rollupMigration(activityDaily("leads"))}
   DROP INDEX clicks_stats;
   DROP INDEX leads_stats;
   DROP INDEX clicks_partner_live;`,
  // The overview's partner ranking by clicks: each partner's clicks summed through each day (built by the attribution service's job).
  runningMigration(activityDaily("clicks", true)),
  // The ranking's rows read from the running totals' key alone (index-only).
  runningCoveringKeyMigration(activityDaily("clicks", true)),
  // The leads' figures read from the rollup's indexes alone (a page of partners, a range of days), however its rows
  // lie; clicks_daily keeps plain indexes (rollup-sql.ts, rollupCoveringMigration).
  rollupCoveringMigration(activityDaily("leads")),
  // The partners' figures (a page of partners over all time, the overview's ranked partners) from two running rows
  // a partner: leads summed through each day as clicks are (built by the same job), read from their key alone.
  `${runningMigration(activityDaily("leads"))}
   ${runningCoveringKeyMigration(activityDaily("leads"))}`,
  // The ranking's days packed: every partner's clicks through each day in one value (running-packed.ts).
  runningPackedMigration(activityDaily("clicks", true)),
  // A revision per packed day: the service keeps the days it has read and leaves their bytes out of the ranking's query.
  runningPackedRevisionMigration(activityDaily("clicks", true)),
  // A click's details (attribution/click-details.ts; the address only as its daily hash). A bot's or a hosting
  // network's click is stored but not counted: clicks_daily's trigger leaves it out from here on (none is stored before
  // this migration).
  `ALTER TABLE clicks ADD COLUMN country TEXT, ADD COLUMN device_type TEXT, ADD COLUMN browser TEXT, ADD COLUMN os TEXT,
     ADD COLUMN is_bot BOOLEAN NOT NULL DEFAULT false, ADD COLUMN hosting_network BOOLEAN NOT NULL DEFAULT false, ADD COLUMN referrer_domain TEXT, ADD COLUMN ad_networks JSONB, ADD COLUMN utm JSONB,
     ADD COLUMN paid BOOLEAN NOT NULL DEFAULT false, ADD COLUMN address_hash TEXT;
   ${rollupFunction(activityDaily("clicks"))}
   CREATE INDEX clicks_details_kept ON clicks (timestamp) WHERE device_type IS NOT NULL;`,
  // Traffic breakdowns (shared/domain/breakdowns.ts): a lead keeps the dimensions of the click that attributed it
  // (those of the leads stored so far from their clicks), and clicks and attributed leads are counted per (program,
  // partner, mode, UTC day, dimension, value) by triggers, as clicks_daily and leads_daily are.
  `ALTER TABLE leads ADD COLUMN click_country TEXT, ADD COLUMN click_device_type TEXT, ADD COLUMN click_browser TEXT, ADD COLUMN click_referrer_domain TEXT;
   UPDATE leads l SET click_country = c.country, click_device_type = c.device_type, click_browser = c.browser, click_referrer_domain = c.referrer_domain
     FROM clicks c WHERE c.click_id = l.click_id AND c.program_id = l.program_id AND l.partner_id IS NOT NULL
       AND num_nonnulls(c.country, c.device_type, c.browser, c.referrer_domain) > 0;
   CREATE TABLE ${BREAKDOWN_CHANGES} (program_id INTEGER PRIMARY KEY, revision BIGINT NOT NULL);
   ${rollupMigration(breakdownDaily("clicks"))}
   ${rollupMigration(breakdownDaily("leads"))}`,
];

/**
 * clicks_breakdown_daily and leads_breakdown_daily: the clicks clicks_daily counts and the attributed leads per
 * (program, partner, mode, UTC day, dimension, value), each once per dimension (shared/domain/breakdowns.ts).
 *
 * Clicks: only an insert counts (or a delete takes back). The one update a click ever gets is the erasure of its
 * details after CLICK_DETAIL_RETENTION_DAYS, and the breakdowns are kept for ever: a click's dimensions counted on
 * its day stay counted, so the trigger leaves updates out. Reconcile then compares only the days whose clicks
 * cannot have been erased yet (`detailsFrom`, a YYYY-MM-DD day: CLICK_DETAIL_RETENTION_DAYS before today and later):
 * an older day's rollup counts the values the erasure cleared from its clicks, which is not drift.
 */
function breakdownDaily(source: "clicks" | "leads", detailsFrom?: string): RollupDefinition {
  const activity = activityDaily(source);
  const columns =
    source === "clicks"
      ? { country: "country", deviceType: "device_type", browser: "browser", referrerDomain: "referrer_domain" }
      : { country: "click_country", deviceType: "click_device_type", browser: "click_browser", referrerDomain: "click_referrer_domain" };
  return {
    table: `${source}_breakdown_daily`,
    source,
    key: [...activity.key, ...BREAKDOWN_KEY],
    figures: activity.figures,
    where: activity.where,
    expand: breakdownExpansion(columns),
    // Read along the key (program, partner, mode, day): the program's row of all partners for the overview, one
    // partner's for their detail and the portal; the figures beside it.
    rangeIndex: [],
    pastChanges: BREAKDOWN_CHANGES,
    ...(source === "clicks" ? { events: ["INSERT", "DELETE"] as const } : {}),
    ...(source === "clicks" && detailsFrom ? { driftFrom: `'${detailsFrom}'::date` } : {}),
  };
}

/**
 * The exact query of breakdowns (exported so the query-plan test explains what runs): clicks and leads summed per
 * dimension and value over the range, one statement, each branch a range scan of its rollup's key.
 */
export function breakdownsQuery(q: StatsQuery): SqlQuery {
  const w = rollupWhere(q, "is_test", "days");
  const figures = { clicks: "sum(clicks)::int AS clicks, 0 AS leads", leads: "0 AS clicks, sum(leads)::int AS leads" };
  const branch = (source: "clicks" | "leads") => `SELECT dimension, value, ${figures[source]} FROM ${source}_breakdown_daily WHERE ${w.where} GROUP BY 1, 2`;
  return { text: `${branch("clicks")} UNION ALL ${branch("leads")}`, values: w.params };
}

/**
 * clicks_daily and leads_daily: clicks (visits only: repository.ts countsAsTraffic) and attributed leads per (program,
 * partner, mode, UTC day of the event). `withBots`: clicks_daily as the migrations before the clicks' details built it.
 */
function activityDaily(source: "clicks" | "leads", withBots = false): RollupDefinition {
  return {
    table: `${source}_daily`,
    source,
    key: [
      { name: "program_id", type: "INTEGER", expr: "program_id" },
      { name: "partner_id", type: "INTEGER", expr: "partner_id" },
      { name: "is_test", type: "BOOLEAN", expr: "is_test" },
      { name: "day", type: "DATE", expr: utcDay("timestamp") },
    ],
    figures: [{ name: source, type: "INTEGER", expr: "1" }],
    where: source === "leads" ? "partner_id IS NOT NULL" : withBots ? undefined : "NOT (is_bot OR hosting_network)",
    rangeIndex: ["program_id", "is_test", "day"],
    running: { table: `${source}_running`, figure: source, packed: source === "clicks" },
  };
}

/** The partner portal's click count (exported so the query-plan test explains what runs): $1 program, $2 partner. */
export const COUNT_PARTNER_CLICKS_SQL = "SELECT COALESCE(sum(clicks), 0)::int AS n FROM clicks_daily WHERE program_id = $1 AND partner_id = $2 AND NOT is_test";

/** The exact query of listLeadsPage (exported so the query-plan test explains what runs). */
export function listLeadsQuery(f: LeadListFilter): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.test !== undefined) c.add("is_test = ?", f.test);
  return c.page(f).query("*", "leads", f.limit);
}

/** The exact query of topPartners (exported so the query-plan test explains what runs): clicks. */
export const clicksTopPartnersQuery = (q: StatsQuery, heldRevisions: readonly string[] = []): SqlQuery => topPartnersQuery(activityDaily("clicks"), q, null, [], heldRevisions);

/**
 * The exact queries of activityStats (exported so the query-plan test explains what runs): the days from the
 * rollups (none for all time), the partners from the running totals.
 */
export function activityStatsQueries(q: StatsQuery): Record<"clickDays" | "leadDays" | "clickPartners" | "leadPartners", SqlQuery | null> {
  const daily = wantsDays(q);
  const days = (table: "clicks" | "leads") => {
    const w = rollupWhere(q, "is_test", "days");
    return { text: `SELECT ${ROLLUP_DAY} AS day, sum(${table})::int AS ${table} FROM ${table}_daily WHERE ${w.where} GROUP BY 1`, values: w.params };
  };
  return {
    clickDays: daily ? days("clicks") : null,
    leadDays: daily ? days("leads") : null,
    clickPartners: runningFiguresQuery(activityDaily("clicks"), q),
    leadPartners: runningFiguresQuery(activityDaily("leads"), q),
  };
}

/** The exact query of listCouponCodesPage. */
export function listCouponCodesQuery(f: CouponCodeListFilter): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.archived !== undefined) c.add(f.archived ? "archived_at IS NOT NULL" : "archived_at IS NULL");
  return c.page(f).query("*", "coupon_codes", f.limit);
}

/** A row of clicks. */
interface ClickRow {
  id: number;
  click_id: string;
  program_id: number;
  partner_id: number;
  referral_code: string;
  is_test: boolean;
  landing_url: string | null;
  referrer: string | null;
  user_agent: string | null;
  timestamp: Date;
  created_at: Date;
  country: string | null;
  device_type: string | null;
  browser: string | null;
  os: string | null;
  is_bot: boolean;
  hosting_network: boolean;
  referrer_domain: string | null;
  ad_networks: string[] | null;
  utm: Record<string, string> | null;
  paid: boolean;
  address_hash: string | null;
}

/** A row of leads. */
interface LeadRow {
  id: number;
  program_id: number;
  customer_key: string;
  email: string | null;
  click_id: string | null;
  partner_id: number | null;
  unattributed_reason: string | null;
  is_test: boolean;
  timestamp: Date;
  created_at: Date;
}

/** A row of processor_customers. */
interface ProcessorCustomerRow {
  program_id: number;
  processor_customer_id: string;
  partner_id: number;
  click_id: string | null;
}

/** A row of coupon_codes. */
interface CouponCodeRow {
  id: number;
  program_id: number;
  partner_id: number;
  code: string;
  code_key: string;
  stripe_promotion_code_id: string | null;
  stripe_coupon_id: string | null;
  source: CouponCode["source"];
  created_at: Date;
  archived_at: Date | null;
}

const toCouponCode = (r: CouponCodeRow): CouponCode => ({
  id: r.id,
  programId: r.program_id,
  partnerId: r.partner_id,
  code: r.code,
  codeKey: r.code_key,
  stripePromotionCodeId: r.stripe_promotion_code_id,
  stripeCouponId: r.stripe_coupon_id,
  source: r.source,
  createdAt: r.created_at,
  archivedAt: r.archived_at,
});

const toClick = (r: ClickRow): Click => ({
  id: r.id,
  clickId: r.click_id,
  programId: r.program_id,
  partnerId: r.partner_id,
  referralCode: r.referral_code,
  isTest: r.is_test,
  landingUrl: r.landing_url,
  referrer: r.referrer,
  userAgent: r.user_agent,
  timestamp: r.timestamp,
  createdAt: r.created_at,
  details: {
    country: r.country,
    deviceType: r.device_type,
    browser: r.browser,
    os: r.os,
    isBot: r.is_bot,
    hostingNetwork: r.hosting_network,
    referrerDomain: r.referrer_domain,
    adNetworks: r.ad_networks,
    utm: r.utm,
    paid: r.paid,
    addressHash: r.address_hash,
  },
});

const CLICK_COLUMNS =
  "click_id, program_id, partner_id, referral_code, is_test, landing_url, referrer, user_agent, timestamp, country, device_type, browser, os, is_bot, hosting_network, referrer_domain, ad_networks, utm, paid, address_hash";

/** A new click's values in CLICK_COLUMNS' order. */
function clickValues(c: NewClick): unknown[] {
  const d = c.details ?? NO_CLICK_DETAILS;
  return [
    ...[c.clickId, c.programId, c.partnerId, c.referralCode, c.isTest, c.landingUrl, c.referrer, c.userAgent, c.timestamp],
    ...[
      d.country,
      d.deviceType,
      d.browser,
      d.os,
      d.isBot,
      d.hostingNetwork,
      d.referrerDomain,
      d.adNetworks && JSON.stringify(d.adNetworks),
      d.utm && JSON.stringify(d.utm),
      d.paid,
      d.addressHash,
    ],
  ];
}
const CLICK_VALUE_COUNT = CLICK_COLUMNS.split(",").length;

const toLead = (r: LeadRow): Lead => ({
  id: r.id,
  programId: r.program_id,
  customerKey: r.customer_key,
  email: r.email,
  clickId: r.click_id,
  partnerId: r.partner_id,
  unattributedReason: r.unattributed_reason,
  isTest: r.is_test,
  timestamp: r.timestamp,
  createdAt: r.created_at,
});

export class SqlAttributionRepository implements AttributionRepository {
  readonly outbox: SqlOutbox;
  /** The ranking's packed days read so far (running-packed.ts). */
  private readonly packedDays = new PackedDayCache();
  /** The program's breakdowns of closed days read so far (closed-days.ts). */
  private readonly breakdownDays = new ClosedDaysCache<BreakdownRow<ActivityFigures>>({
    revision: (programId) => pastRevision(this.db, BREAKDOWN_CHANGES, programId),
    rows: (q) => {
      const query = breakdownsQuery(q);
      return this.db.query<BreakdownRow<ActivityFigures>>(query.text, query.values);
    },
  });

  private constructor(private readonly db: SqlDatabase) {
    this.outbox = new SqlOutbox(db, "attribution_outbox");
  }

  static async create(db: SqlDatabase): Promise<SqlAttributionRepository> {
    await migrate(db, "attribution", MIGRATIONS);
    return new SqlAttributionRepository(db);
  }

  async createClick(c: NewClick): Promise<Click> {
    const [row] = await this.db.query<ClickRow>(
      `INSERT INTO clicks (${CLICK_COLUMNS}) VALUES (${Array.from({ length: CLICK_VALUE_COUNT }, (_, i) => `$${i + 1}`).join(", ")}) RETURNING *`,
      clickValues(c),
    );
    return toClick(row);
  }

  async createClicks(clicks: NewClick[]): Promise<Click[]> {
    if (!clicks.length) return [];
    // One multi-row INSERT: one statement is one transaction, so the batch is stored whole or not at all.
    const values: unknown[] = [];
    const rows = clicks.map((c) => {
      const at = values.length;
      values.push(...clickValues(c));
      return `(${Array.from({ length: CLICK_VALUE_COUNT }, (_, i) => `$${at + i + 1}`).join(", ")})`;
    });
    // Only what the database adds comes back: the rest is what was sent (the busiest write: no JSON to parse back).
    const stored = await this.db.query<Pick<ClickRow, "click_id" | "id" | "created_at">>(
      `INSERT INTO clicks (${CLICK_COLUMNS})
       VALUES ${rows.join(", ")} RETURNING click_id, id, created_at`,
      values,
    );
    // RETURNING's order is not promised by SQL: matched by the unique click id.
    const byClickId = new Map(stored.map((r) => [r.click_id, r]));
    return clicks.map((c) => {
      const { id, created_at } = byClickId.get(c.clickId)!;
      return { ...c, details: { ...(c.details ?? NO_CLICK_DETAILS) }, id, createdAt: created_at };
    });
  }

  async findClick(programId: number, clickId: string): Promise<Click | null> {
    const [row] = await this.db.query<ClickRow>("SELECT * FROM clicks WHERE click_id = $1 AND program_id = $2", [clickId, programId]);
    return row ? toClick(row) : null;
  }

  async recordLead(l: NewLead): Promise<{ lead: Lead; created: boolean }> {
    // The lead and, when it is new, its lead.created event: one transaction.
    return this.db.transaction(async (q) => {
      // xmax = 0 tells a fresh insert from an update of an existing row.
      const [row] = await q.query<LeadRow & { inserted: boolean }>(
        `INSERT INTO leads (program_id, customer_key, email, click_id, partner_id, is_test, timestamp, unattributed_reason,
         click_country, click_device_type, click_browser, click_referrer_domain)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (program_id, customer_key) DO UPDATE SET
         email = COALESCE(leads.email, EXCLUDED.email),
         click_id = CASE WHEN leads.partner_id IS NULL AND EXCLUDED.partner_id IS NOT NULL THEN EXCLUDED.click_id ELSE leads.click_id END,
         click_country = CASE WHEN leads.partner_id IS NULL AND EXCLUDED.partner_id IS NOT NULL THEN EXCLUDED.click_country ELSE leads.click_country END,
         click_device_type = CASE WHEN leads.partner_id IS NULL AND EXCLUDED.partner_id IS NOT NULL THEN EXCLUDED.click_device_type ELSE leads.click_device_type END,
         click_browser = CASE WHEN leads.partner_id IS NULL AND EXCLUDED.partner_id IS NOT NULL THEN EXCLUDED.click_browser ELSE leads.click_browser END,
         click_referrer_domain = CASE WHEN leads.partner_id IS NULL AND EXCLUDED.partner_id IS NOT NULL THEN EXCLUDED.click_referrer_domain ELSE leads.click_referrer_domain END,
         partner_id = COALESCE(leads.partner_id, EXCLUDED.partner_id),
         unattributed_reason = CASE WHEN COALESCE(leads.partner_id, EXCLUDED.partner_id) IS NULL
           THEN COALESCE(leads.unattributed_reason, EXCLUDED.unattributed_reason) END
       RETURNING *, (xmax = 0) AS inserted`,
        [
          l.programId,
          l.customerKey,
          l.email,
          l.clickId,
          l.partnerId,
          l.isTest,
          l.timestamp,
          l.unattributedReason ?? null,
          l.clickTraffic?.country ?? null,
          l.clickTraffic?.deviceType ?? null,
          l.clickTraffic?.browser ?? null,
          l.clickTraffic?.referrerDomain ?? null,
        ],
      );
      const lead = toLead(row);
      if (row.inserted) await this.outbox.enqueue(q, "lead.created", leadCreatedPayload(lead), lead.createdAt);
      return { lead, created: row.inserted };
    });
  }

  async findLeadByCustomerKey(programId: number, customerKey: string): Promise<Lead | null> {
    const [row] = await this.db.query<LeadRow>("SELECT * FROM leads WHERE program_id = $1 AND customer_key = $2", [programId, customerKey]);
    return row ? toLead(row) : null;
  }

  async findAttributedLeadByEmail(programId: number, email: string): Promise<Lead | null> {
    const [row] = await this.db.query<LeadRow>("SELECT * FROM leads WHERE program_id = $1 AND email = $2 AND partner_id IS NOT NULL ORDER BY id DESC LIMIT 1", [programId, email]);
    return row ? toLead(row) : null;
  }

  async findProcessorCustomer(programId: number, processorCustomerId: string): Promise<ProcessorCustomerLink | null> {
    const [row] = await this.db.query<ProcessorCustomerRow>("SELECT * FROM processor_customers WHERE program_id = $1 AND processor_customer_id = $2", [programId, processorCustomerId]);
    return row ? { programId: row.program_id, processorCustomerId: row.processor_customer_id, partnerId: row.partner_id, clickId: row.click_id } : null;
  }

  async linkProcessorCustomer(link: ProcessorCustomerLink): Promise<void> {
    await this.db.query(
      `INSERT INTO processor_customers (program_id, processor_customer_id, partner_id, click_id)
       VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
      [link.programId, link.processorCustomerId, link.partnerId, link.clickId],
    );
  }

  async testEventStats(programId: number, limit: number): Promise<TestEventSummary> {
    // One statement for both kinds (a round trip fewer); each branch is served by its partial index (clicks_test, leads_test).
    const rows = await this.db.query<{ kind: "click" | "lead"; id: number; timestamp: Date; created_at: Date }>(
      `(SELECT 'click' AS kind, id, timestamp, created_at FROM clicks WHERE program_id = $1 AND is_test ORDER BY id DESC LIMIT $2)
       UNION ALL
       (SELECT 'lead' AS kind, id, timestamp, created_at FROM leads WHERE program_id = $1 AND is_test ORDER BY id DESC LIMIT $2)`,
      [programId, limit],
    );
    const summarize = (kind: "click" | "lead"): TestEventStats => {
      const found = rows.filter((r) => r.kind === kind);
      // The newest by id, not by position: UNION ALL does not promise to keep each branch's order.
      const latest = found.reduce<(typeof found)[number] | null>((a, r) => (a === null || Number(r.id) > Number(a.id) ? r : a), null);
      return { count: found.length, latest: latest ? { id: Number(latest.id), timestamp: latest.timestamp, createdAt: latest.created_at } : null };
    };
    return { clicks: summarize("click"), leads: summarize("lead") };
  }

  async activityStats(q: StatsQuery): Promise<StatsRows<ActivityFigures>> {
    const zero = { clicks: 0, leads: 0 };
    const queries = activityStatsQueries(q);
    // Clicks and leads in one statement each for the days and the partners: their queries take the same parameters.
    const run = <K extends "day" | "partnerId">(key: K, clicks: SqlQuery | null, leads: SqlQuery | null) =>
      clicks && leads
        ? this.db.query<Record<K, StatsKeys[K]> & { clicks: string | null; leads: string | null }>(
            `SELECT "${key}", clicks, NULL::bigint AS leads FROM (${clicks.text}) c UNION ALL SELECT "${key}", NULL, leads FROM (${leads.text}) l`,
            clicks.values,
            { prepare: true },
          )
        : Promise.resolve([]);
    const [days, partners] = await Promise.all([
      run("day", queries.clickDays, queries.leadDays),
      run("partnerId", q.partners === false ? null : queries.clickPartners, queries.leadPartners),
    ]);
    // The running totals' rows are several a partner (runningFiguresQuery): summed, the partners with some activity.
    const byPartner = mergeRows("partnerId", zero, partners).filter((p) => p.clicks !== 0 || p.leads !== 0);
    return { byDay: mergeRows("day", zero, days), byPartner };
  }

  async topPartners(q: StatsQuery, limit: number): Promise<TopPartners> {
    return rankPackedRange(
      this.packedDays,
      async (held) => {
        const query = clicksTopPartnersQuery(q, held);
        return (await this.db.query<PackedRangeRow>(query.text, query.values, { prepare: true }))[0];
      },
      q.partnerIds,
      limit,
    );
  }

  async clearClickDetails(before: Date, limit: number): Promise<number> {
    // Along clicks_details_kept (timestamp, of the clicks whose details are there); SKIP LOCKED: two instances share the work.
    const rows = await this.db.query(
      `UPDATE clicks SET country = NULL, device_type = NULL, browser = NULL, os = NULL, referrer_domain = NULL, ad_networks = NULL, utm = NULL, address_hash = NULL
       WHERE id IN (SELECT id FROM clicks WHERE device_type IS NOT NULL AND timestamp < $1 ORDER BY timestamp LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id`,
      [before, limit],
    );
    return rows.length;
  }

  async extendRunningTotals(today: Date): Promise<number> {
    return (await extendRunningTotals(this.db, activityDaily("clicks"), today)) + (await extendRunningTotals(this.db, activityDaily("leads"), today));
  }

  breakdowns(q: StatsQuery): Promise<Array<BreakdownRow<ActivityFigures>>> {
    return this.breakdownDays.read(q);
  }

  async rollupDrift(limit: number, clickDetailsFrom?: string): Promise<RollupDrift[]> {
    const rollups = [activityDaily("clicks"), activityDaily("leads")];
    const drift = await rollupsDrift(this.db, [...rollups, breakdownDaily("clicks", clickDetailsFrom), breakdownDaily("leads")], limit);
    for (const d of rollups) drift.push(...(await runningDrift(this.db, d, limit - drift.length)));
    return drift;
  }

  async listLeadsPage(f: LeadListFilter): Promise<Page<Lead>> {
    const q = listLeadsQuery(f);
    return pageOf(await this.db.query<SqlListed<LeadRow>>(q.text, q.values), f.limit, sqlPosition, toLead);
  }

  async countPartnerClicks(programId: number, partnerId: number): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(COUNT_PARTNER_CLICKS_SQL, [programId, partnerId]);
    return row.n;
  }

  async createCouponCode(c: NewCouponCode): Promise<CouponCode | null> {
    // Without a conflict target, DO NOTHING covers both partial unique indexes (code key, promotion code).
    const [row] = await this.db.query<CouponCodeRow>(
      `INSERT INTO coupon_codes (program_id, partner_id, code, code_key, stripe_promotion_code_id, stripe_coupon_id, source)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING *`,
      [c.programId, c.partnerId, c.code, c.codeKey, c.stripePromotionCodeId, c.stripeCouponId, c.source],
    );
    return row ? toCouponCode(row) : null;
  }

  async findCouponCodes(programId: number, match: { codeKeys: readonly string[]; promotionCodeIds: readonly string[] }): Promise<CouponCode[]> {
    if (!match.codeKeys.length && !match.promotionCodeIds.length) return [];
    const rows = await this.db.query<CouponCodeRow>(
      "SELECT * FROM coupon_codes WHERE program_id = $1 AND (code_key = ANY($2::text[]) OR stripe_promotion_code_id = ANY($3::text[])) ORDER BY id",
      [programId, [...match.codeKeys], [...match.promotionCodeIds]],
    );
    return rows.map(toCouponCode);
  }

  async hasStripeCouponCodes(programId: number): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM coupon_codes WHERE program_id = $1 AND archived_at IS NULL AND stripe_promotion_code_id IS NOT NULL LIMIT 1", [programId]);
    return rows.length > 0;
  }

  async archiveCouponCode(programId: number, id: number, at: Date): Promise<CouponCode | null> {
    const [row] = await this.db.query<CouponCodeRow>("UPDATE coupon_codes SET archived_at = COALESCE(archived_at, $3) WHERE id = $1 AND program_id = $2 RETURNING *", [id, programId, at]);
    return row ? toCouponCode(row) : null;
  }

  async listCouponCodesPage(f: CouponCodeListFilter): Promise<Page<CouponCode>> {
    const q = listCouponCodesQuery(f);
    return pageOf(await this.db.query<SqlListed<CouponCodeRow>>(q.text, q.values), f.limit, sqlPosition, toCouponCode);
  }
}
