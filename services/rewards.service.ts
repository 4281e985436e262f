import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { broadcastConfirmed, call } from "./bus";
import { inputValidator, type Input } from "../shared/endpoint";
import { toDto } from "../shared/dto";
import { ConflictError, CurrencyMismatchError, InvalidRequestError, NotFoundError, UnknownProductError } from "../shared/errors";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { computeSaleCommission, freeze, NO_TIER_STATS, type Reward, type RewardTerms, type TierStats } from "../shared/domain/rewards";
import { getProgram, programCacheMixin } from "./clients/program-cache";
import { defaultGroupSeed } from "./rewards/default-group";
import { REWARDS } from "./rewards/endpoints";
import type { PartnerGroup, RewardsRepository, StoredReward } from "./rewards/repository";
import { createRewardsRepository } from "./rewards/storage";
import type { GroupWithRewards, PartnerRewards, RewardPreview } from "./rewards/contract";
import * as S from "./rewards/schemas";

type TermsInput = Input<typeof S.CreateRewardInput>;

type Methods = {
  defaultGroup(ctx: Context, programId: number): Promise<PartnerGroup>;
  liveGroup(ctx: Context, programId: number, groupId: number): Promise<PartnerGroup>;
  checkTerms(ctx: Context, programId: number, input: TermsInput): Promise<RewardTerms>;
  partnerRewards(ctx: Context, programId: number, partnerId: number): Promise<PartnerRewards>;
  changed(programId: number): Promise<void>;
};

type Vars = StorageVars<RewardsRepository>;

const MEMBER_IDS_LISTED = 100;

const isStripeId = (id: string) => /^(prod|price)_/.test(id);

/**
 * Owns how partners earn: a program's partner groups (each with its hold
 * days and minimum payout), the rewards of each group (per event, with
 * product conditions, recurring rule and tiers; every edit a new version) and
 * which group each partner is in. The commissions service asks it for a
 * partner's rewards and freezes what it applied on each commission
 * (docs/rewards.md).
 */
const RewardsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "rewards",
  mixins: [storageMixin(createRewardsRepository), programCacheMixin],

  // Params are validated against each action's declared input (rewards/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(REWARDS) } },

  actions: {
    /** The Rewards screen: every live group with its settings, partners moved into it and live rewards. */
    list: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        const { currency } = await getProgram(ctx, programId);
        await this.defaultGroup(ctx, programId);
        const [groups, rewards, counts] = await Promise.all([this.repo.listGroups(programId), this.repo.listRewards(programId, {}), this.repo.countMembers(programId)]);
        const live = groups.filter((g) => !g.archivedAt);
        const answer: GroupWithRewards[] = [];
        for (const group of live) {
          const memberIds = group.isDefault ? [] : await this.repo.listMembers(programId, group.id, MEMBER_IDS_LISTED);
          answer.push({ ...toDto(group), members: counts.get(group.id) ?? 0, memberIds, rewards: rewards.filter((r) => r.groupId === group.id).map(toDto) });
        }
        return { programId, currency, groups: answer };
      },
    },

    get: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.RewardIdInput>>) {
        const { programId, rewardId } = ctx.params;
        const reward = await this.repo.getReward(programId, rewardId);
        if (!reward) throw new NotFoundError(`No reward ${rewardId} in program ${programId}.`);
        return toDto({ ...reward, versions: await this.repo.listRewardVersions(rewardId) });
      },
    },

    create: {
      async handler(ctx: Context<TermsInput>) {
        const { programId, groupId } = ctx.params;
        await this.liveGroup(ctx, programId, groupId);
        const terms = await this.checkTerms(ctx, programId, ctx.params);
        const reward = await this.repo.createReward(programId, groupId, terms, new Date());
        await this.changed(programId);
        return toDto(reward);
      },
    },

    /** An edit is a new version: commissions already created keep the terms they were computed with. */
    update: {
      async handler(ctx: Context<Input<typeof S.UpdateRewardInput>>) {
        const { programId, rewardId } = ctx.params;
        const current = await this.repo.getReward(programId, rewardId);
        if (!current) throw new NotFoundError(`No reward ${rewardId} in program ${programId}.`);
        if (current.archivedAt) throw new ConflictError(`Reward ${rewardId} is archived: create a new reward instead.`);
        const terms = await this.checkTerms(ctx, programId, { ...ctx.params, groupId: current.groupId });
        const reward = await this.repo.updateReward(programId, rewardId, terms, new Date());
        if (!reward) throw new ConflictError(`Reward ${rewardId} was archived meanwhile.`);
        await this.changed(programId);
        return toDto(reward);
      },
    },

    /** An archived reward pays nothing new; archiving twice changes nothing. */
    archive: {
      async handler(ctx: Context<Input<typeof S.RewardIdInput>>) {
        const { programId, rewardId } = ctx.params;
        const reward = await this.repo.archiveReward(programId, rewardId, new Date());
        if (!reward) throw new NotFoundError(`No reward ${rewardId} in program ${programId}.`);
        await this.changed(programId);
        return toDto(reward);
      },
    },

    createGroup: {
      async handler(ctx: Context<Input<typeof S.CreateGroupInput>>) {
        const { programId, name, holdDays, minPayoutCents, customerDiscount, rewardAs } = ctx.params;
        const fallback = await this.defaultGroup(ctx, programId);
        const group = await this.repo.createGroup(programId, { name, holdDays: holdDays ?? fallback.holdDays, minPayoutCents, customerDiscount, rewardAs }, new Date());
        if (!group) throw new ConflictError(`Program ${programId} already has a group named '${name}'.`);
        await this.changed(programId);
        return toDto(group);
      },
    },

    updateGroup: {
      async handler(ctx: Context<Input<typeof S.UpdateGroupInput>>) {
        const { programId, groupId, ...patch } = ctx.params;
        await this.liveGroup(ctx, programId, groupId);
        const group = await this.repo.updateGroup(programId, groupId, patch, new Date());
        if (group === "conflict") throw new ConflictError(`Program ${programId} already has a group named '${patch.name}'.`);
        if (!group) throw new NotFoundError(`No group ${groupId} in program ${programId}.`);
        await this.changed(programId);
        return toDto(group);
      },
    },

    /** Its partners are back in the default group and its rewards archived; the default group cannot be archived. */
    archiveGroup: {
      async handler(ctx: Context<Input<typeof S.GroupIdInput>>) {
        const { programId, groupId } = ctx.params;
        const group = await this.liveGroup(ctx, programId, groupId);
        if (group.isDefault) throw new ConflictError("The default group cannot be archived: every partner not moved elsewhere is in it.");
        const archived = await this.repo.archiveGroup(programId, groupId, new Date());
        await this.changed(programId);
        return toDto(archived!);
      },
    },

    /** Moves partners between groups, all or none: their future commissions follow the new group's rewards. */
    assignGroups: {
      async handler(ctx: Context<Input<typeof S.AssignGroupsInput>>) {
        const { programId, assignments } = ctx.params;
        const fallback = await this.defaultGroup(ctx, programId);
        for (const groupId of new Set(assignments.map((a) => a.groupId))) await this.liveGroup(ctx, programId, groupId);
        const partnerIds = [...new Set(assignments.map((a) => a.partnerId))];
        const enrolled = new Set(await call(ctx, "programs.enrolledPartnerIds", { programId, partnerIds }));
        const strangers = partnerIds.filter((id) => !enrolled.has(id));
        if (strangers.length) throw new NotFoundError(`Not enrolled in program ${programId}: partner ${strangers.join(", ")}. Nobody was moved.`);
        await this.repo.assignGroups(programId, assignments, fallback.id, new Date());
        await this.changed(programId);
        return { programId, moved: partnerIds.length };
      },
    },

    /** What a sale would earn now, by a partner's (or a group's) rewards or by a draft reward; changes nothing. */
    preview: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PreviewInput>>): Promise<RewardPreview> {
        const { programId, amountCents, productId, priceId, partnerId, groupId, draft } = ctx.params;
        const { currency } = await getProgram(ctx, programId);
        let rewards: Reward[];
        let previewGroupId: number | null;
        if (draft) {
          const terms = await this.checkTerms(ctx, programId, { ...draft, programId, groupId: 0 });
          rewards = [{ ...terms, id: 0, version: 0, programId, groupId: 0 }];
          previewGroupId = null;
        } else if (groupId !== undefined) {
          await this.liveGroup(ctx, programId, groupId);
          rewards = await this.repo.listRewards(programId, { groupId });
          previewGroupId = groupId;
        } else {
          const found = partnerId === undefined ? null : await this.partnerRewards(ctx, programId, partnerId);
          const group = found?.group ?? (await this.defaultGroup(ctx, programId));
          rewards = found?.rewards ?? (await this.repo.listRewards(programId, { groupId: group.id }));
          previewGroupId = group.id;
        }
        const tiered = partnerId !== undefined && rewards.some((r) => r.tiers);
        const stats: TierStats = tiered ? await call(ctx, "commissions.tierStats", { programId, partnerId: partnerId!, at: new Date().toISOString() }) : NO_TIER_STATS;
        const outcome = computeSaleCommission(rewards, { lines: [{ amountCents, productId, priceId }], isRenewal: false, firstPaymentAt: null, occurredAt: new Date() }, stats);
        const line = "lines" in outcome ? outcome.lines[0] : null;
        const chosen = line ? rewards.find((r) => r.id === line.rewardId)! : null;
        const reward = chosen ? freeze(chosen, stats) : null;
        return { currency, groupId: previewGroupId, amountCents, commissionCents: outcome.amountCents, reward, recurring: reward?.recurring ?? null };
      },
    },

    /** Internal (processor): whether a live reward names products or prices. */
    usesProducts: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const rewards = await this.repo.listRewards(ctx.params.programId, {});
        return rewards.some((r) => r.productIds.length > 0 || r.priceIds.length > 0);
      },
    },

    /** Internal (programs' settings): the default group, whose hold days are the program's. */
    defaultGroup: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        return toDto(await this.defaultGroup(ctx, ctx.params.programId));
      },
    },

    /** Internal: the partner's group (the default unless moved) and its live rewards, for commissions and the portal. */
    forPartner: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ForPartnerInput>>) {
        return this.partnerRewards(ctx, ctx.params.programId, ctx.params.partnerId);
      },
    },

    payoutMinimums: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PayoutMinimumsInput>>) {
        const { programId, partnerIds } = ctx.params;
        const defaultGroup = await this.defaultGroup(ctx, programId);
        // A partner moved into an archived group earns by the default group's terms (partnerRewards): the same here.
        const groups = (await this.repo.listGroups(programId)).filter((g) => g.id !== defaultGroup.id && !g.archivedAt);
        const groupOf = new Map<number, (typeof groups)[number]>();
        for (const g of groups) for (const partnerId of await this.repo.listMembers(programId, g.id, Number.MAX_SAFE_INTEGER)) groupOf.set(partnerId, g);
        return partnerIds.map((partnerId) => {
          const group = groupOf.get(partnerId) ?? defaultGroup;
          return { partnerId, groupId: group.id, minPayoutCents: group.minPayoutCents, rewardAs: group.rewardAs };
        });
      },
    },
  },

  methods: {
    /** The program's default group, created with its sale reward from the program's rule on first use (404 for an unknown program). */
    async defaultGroup(ctx: Context, programId: number) {
      const program = await getProgram(ctx, programId);
      return this.repo.ensureDefaultGroup(programId, defaultGroupSeed(program), new Date());
    },

    async liveGroup(ctx: Context, programId: number, groupId: number) {
      await this.defaultGroup(ctx, programId);
      const group = await this.repo.getGroup(programId, groupId);
      if (!group) throw new NotFoundError(`No group ${groupId} in program ${programId}.`);
      if (group.archivedAt) throw new ConflictError(`Group ${groupId} is archived.`);
      return group;
    },

    /** The rules a schema cannot see: the program's currency, and product references the processor knows. */
    async checkTerms(ctx: Context, programId: number, input: TermsInput) {
      const { currency } = await getProgram(ctx, programId);
      if (input.currency !== undefined && input.currency !== currency) {
        throw new CurrencyMismatchError(`Program ${programId} pays in ${currency.toUpperCase()}; a reward in ${input.currency.toUpperCase()} cannot apply to it.`);
      }
      if (input.currency !== undefined && input.kind === "percentage") throw new InvalidRequestError("currency: a percentage reward has no currency; leave it out.");
      // The processor's ids are checked against the program's Stripe account; your own product ids are taken as they are.
      if (input.productIds.some(isStripeId) || input.priceIds.some(isStripeId)) {
        const { unknown } = await call(ctx, "processor.checkProducts", { programId, productIds: input.productIds, priceIds: input.priceIds });
        if (unknown.length)
          throw new UnknownProductError(`Unknown to the program's Stripe account: ${unknown.join(", ")}. Check the product and price ids in your Stripe dashboard.`, { unknown });
      }
      return {
        event: input.event,
        kind: input.kind,
        value: input.value,
        recurring: input.event === "sale" ? (input.recurring ?? { duration: "lifetime" }) : null,
        productIds: input.productIds,
        priceIds: input.priceIds,
        tiers: input.tiers ?? null,
      };
    },

    async partnerRewards(ctx: Context, programId: number, partnerId: number): Promise<PartnerRewards> {
      const fallback = await this.defaultGroup(ctx, programId);
      const memberOf = await this.repo.findMembership(programId, partnerId);
      const group = (memberOf !== null ? await this.repo.getGroup(programId, memberOf) : null) ?? fallback;
      const live = group.archivedAt ? fallback : group;
      const rewards: StoredReward[] = await this.repo.listRewards(programId, { groupId: live.id });
      const { currency } = await getProgram(ctx, programId);
      return {
        currency,
        group: { id: live.id, name: live.name, holdDays: live.holdDays, minPayoutCents: live.minPayoutCents, customerDiscount: live.customerDiscount, rewardAs: live.rewardAs },
        rewards: rewards.map(({ archivedAt: _a, createdAt: _c, updatedAt: _u, ...reward }) => reward),
      };
    },

    /** Every process's reward cache drops the program before the change is answered. */
    changed(programId: number) {
      return broadcastConfirmed(this.broker, "rewards.changed", { programId });
    },
  },
};

export default RewardsService;
