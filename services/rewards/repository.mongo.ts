import { Schema, type ClientSession, type Connection, type Model } from "mongoose";
import type { RewardTerms } from "../../shared/domain/rewards";
import { insertOrNull, isDuplicateKeyError, modelOn, nextId, prepareCollections, requiredStringsMayBeEmpty, collectionSchema, type DocOf, withTransaction } from "../../shared/storage/mongo";
import type { DefaultGroupSeed, GroupSettings, PartnerGroup, RewardsRepository, RewardVersion, StoredReward } from "./repository";

/**
 * The rewards service's MongoDB adapter: the collections are the SQL tables
 * (partner_groups, rewards, reward_versions, partner_group_members), with the
 * same unique keys as unique indexes, and every multi-document write in one
 * transaction. Ids come from the shared counters (shared/storage/mongo.ts).
 */

/**
 * `nameKey` is the SQL unique index partner_groups_name, (program_id, lower(name)) WHERE archived_at IS NULL:
 * the lower-cased name while the group is live, null once archived (a partial filter cannot say "archivedAt is
 * null", so the key itself leaves the index).
 */
type GroupDoc = DocOf<PartnerGroup> & { nameKey: string | null };

type RewardDoc = DocOf<StoredReward>;

type RewardVersionDoc = RewardVersion;

interface MemberDoc {
  programId: number;
  partnerId: number;
  groupId: number;
  updatedAt: Date;
}

const groupSchema = requiredStringsMayBeEmpty(
  collectionSchema<GroupDoc>("partner_groups", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    name: { type: String, required: true },
    nameKey: { type: String, default: null },
    isDefault: { type: Boolean, required: true, default: false },
    // CHECK (hold_days >= 0), CHECK (min_payout_cents >= 0).
    holdDays: { type: Number, required: true, min: 0 },
    minPayoutCents: { type: Number, required: true, default: 0, min: 0 },
    customerDiscount: { type: Schema.Types.Mixed, default: null },
    // CHECK (reward_as IN ('cash', 'account_credit', 'stripe_balance')).
    rewardAs: { type: String, required: true, default: "cash", enum: ["cash", "account_credit", "stripe_balance"] },
    archivedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  }),
);
// partner_groups_default: one default group per program. Queries say `isDefault: true` to use it.
groupSchema.index({ programId: 1 }, { unique: true, partialFilterExpression: { isDefault: true } });
// partner_groups_name: no two live groups of a program with the same name, whatever its case.
groupSchema.index({ programId: 1, nameKey: 1 }, { unique: true, partialFilterExpression: { nameKey: { $type: "string" } } });
// A program's groups (listGroups, getGroup).
groupSchema.index({ programId: 1, _id: 1 });

const rewardSchema = requiredStringsMayBeEmpty(
  collectionSchema<RewardDoc>("rewards", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    groupId: { type: Number, required: true },
    version: { type: Number, required: true, default: 1 },
    // CHECK (event IN ('sale', 'lead')), CHECK (kind IN ('percentage', 'flat')), CHECK (value > 0).
    event: { type: String, required: true, enum: ["sale", "lead"] },
    kind: { type: String, required: true, enum: ["percentage", "flat"] },
    value: { type: Number, required: true, min: 1 },
    // JSON, as the SQL adapter's JSONB (written through `json`).
    recurring: { type: Schema.Types.Mixed, default: null },
    productIds: { type: [String], required: true, default: [] },
    priceIds: { type: [String], required: true, default: [] },
    tiers: { type: Schema.Types.Mixed, default: null },
    archivedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  }),
);
// rewards_program: a program's (or one group's) rewards, by group and id.
rewardSchema.index({ programId: 1, groupId: 1, _id: 1 });

// No integer id: the key is (rewardId, version), the SQL primary key, as a unique index.
const rewardVersionSchema = collectionSchema<RewardVersionDoc>("reward_versions", {
  rewardId: { type: Number, required: true },
  version: { type: Number, required: true },
  terms: { type: Schema.Types.Mixed, required: true },
  createdAt: { type: Date, required: true },
});
rewardVersionSchema.index({ rewardId: 1, version: 1 }, { unique: true });

const memberSchema = collectionSchema<MemberDoc>("partner_group_members", {
  programId: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  groupId: { type: Number, required: true },
  updatedAt: { type: Date, required: true },
});
// The SQL primary key (program_id, partner_id): a partner is in one group per program.
memberSchema.index({ programId: 1, partnerId: 1 }, { unique: true });
// partner_group_members_group: one group's members (listMembers, archiveGroup).
memberSchema.index({ groupId: 1, partnerId: 1 });

const toGroup = (d: GroupDoc): PartnerGroup => ({
  id: d._id,
  programId: d.programId,
  name: d.name,
  isDefault: d.isDefault,
  holdDays: d.holdDays,
  minPayoutCents: d.minPayoutCents,
  customerDiscount: d.customerDiscount ?? null,
  rewardAs: d.rewardAs ?? "cash",
  archivedAt: d.archivedAt ?? null,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

const toReward = (d: RewardDoc): StoredReward => ({
  id: d._id,
  programId: d.programId,
  groupId: d.groupId,
  version: d.version,
  event: d.event,
  kind: d.kind,
  value: d.value,
  recurring: d.recurring ?? null,
  productIds: [...d.productIds],
  priceIds: [...d.priceIds],
  tiers: d.tiers ?? null,
  archivedAt: d.archivedAt ?? null,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

/** A value as the SQL adapter's JSONB gives it back: through JSON (undefined fields dropped). */
const json = <T>(value: T): T => (value === null ? value : (JSON.parse(JSON.stringify(value)) as T));

/** The terms of a reward as its version history keeps them (termsOf in repository.sql.ts). */
const termsOf = (r: RewardTerms): RewardTerms =>
  json({
    event: r.event,
    kind: r.kind,
    value: r.value,
    recurring: r.recurring,
    productIds: r.productIds,
    priceIds: r.priceIds,
    tiers: r.tiers,
  });

/** The reward document's fields for these terms. */
const termFields = (t: RewardTerms) => ({
  event: t.event,
  kind: t.kind,
  value: t.value,
  recurring: json(t.recurring),
  productIds: [...t.productIds],
  priceIds: [...t.priceIds],
  tiers: json(t.tiers),
});

/** The lower-cased name a live group is unique by (SQL: lower(name)). */
const nameKeyOf = (name: string): string => name.toLowerCase();

export class MongoRewardsRepository implements RewardsRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly groups: Model<GroupDoc>,
    private readonly rewards: Model<RewardDoc>,
    private readonly versions: Model<RewardVersionDoc>,
    private readonly members: Model<MemberDoc>,
  ) {}

  static async create(connection: Connection): Promise<MongoRewardsRepository> {
    const groups = modelOn(connection, "PartnerGroup", groupSchema);
    const rewards = modelOn(connection, "Reward", rewardSchema);
    const versions = modelOn(connection, "RewardVersion", rewardVersionSchema);
    const members = modelOn(connection, "PartnerGroupMember", memberSchema);
    // Also keeps collection creation out of the transactions.
    await prepareCollections([groups, rewards, versions, members]);
    return new MongoRewardsRepository(connection, groups, rewards, versions, members);
  }

  async ensureDefaultGroup(programId: number, seed: DefaultGroupSeed, now: Date): Promise<PartnerGroup> {
    const existing = await this.defaultGroup(programId);
    if (existing) return existing;
    // The ids once, outside the transaction: a retried transaction inserts the same group and reward.
    const groupId = await nextId(this.connection, "partner_groups");
    const rewardId = seed.saleReward ? await nextId(this.connection, "rewards") : null;
    try {
      return await withTransaction(this.connection, async (session) => {
        const doc = await this.groups.insertOne(
          {
            _id: groupId,
            programId,
            name: "Default",
            nameKey: nameKeyOf("Default"),
            isDefault: true,
            holdDays: seed.holdDays,
            minPayoutCents: 0,
            archivedAt: null,
            createdAt: now,
            updatedAt: now,
          },
          { session },
        );
        if (seed.saleReward) await this.insertReward(session, rewardId!, programId, groupId, seed.saleReward, now);
        return toGroup(doc.toObject());
      });
    } catch (err) {
      // Another instance seeded it first (ON CONFLICT on the default index): theirs stands, with their reward.
      // Any other duplicate (a live group already named "Default") stays the error it is on SQL.
      if (!isDuplicateKeyError(err)) throw err;
      const winner = await this.defaultGroup(programId);
      if (!winner) throw err;
      return winner;
    }
  }

  private async defaultGroup(programId: number): Promise<PartnerGroup | null> {
    const doc = await this.groups.findOne({ programId, isDefault: true }).lean();
    return doc ? toGroup(doc) : null;
  }

  async listGroups(programId: number): Promise<PartnerGroup[]> {
    const docs = await this.groups.find({ programId }).sort({ isDefault: -1, _id: 1 }).lean();
    return docs.map(toGroup);
  }

  async getGroup(programId: number, groupId: number): Promise<PartnerGroup | null> {
    const doc = await this.groups.findOne({ _id: groupId, programId }).lean();
    return doc ? toGroup(doc) : null;
  }

  async createGroup(programId: number, s: GroupSettings, now: Date): Promise<PartnerGroup | null> {
    const id = await nextId(this.connection, "partner_groups");
    // A live group of that name (partner_groups_name): null, as the SQL adapter's unique violation.
    return insertOrNull(async () => {
      const doc = await this.groups.insertOne({
        _id: id,
        programId,
        name: s.name,
        nameKey: nameKeyOf(s.name),
        isDefault: false,
        holdDays: s.holdDays,
        minPayoutCents: s.minPayoutCents,
        customerDiscount: s.customerDiscount ?? null,
        rewardAs: s.rewardAs ?? "cash",
        archivedAt: null,
        createdAt: now,
        updatedAt: now,
      });
      return toGroup(doc.toObject());
    });
  }

  async updateGroup(programId: number, groupId: number, patch: Partial<GroupSettings>, now: Date): Promise<PartnerGroup | null | "conflict"> {
    // COALESCE on SQL: a field left out (or null) keeps its value.
    const set: Partial<GroupDoc> = { updatedAt: now };
    if (patch.name != null) Object.assign(set, { name: patch.name, nameKey: nameKeyOf(patch.name) });
    if (patch.holdDays != null) set.holdDays = patch.holdDays;
    if (patch.minPayoutCents != null) set.minPayoutCents = patch.minPayoutCents;
    // Given (null too), it replaces the discount.
    if (patch.customerDiscount !== undefined) set.customerDiscount = patch.customerDiscount;
    if (patch.rewardAs != null) set.rewardAs = patch.rewardAs;
    try {
      const doc = await this.groups.findOneAndUpdate({ _id: groupId, programId, archivedAt: null }, { $set: set }, { returnDocument: "after", runValidators: true }).lean();
      return doc ? toGroup(doc) : null;
    } catch (err) {
      // Another live group has the name (partner_groups_name).
      if (isDuplicateKeyError(err)) return "conflict";
      throw err;
    }
  }

  archiveGroup(programId: number, groupId: number, now: Date): Promise<PartnerGroup | null> {
    return withTransaction(this.connection, async (session) => {
      const filter = { _id: groupId, programId, isDefault: false };
      // archived_at = COALESCE(archived_at, now): the first archive's date stays; updated_at moves either way.
      const doc =
        (await this.groups.findOneAndUpdate({ ...filter, archivedAt: null }, { $set: { archivedAt: now, nameKey: null, updatedAt: now } }, { session, returnDocument: "after" }).lean()) ??
        (await this.groups.findOneAndUpdate(filter, { $set: { updatedAt: now } }, { session, returnDocument: "after" }).lean());
      if (!doc) return null;
      // Its partners are back in the default group; its rewards pay nothing new.
      await this.members.deleteMany({ programId, groupId }, { session });
      await this.rewards.updateMany({ programId, groupId, archivedAt: null }, { $set: { archivedAt: now, updatedAt: now } }, { session });
      return toGroup(doc);
    });
  }

  async listRewards(programId: number, filter: { groupId?: number; includeArchived?: boolean }): Promise<StoredReward[]> {
    const query: Record<string, unknown> = { programId };
    if (filter.groupId !== undefined) query.groupId = filter.groupId;
    if (filter.includeArchived !== true) query.archivedAt = null;
    const docs = await this.rewards.find(query).sort({ groupId: 1, _id: 1 }).lean<RewardDoc[]>();
    return docs.map(toReward);
  }

  async getReward(programId: number, rewardId: number): Promise<StoredReward | null> {
    const doc = await this.rewards.findOne({ _id: rewardId, programId }).lean();
    return doc ? toReward(doc) : null;
  }

  async listRewardVersions(rewardId: number): Promise<RewardVersion[]> {
    const docs = await this.versions.find({ rewardId }).sort({ version: 1 }).lean();
    return docs.map((d) => ({ rewardId: d.rewardId, version: d.version, terms: d.terms, createdAt: d.createdAt }));
  }

  async createReward(programId: number, groupId: number, terms: RewardTerms, now: Date): Promise<StoredReward> {
    // The id once, outside the transaction: a retried transaction inserts the same reward.
    const id = await nextId(this.connection, "rewards");
    return withTransaction(this.connection, (session) => this.insertReward(session, id, programId, groupId, terms, now));
  }

  /** Version 1 of a reward and its history row, in the caller's transaction. */
  private async insertReward(session: ClientSession, id: number, programId: number, groupId: number, t: RewardTerms, now: Date): Promise<StoredReward> {
    // REFERENCES partner_groups(id) on SQL.
    await this.requireGroup(session, groupId);
    const doc = await this.rewards.insertOne({ _id: id, programId, groupId, version: 1, ...termFields(t), archivedAt: null, createdAt: now, updatedAt: now }, { session });
    await this.versions.insertOne({ rewardId: id, version: 1, terms: termsOf(t), createdAt: now }, { session });
    return toReward(doc.toObject());
  }

  updateReward(programId: number, rewardId: number, t: RewardTerms, now: Date): Promise<StoredReward | null> {
    return withTransaction(this.connection, async (session) => {
      // Concurrent edits write the same document: one conflicts and is retried by the driver, on the other's version.
      const doc = await this.rewards
        .findOneAndUpdate(
          { _id: rewardId, programId, archivedAt: null },
          { $inc: { version: 1 }, $set: { ...termFields(t), updatedAt: now } },
          { session, returnDocument: "after", runValidators: true },
        )
        .lean<RewardDoc | null>();
      if (!doc) return null;
      await this.versions.insertOne({ rewardId: doc._id, version: doc.version, terms: termsOf(t), createdAt: now }, { session });
      return toReward(doc);
    });
  }

  async archiveReward(programId: number, rewardId: number, now: Date): Promise<StoredReward | null> {
    // archived_at = COALESCE(archived_at, now), updated_at = now: the first archive's date stays.
    const filter = { _id: rewardId, programId };
    const doc =
      (await this.rewards.findOneAndUpdate({ ...filter, archivedAt: null }, { $set: { archivedAt: now, updatedAt: now } }, { returnDocument: "after" }).lean<RewardDoc | null>()) ??
      (await this.rewards.findOneAndUpdate(filter, { $set: { updatedAt: now } }, { returnDocument: "after" }).lean<RewardDoc | null>());
    return doc ? toReward(doc) : null;
  }

  async findMembership(programId: number, partnerId: number): Promise<number | null> {
    const doc = await this.members.findOne({ programId, partnerId }, { groupId: 1 }).lean();
    return doc?.groupId ?? null;
  }

  async assignGroups(programId: number, assignments: ReadonlyArray<{ partnerId: number; groupId: number }>, defaultGroupId: number, now: Date): Promise<void> {
    const run = () =>
      withTransaction(this.connection, async (session) => {
        for (const { partnerId, groupId } of assignments) {
          if (groupId === defaultGroupId) {
            await this.members.deleteOne({ programId, partnerId }, { session });
          } else {
            // REFERENCES partner_groups(id) on SQL: an unknown group moves nobody.
            await this.requireGroup(session, groupId);
            // ON CONFLICT (program_id, partner_id) DO UPDATE: the unique index keeps one row per partner and program.
            await this.members.updateOne({ programId, partnerId }, { $set: { groupId, updatedAt: now } }, { session, upsert: true });
          }
        }
      });
    try {
      await run();
    } catch (err) {
      // A concurrent move inserted the same partner's row first; a duplicate key is not retried by the driver.
      // Once more: the re-run updates the winner's row, as ON CONFLICT DO UPDATE would have.
      if (!isDuplicateKeyError(err)) throw err;
      await run();
    }
  }

  async countMembers(programId: number): Promise<Map<number, number>> {
    const rows = await this.members.aggregate<{ _id: number; members: number }>([{ $match: { programId } }, { $group: { _id: "$groupId", members: { $sum: 1 } } }]);
    return new Map(rows.map((r) => [r._id, r.members]));
  }

  async listMembers(programId: number, groupId: number, limit: number): Promise<number[]> {
    // MongoDB reads limit(0) as "no limit".
    if (limit < 1) return [];
    const docs = await this.members.find({ programId, groupId }, { partnerId: 1 }).sort({ partnerId: 1 }).limit(limit).lean();
    return docs.map((d) => d.partnerId);
  }

  /** The group must exist, as the SQL foreign key to partner_groups(id) requires (read in the transaction). */
  private async requireGroup(session: ClientSession, groupId: number): Promise<void> {
    if (await this.groups.exists({ _id: groupId }).setOptions({ session })) return;
    throw new Error(`No partner group ${groupId}: a reward or a partner's membership must name an existing group (partner_groups foreign key).`);
  }
}
