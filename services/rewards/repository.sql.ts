import type { CustomerDiscount, RecurringRule, RewardForm, RewardTerms, TierRule } from "../../shared/domain/rewards";
import { migrate, type SqlDatabase, type SqlExecutor } from "../../shared/storage/sql";
import { isUniqueViolation } from "../../shared/storage/errors";
import type { DefaultGroupSeed, GroupSettings, PartnerGroup, RewardsRepository, RewardVersion, StoredReward } from "./repository";

const MIGRATIONS = [
  `CREATE TABLE partner_groups (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     name TEXT NOT NULL,
     is_default BOOLEAN NOT NULL DEFAULT false,
     hold_days INTEGER NOT NULL CHECK (hold_days >= 0),
     min_payout_cents BIGINT NOT NULL DEFAULT 0 CHECK (min_payout_cents >= 0),
     archived_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL);
   CREATE UNIQUE INDEX partner_groups_default ON partner_groups (program_id) WHERE is_default;
   CREATE UNIQUE INDEX partner_groups_name ON partner_groups (program_id, lower(name)) WHERE archived_at IS NULL;
   CREATE TABLE rewards (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     group_id INTEGER NOT NULL REFERENCES partner_groups(id),
     version INTEGER NOT NULL DEFAULT 1,
     event TEXT NOT NULL CHECK (event IN ('sale', 'lead')),
     kind TEXT NOT NULL CHECK (kind IN ('percentage', 'flat')),
     value BIGINT NOT NULL CHECK (value > 0),
     recurring JSONB,
     product_ids JSONB NOT NULL DEFAULT '[]',
     price_ids JSONB NOT NULL DEFAULT '[]',
     tiers JSONB,
     archived_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX rewards_program ON rewards (program_id, group_id, id);
   CREATE TABLE reward_versions (
     reward_id INTEGER NOT NULL REFERENCES rewards(id),
     version INTEGER NOT NULL,
     terms JSONB NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (reward_id, version));
   CREATE TABLE partner_group_members (
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     group_id INTEGER NOT NULL REFERENCES partner_groups(id),
     updated_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, partner_id));
   CREATE INDEX partner_group_members_group ON partner_group_members (group_id, partner_id);`,
  // Double-sided rewards (docs/rewards.md, "The referred customer's discount").
  `ALTER TABLE partner_groups ADD COLUMN customer_discount JSONB;
   ALTER TABLE partner_groups ADD COLUMN reward_as TEXT NOT NULL DEFAULT 'cash' CHECK (reward_as IN ('cash', 'account_credit', 'stripe_balance'));`,
];

interface GroupRow {
  id: number;
  program_id: number;
  name: string;
  is_default: boolean;
  hold_days: number;
  min_payout_cents: number;
  customer_discount: CustomerDiscount | null;
  reward_as: RewardForm;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface RewardRow {
  id: number;
  program_id: number;
  group_id: number;
  version: number;
  event: RewardTerms["event"];
  kind: RewardTerms["kind"];
  value: number;
  recurring: RecurringRule | null;
  product_ids: string[];
  price_ids: string[];
  tiers: TierRule | null;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toGroup = (r: GroupRow): PartnerGroup => ({
  id: r.id,
  programId: r.program_id,
  name: r.name,
  isDefault: r.is_default,
  holdDays: r.hold_days,
  minPayoutCents: r.min_payout_cents,
  customerDiscount: r.customer_discount ?? null,
  rewardAs: r.reward_as,
  archivedAt: r.archived_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toReward = (r: RewardRow): StoredReward => ({
  id: r.id,
  programId: r.program_id,
  groupId: r.group_id,
  version: r.version,
  event: r.event,
  kind: r.kind,
  value: r.value,
  recurring: r.recurring,
  productIds: r.product_ids,
  priceIds: r.price_ids,
  tiers: r.tiers,
  archivedAt: r.archived_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The terms of a reward as its version history keeps them. */
export const termsOf = (r: RewardTerms): RewardTerms => ({
  event: r.event,
  kind: r.kind,
  value: r.value,
  recurring: r.recurring,
  productIds: r.productIds,
  priceIds: r.priceIds,
  tiers: r.tiers,
});

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

async function insertReward(q: SqlExecutor, programId: number, groupId: number, t: RewardTerms, now: Date): Promise<StoredReward> {
  const [row] = await q.query<RewardRow>(
    `INSERT INTO rewards (program_id, group_id, event, kind, value, recurring, product_ids, price_ids, tiers, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING *`,
    [programId, groupId, t.event, t.kind, t.value, json(t.recurring), JSON.stringify(t.productIds), JSON.stringify(t.priceIds), json(t.tiers), now],
  );
  await q.query("INSERT INTO reward_versions (reward_id, version, terms, created_at) VALUES ($1, 1, $2, $3)", [row.id, JSON.stringify(termsOf(t)), now]);
  return toReward(row);
}

export class SqlRewardsRepository implements RewardsRepository {
  private constructor(private readonly db: SqlDatabase) {}

  static async create(db: SqlDatabase): Promise<SqlRewardsRepository> {
    await migrate(db, "rewards", MIGRATIONS);
    return new SqlRewardsRepository(db);
  }

  async ensureDefaultGroup(programId: number, seed: DefaultGroupSeed, now: Date): Promise<PartnerGroup> {
    const existing = await this.defaultGroup(this.db, programId);
    if (existing) return existing;
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<GroupRow>(
        `INSERT INTO partner_groups (program_id, name, is_default, hold_days, created_at, updated_at) VALUES ($1, 'Default', true, $2, $3, $3)
         ON CONFLICT DO NOTHING RETURNING *`,
        [programId, seed.holdDays, now],
      );
      // Another instance seeded it first: theirs stands, with their reward. (No arbiter: two first inserts may
      // meet on the name index before the default one.) A live group of the merchant's named "Default" cannot
      // exist before the default group, which every group operation seeds first.
      if (!row) {
        const winner = await this.defaultGroup(tx, programId);
        if (!winner) throw new Error(`The default group of program ${programId} could not be created: a live group is named 'Default'.`);
        return winner;
      }
      if (seed.saleReward) await insertReward(tx, programId, row.id, seed.saleReward, now);
      return toGroup(row);
    });
  }

  private async defaultGroup(q: SqlExecutor, programId: number): Promise<PartnerGroup | null> {
    const [row] = await q.query<GroupRow>("SELECT * FROM partner_groups WHERE program_id = $1 AND is_default", [programId]);
    return row ? toGroup(row) : null;
  }

  async listGroups(programId: number): Promise<PartnerGroup[]> {
    return (await this.db.query<GroupRow>("SELECT * FROM partner_groups WHERE program_id = $1 ORDER BY is_default DESC, id", [programId])).map(toGroup);
  }

  async getGroup(programId: number, groupId: number): Promise<PartnerGroup | null> {
    const [row] = await this.db.query<GroupRow>("SELECT * FROM partner_groups WHERE program_id = $1 AND id = $2", [programId, groupId]);
    return row ? toGroup(row) : null;
  }

  async createGroup(programId: number, s: GroupSettings, now: Date): Promise<PartnerGroup | null> {
    try {
      const [row] = await this.db.query<GroupRow>(
        "INSERT INTO partner_groups (program_id, name, hold_days, min_payout_cents, customer_discount, reward_as, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING *",
        [programId, s.name, s.holdDays, s.minPayoutCents, s.customerDiscount ? JSON.stringify(s.customerDiscount) : null, s.rewardAs ?? "cash", now],
      );
      return toGroup(row);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  async updateGroup(programId: number, groupId: number, patch: Partial<GroupSettings>, now: Date): Promise<PartnerGroup | null | "conflict"> {
    try {
      const [row] = await this.db.query<GroupRow>(
        `UPDATE partner_groups SET name = COALESCE($3, name), hold_days = COALESCE($4, hold_days), min_payout_cents = COALESCE($5, min_payout_cents), updated_at = $6,
           customer_discount = CASE WHEN $7::boolean THEN $8::jsonb ELSE customer_discount END, reward_as = COALESCE($9, reward_as)
         WHERE program_id = $1 AND id = $2 AND archived_at IS NULL RETURNING *`,
        [
          programId,
          groupId,
          patch.name ?? null,
          patch.holdDays ?? null,
          patch.minPayoutCents ?? null,
          now,
          patch.customerDiscount !== undefined,
          patch.customerDiscount ? JSON.stringify(patch.customerDiscount) : null,
          patch.rewardAs ?? null,
        ],
      );
      return row ? toGroup(row) : null;
    } catch (err) {
      if (isUniqueViolation(err)) return "conflict";
      throw err;
    }
  }

  archiveGroup(programId: number, groupId: number, now: Date): Promise<PartnerGroup | null> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<GroupRow>(
        "UPDATE partner_groups SET archived_at = COALESCE(archived_at, $3), updated_at = $3 WHERE program_id = $1 AND id = $2 AND NOT is_default RETURNING *",
        [programId, groupId, now],
      );
      if (!row) return null;
      await tx.query("DELETE FROM partner_group_members WHERE program_id = $1 AND group_id = $2", [programId, groupId]);
      await tx.query("UPDATE rewards SET archived_at = $3, updated_at = $3 WHERE program_id = $1 AND group_id = $2 AND archived_at IS NULL", [programId, groupId, now]);
      return toGroup(row);
    });
  }

  async listRewards(programId: number, filter: { groupId?: number; includeArchived?: boolean }): Promise<StoredReward[]> {
    const rows = await this.db.query<RewardRow>(`SELECT * FROM rewards WHERE program_id = $1 AND ($2::int IS NULL OR group_id = $2) AND ($3 OR archived_at IS NULL) ORDER BY group_id, id`, [
      programId,
      filter.groupId ?? null,
      filter.includeArchived === true,
    ]);
    return rows.map(toReward);
  }

  async getReward(programId: number, rewardId: number): Promise<StoredReward | null> {
    const [row] = await this.db.query<RewardRow>("SELECT * FROM rewards WHERE program_id = $1 AND id = $2", [programId, rewardId]);
    return row ? toReward(row) : null;
  }

  async listRewardVersions(rewardId: number): Promise<RewardVersion[]> {
    const rows = await this.db.query<{ reward_id: number; version: number; terms: RewardTerms; created_at: Date }>("SELECT * FROM reward_versions WHERE reward_id = $1 ORDER BY version", [
      rewardId,
    ]);
    return rows.map((r) => ({ rewardId: r.reward_id, version: r.version, terms: r.terms, createdAt: r.created_at }));
  }

  createReward(programId: number, groupId: number, terms: RewardTerms, now: Date): Promise<StoredReward> {
    return this.db.transaction((tx) => insertReward(tx, programId, groupId, terms, now));
  }

  updateReward(programId: number, rewardId: number, t: RewardTerms, now: Date): Promise<StoredReward | null> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<RewardRow>(
        `UPDATE rewards SET version = version + 1, event = $3, kind = $4, value = $5, recurring = $6, product_ids = $7, price_ids = $8, tiers = $9, updated_at = $10
         WHERE program_id = $1 AND id = $2 AND archived_at IS NULL RETURNING *`,
        [programId, rewardId, t.event, t.kind, t.value, json(t.recurring), JSON.stringify(t.productIds), JSON.stringify(t.priceIds), json(t.tiers), now],
      );
      if (!row) return null;
      await tx.query("INSERT INTO reward_versions (reward_id, version, terms, created_at) VALUES ($1, $2, $3, $4)", [row.id, row.version, JSON.stringify(termsOf(t)), now]);
      return toReward(row);
    });
  }

  async archiveReward(programId: number, rewardId: number, now: Date): Promise<StoredReward | null> {
    const [row] = await this.db.query<RewardRow>("UPDATE rewards SET archived_at = COALESCE(archived_at, $3), updated_at = $3 WHERE program_id = $1 AND id = $2 RETURNING *", [
      programId,
      rewardId,
      now,
    ]);
    return row ? toReward(row) : null;
  }

  async findMembership(programId: number, partnerId: number): Promise<number | null> {
    const [row] = await this.db.query<{ group_id: number }>("SELECT group_id FROM partner_group_members WHERE program_id = $1 AND partner_id = $2", [programId, partnerId]);
    return row?.group_id ?? null;
  }

  assignGroups(programId: number, assignments: ReadonlyArray<{ partnerId: number; groupId: number }>, defaultGroupId: number, now: Date): Promise<void> {
    return this.db.transaction(async (tx) => {
      for (const { partnerId, groupId } of assignments) {
        if (groupId === defaultGroupId) {
          await tx.query("DELETE FROM partner_group_members WHERE program_id = $1 AND partner_id = $2", [programId, partnerId]);
        } else {
          await tx.query(
            `INSERT INTO partner_group_members (program_id, partner_id, group_id, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (program_id, partner_id) DO UPDATE SET group_id = EXCLUDED.group_id, updated_at = EXCLUDED.updated_at`,
            [programId, partnerId, groupId, now],
          );
        }
      }
    });
  }

  async countMembers(programId: number): Promise<Map<number, number>> {
    const rows = await this.db.query<{ group_id: number; members: number }>("SELECT group_id, count(*)::int AS members FROM partner_group_members WHERE program_id = $1 GROUP BY group_id", [
      programId,
    ]);
    return new Map(rows.map((r) => [r.group_id, r.members]));
  }

  async listMembers(programId: number, groupId: number, limit: number): Promise<number[]> {
    const rows = await this.db.query<{ partner_id: number }>("SELECT partner_id FROM partner_group_members WHERE program_id = $1 AND group_id = $2 ORDER BY partner_id LIMIT $3", [
      programId,
      groupId,
      limit,
    ]);
    return rows.map((r) => r.partner_id);
  }
}
