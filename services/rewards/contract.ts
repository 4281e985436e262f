import type { z } from "zod";
import type { Jsonified } from "../../shared/dto";
import type { CustomerDiscount, FrozenReward, Reward, RewardForm } from "../../shared/domain/rewards";
import type { PartnerGroup, RewardVersion, StoredReward } from "./repository";
import type * as S from "./schemas";

/** A group as the Rewards screen lists it: its settings, how many partners were moved into it, and its live rewards. */
export type GroupWithRewards = Jsonified<PartnerGroup> & { members: number; memberIds: number[]; rewards: Array<Jsonified<StoredReward>> };

/** What `rewards.forPartner` answers: the partner's group and the rewards they earn by now. */
export interface PartnerRewards {
  currency: string;
  /** `customerDiscount`: what the customers the partner refers get (docs/rewards.md, "The referred customer's discount"). */
  group: { id: number; name: string; holdDays: number; minPayoutCents: number; customerDiscount: CustomerDiscount | null; rewardAs: RewardForm };
  rewards: Reward[];
}

/** What a sale would earn (the preview endpoint). */
export interface RewardPreview {
  currency: string;
  groupId: number | null;
  amountCents: number;
  /** What the first payment earns; 0 when no reward applies. */
  commissionCents: number;
  reward: FrozenReward | null;
  /** Which payments earn: first only, for N months, or for the subscription's life (null when no reward applies). */
  recurring: FrozenReward["recurring"];
}

/**
 * The rewards service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates
 * are ISO strings). Callers use `call` from services/bus.ts.
 */
export interface RewardsContract {
  "rewards.list": { params: z.input<typeof S.ProgramIdInput>; result: { programId: number; currency: string; groups: GroupWithRewards[] } };
  "rewards.get": { params: z.input<typeof S.RewardIdInput>; result: Jsonified<StoredReward & { versions: RewardVersion[] }> };
  "rewards.create": { params: z.input<typeof S.CreateRewardInput>; result: Jsonified<StoredReward> };
  "rewards.update": { params: z.input<typeof S.UpdateRewardInput>; result: Jsonified<StoredReward> };
  "rewards.archive": { params: z.input<typeof S.RewardIdInput>; result: Jsonified<StoredReward> };
  "rewards.createGroup": { params: z.input<typeof S.CreateGroupInput>; result: Jsonified<PartnerGroup> };
  "rewards.updateGroup": { params: z.input<typeof S.UpdateGroupInput>; result: Jsonified<PartnerGroup> };
  "rewards.archiveGroup": { params: z.input<typeof S.GroupIdInput>; result: Jsonified<PartnerGroup> };
  "rewards.assignGroups": { params: z.input<typeof S.AssignGroupsInput>; result: { programId: number; moved: number } };
  "rewards.preview": { params: z.input<typeof S.PreviewInput>; result: RewardPreview };
  "rewards.forPartner": { params: z.input<typeof S.ForPartnerInput>; result: PartnerRewards };
  /** Each partner's group, its minimum payout and how its partners receive what they earn (account credit or cash). */
  "rewards.payoutMinimums": { params: z.input<typeof S.PayoutMinimumsInput>; result: Array<{ partnerId: number; groupId: number; minPayoutCents: number; rewardAs: RewardForm }> };
  /** Whether a live reward of the program names products or prices (the processor then fetches a checkout's line items). */
  "rewards.usesProducts": { params: z.input<typeof S.ProgramIdInput>; result: boolean };
  /** The program's default group (created from the program's rule on first use): its hold days are the program's (programs' settings). */
  "rewards.defaultGroup": { params: z.input<typeof S.ProgramIdInput>; result: Jsonified<PartnerGroup> };
}

/** Broadcast (confirmed) when a program's groups, rewards or memberships change: callers' reward caches drop the program. */
export interface RewardsBroadcasts {
  "rewards.changed": { programId: number };
}
