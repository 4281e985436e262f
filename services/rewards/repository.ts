import type { CustomerDiscount, Reward, RewardForm, RewardTerms } from "../../shared/domain/rewards";

/**
 * A program's partner group: every partner of a program is in exactly one
 * (the default group unless moved), and earns by the group's rewards.
 */
export interface PartnerGroup {
  id: number;
  programId: number;
  name: string;
  /** The group of every partner not moved to another; one per program, never archived. */
  isDefault: boolean;
  /** Days a commission is held (refunds reduce it) before it is credited. */
  holdDays: number;
  /** The smallest balance paid out to a partner of the group (minor units of the program's currency). */
  minPayoutCents: number;
  /** The discount the customers the group's partners refer get (a double-sided reward), or null. */
  customerDiscount: CustomerDiscount | null;
  /** How its partners receive what they earn: cash (payout runs) or account credit in the merchant's app. */
  rewardAs: RewardForm;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type GroupSettings = Pick<PartnerGroup, "name" | "holdDays" | "minPayoutCents"> & { customerDiscount?: CustomerDiscount | null; rewardAs?: RewardForm };

/** A reward as stored: its current version, and whether it is archived (an archived reward pays nothing new). */
export interface StoredReward extends Reward {
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A reward's terms at one version (the history an edit leaves). */
export interface RewardVersion {
  rewardId: number;
  version: number;
  terms: RewardTerms;
  createdAt: Date;
}

/** What the first access to a program's rewards creates: its default group and, from the program's rule, a sale reward. */
export interface DefaultGroupSeed {
  holdDays: number;
  saleReward: RewardTerms | null;
}

/**
 * Storage contract of the rewards service: partner groups, rewards (with
 * their versions) and which group each partner is in. Every write is one
 * transaction; `ensureDefaultGroup` is idempotent under concurrency.
 */
export interface RewardsRepository {
  /** The program's default group, created (with the seed's sale reward) by the first call; later calls return it unchanged. */
  ensureDefaultGroup(programId: number, seed: DefaultGroupSeed, now: Date): Promise<PartnerGroup>;
  /** The program's groups (archived too), default first, then by id. */
  listGroups(programId: number): Promise<PartnerGroup[]>;
  getGroup(programId: number, groupId: number): Promise<PartnerGroup | null>;
  /** Null when the program has a group of that name already. */
  createGroup(programId: number, settings: GroupSettings, now: Date): Promise<PartnerGroup | null>;
  /** Null when the group does not exist; `conflict` when the new name is another group's. A `customerDiscount` given (null too) replaces it. */
  updateGroup(programId: number, groupId: number, patch: Partial<GroupSettings>, now: Date): Promise<PartnerGroup | null | "conflict">;
  /** Archives a group (not the default): its partners are back in the default group, its rewards archived. */
  archiveGroup(programId: number, groupId: number, now: Date): Promise<PartnerGroup | null>;
  /** The program's rewards (one group's when given), archived ones only when asked, by id. */
  listRewards(programId: number, filter: { groupId?: number; includeArchived?: boolean }): Promise<StoredReward[]>;
  getReward(programId: number, rewardId: number): Promise<StoredReward | null>;
  listRewardVersions(rewardId: number): Promise<RewardVersion[]>;
  /** Version 1, and its history row. */
  createReward(programId: number, groupId: number, terms: RewardTerms, now: Date): Promise<StoredReward>;
  /** A new version with these terms (and its history row); null when the reward does not exist or is archived. */
  updateReward(programId: number, rewardId: number, terms: RewardTerms, now: Date): Promise<StoredReward | null>;
  /** Sets `archivedAt` once; null when the reward does not exist. */
  archiveReward(programId: number, rewardId: number, now: Date): Promise<StoredReward | null>;
  /** The group a partner was moved to (null: the default group). */
  findMembership(programId: number, partnerId: number): Promise<number | null>;
  /** Moves partners, all or none; moving to the default group removes the partner's row. */
  assignGroups(programId: number, assignments: ReadonlyArray<{ partnerId: number; groupId: number }>, defaultGroupId: number, now: Date): Promise<void>;
  /** How many partners were moved into each non-default group. */
  countMembers(programId: number): Promise<Map<number, number>>;
  /** The partners moved into one group, by partner id. */
  listMembers(programId: number, groupId: number, limit: number): Promise<number[]>;
}
