import { declareActions, programRoutes } from "../../shared/endpoint";
import * as S from "./schemas";

const rewardExample = {
  id: 5,
  programId: 1,
  groupId: 2,
  version: 1,
  event: "sale",
  kind: "percentage",
  value: 3000,
  recurring: { duration: "months", months: 12 },
  productIds: [],
  priceIds: [],
  tiers: null,
  archivedAt: null,
  createdAt: "2026-01-01T10:00:00.000Z",
  updatedAt: "2026-01-01T10:00:00.000Z",
};
const groupExample = {
  id: 2,
  programId: 1,
  name: "Influencers",
  isDefault: false,
  holdDays: 30,
  minPayoutCents: 5000,
  archivedAt: null,
  createdAt: "2026-01-01T10:00:00.000Z",
  updatedAt: "2026-01-01T10:00:00.000Z",
};
const TERMS_TEXT =
  "A sale reward pays a percentage of each sale line (value in basis points, 1 to 10000) or a flat amount per line (minor units), for the first payment, for N months of renewals or for the subscription's life; a lead reward pays a flat amount once per attributed customer. productIds and priceIds limit a reward to those lines; tiers raise its value once the partner's monthly or all-time revenue or sales pass a threshold.";

/** The rewards service's actions: each HTTP operation answers the dashboard and the operator (programRoutes). */
export const REWARDS = declareActions("rewards", {
  list: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/rewards",
      scope: "rewards:read",
      tag: "Rewards",
      summary: "Partner groups and their rewards",
      description: "Every live partner group of the program (the default group first) with its hold days, minimum payout, the partners moved into it and its live rewards.",
      example: { programId: 1 },
      response: {
        description: "The program's groups.",
        example: { programId: 1, currency: "usd", groups: [{ ...groupExample, members: 1, memberIds: [3], rewards: [rewardExample] }] },
      },
    }),
  },
  get: {
    input: S.RewardIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/rewards/:rewardId",
      scope: "rewards:read",
      tag: "Rewards",
      summary: "A reward with its versions",
      description: "The reward as it is now, and the terms of each of its versions (every edit is a new version; commissions keep the version they were computed with).",
      example: { programId: 1, rewardId: 5 },
      errors: ["not_found"],
      response: { description: "The reward.", example: { ...rewardExample, versions: [{ rewardId: 5, version: 1, terms: {}, createdAt: "2026-01-01T10:00:00.000Z" }] } },
    }),
  },
  create: {
    input: S.CreateRewardInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/rewards",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Create a reward",
      description: `A new reward of a group, version 1. ${TERMS_TEXT} It applies to commissions created from now on.`,
      example: { programId: 1, groupId: 2, event: "sale", kind: "percentage", value: 3000, recurring: { duration: "months", months: 12 } },
      errors: ["not_found", "conflict", "currency_mismatch", "unknown_product"],
      response: { description: "The reward.", example: rewardExample },
    }),
  },
  update: {
    input: S.UpdateRewardInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/rewards/:rewardId",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Edit a reward (a new version)",
      description: `Replaces the reward's terms with a new version. ${TERMS_TEXT} Commissions already created keep the version they were computed with.`,
      example: { programId: 1, rewardId: 5, kind: "percentage", value: 4000, productIds: ["prod_annual"] },
      errors: ["not_found", "conflict", "currency_mismatch", "unknown_product"],
      response: { description: "The reward at its new version.", example: { ...rewardExample, version: 2, value: 4000 } },
    }),
  },
  archive: {
    input: S.RewardIdInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/rewards/:rewardId/archive",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Archive a reward",
      description: "The reward pays nothing from now on; commissions it produced are unchanged. Archiving an archived reward changes nothing.",
      example: { programId: 1, rewardId: 5 },
      errors: ["not_found"],
      response: { description: "The archived reward.", example: { ...rewardExample, archivedAt: "2026-02-01T10:00:00.000Z" } },
    }),
  },
  createGroup: {
    input: S.CreateGroupInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/groups",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Create a partner group",
      description: "A group with its own rewards, hold days (default: the default group's) and minimum payout. Partners join it when moved.",
      example: { programId: 1, name: "Influencers", holdDays: 14, minPayoutCents: 5000 },
      errors: ["conflict"],
      response: { description: "The group.", example: groupExample },
    }),
  },
  updateGroup: {
    input: S.UpdateGroupInput,
    http: programRoutes({
      method: "PATCH",
      path: "/:programId/groups/:groupId",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Change a partner group",
      description: "Its name, hold days or minimum payout; new hold days apply to commissions created from now on.",
      example: { programId: 1, groupId: 2, holdDays: 7 },
      errors: ["not_found", "conflict"],
      response: { description: "The group.", example: { ...groupExample, holdDays: 7 } },
    }),
  },
  archiveGroup: {
    input: S.GroupIdInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/groups/:groupId/archive",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Archive a partner group",
      description: "Its partners are back in the default group and its rewards archived; their commissions are unchanged. The default group cannot be archived (conflict).",
      example: { programId: 1, groupId: 2 },
      errors: ["not_found", "conflict"],
      response: { description: "The archived group.", example: { ...groupExample, archivedAt: "2026-02-01T10:00:00.000Z" } },
    }),
  },
  assignGroups: {
    input: S.AssignGroupsInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/group-members",
      scope: "rewards:write",
      permission: "programs:write",
      tag: "Rewards",
      summary: "Move partners between groups",
      description:
        "Moves each partner to the group named (all or none; up to 500). A partner is in one group per program: naming a partner with two groups is refused. Only future commissions change.",
      example: { programId: 1, assignments: [{ partnerId: 3, groupId: 2 }] },
      errors: ["not_found", "conflict"],
      response: { description: "How many partners were moved.", example: { programId: 1, moved: 1 } },
    }),
  },
  preview: {
    input: S.PreviewInput,
    http: programRoutes({
      method: "POST",
      path: "/:programId/rewards/preview",
      scope: "rewards:read",
      tag: "Rewards",
      summary: "What a sale would earn",
      description:
        "The commission a first payment of this amount (and product or price) would earn by a partner's rewards (their group, and their tier now), a group's, the default group's, or a draft reward not saved yet; and which later payments would earn. Changes nothing.",
      example: { programId: 1, amountCents: 4900, partnerId: 3 },
      errors: ["not_found", "currency_mismatch", "unknown_product"],
      response: {
        description: "The preview.",
        example: {
          currency: "usd",
          groupId: 2,
          amountCents: 4900,
          commissionCents: 980,
          reward: { rewardId: 5, version: 1, event: "sale", kind: "percentage", value: 2000, recurring: { duration: "months", months: 12 }, tier: null },
          recurring: { duration: "months", months: 12 },
        },
      },
    }),
  },
  forPartner: {
    input: S.ForPartnerInput,
  },
  /** Each partner's group and its minimum payout (bus only: the commissions service's payout runs). */
  payoutMinimums: {
    input: S.PayoutMinimumsInput,
  },
  usesProducts: {
    input: S.ProgramIdInput,
  },
  defaultGroup: {
    input: S.ProgramIdInput,
  },
});
