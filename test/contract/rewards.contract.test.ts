/**
 * The rewards storage contract (services/rewards/repository.ts) on every
 * reachable backend: partner groups (one default per program, names unique
 * among live groups), rewards with their versions, archiving, and which group
 * each partner is in (one per program).
 */
import { defaultGroupSeed } from "../../services/rewards/default-group";
import type { PartnerGroup, RewardsRepository } from "../../services/rewards/repository";
import { createRewardsRepository } from "../../services/rewards/storage";
import type { RewardTerms } from "../../shared/domain/rewards";
import { at, backends, counter, SECOND, useRepository } from "./harness";

const nextProgram = counter(100);
const nextPartner = counter(1000);

const saleTerms: RewardTerms = { event: "sale", kind: "percentage", value: 2000, recurring: { duration: "lifetime" }, productIds: [], priceIds: [], tiers: null };
const productTerms: RewardTerms = {
  event: "sale",
  kind: "flat",
  value: 500,
  recurring: { duration: "months", months: 6 },
  productIds: ["prod_a", "prod_b"],
  priceIds: ["price_c"],
  tiers: {
    metric: "revenue",
    period: "month",
    steps: [
      { threshold: 100_000, value: 700 },
      { threshold: 500_000, value: 900 },
    ],
  },
};
const leadTerms: RewardTerms = { event: "lead", kind: "flat", value: 300, recurring: null, productIds: [], priceIds: [], tiers: null };

/** The seed of a program paying 15 % for 12 months, held 14 days. */
const seed = () => defaultGroupSeed({ commissionRule: { type: "percentage", basisPoints: 1500 }, holdDays: 14, recurringCommissionMonths: 12 });

describe.each(backends)("rewards repository contract on %s", (_name, backend) => {
  const repo = useRepository<RewardsRepository>(backend, createRewardsRepository);

  /** A program with its default group. */
  async function program(): Promise<{ programId: number; fallback: PartnerGroup }> {
    const programId = nextProgram();
    return { programId, fallback: await repo().ensureDefaultGroup(programId, seed(), at(0)) };
  }

  describe("the default group", () => {
    it("is created once, with the program's rule as its sale reward (version 1, with its history)", async () => {
      const programId = nextProgram();
      const group = await repo().ensureDefaultGroup(programId, seed(), at(0));
      expect(Number.isInteger(group.id)).toBe(true);
      expect(group).toEqual({
        id: group.id,
        programId,
        name: "Default",
        isDefault: true,
        holdDays: 14,
        minPayoutCents: 0,
        customerDiscount: null,
        rewardAs: "cash",
        archivedAt: null,
        createdAt: at(0),
        updatedAt: at(0),
      });
      const rewards = await repo().listRewards(programId, {});
      expect(rewards).toEqual([
        {
          id: rewards[0].id,
          programId,
          groupId: group.id,
          version: 1,
          ...seed().saleReward!,
          archivedAt: null,
          createdAt: at(0),
          updatedAt: at(0),
        },
      ]);
      expect(await repo().listRewardVersions(rewards[0].id)).toEqual([{ rewardId: rewards[0].id, version: 1, terms: seed().saleReward, createdAt: at(0) }]);

      // Later calls return it unchanged, whatever the program's rule says now, and seed nothing more.
      const again = await repo().ensureDefaultGroup(programId, { holdDays: 99, saleReward: leadTerms }, at(SECOND));
      expect(again).toEqual(group);
      expect(await repo().listRewards(programId, { includeArchived: true })).toEqual(rewards);
      expect(await repo().listGroups(programId)).toEqual([group]);
    });

    it("seeds no reward from a rule paying nothing", async () => {
      const programId = nextProgram();
      const group = await repo().ensureDefaultGroup(programId, { holdDays: 0, saleReward: null }, at(0));
      expect(group).toMatchObject({ isDefault: true, holdDays: 0 });
      expect(await repo().listRewards(programId, { includeArchived: true })).toEqual([]);
    });

    it("is created once when first accesses race", async () => {
      const programId = nextProgram();
      const groups = await Promise.all(Array.from({ length: 6 }, (_, i) => repo().ensureDefaultGroup(programId, seed(), at(i * SECOND))));
      expect(new Set(groups.map((g) => g.id)).size).toBe(1);
      expect(await repo().listGroups(programId)).toEqual([groups[0]]);
      expect(await repo().listRewards(programId, { includeArchived: true })).toHaveLength(1);
    });
  });

  describe("groups", () => {
    it("creates groups, lists them default first then by id (archived too), and scopes them by program", async () => {
      const { programId, fallback } = await program();
      const vip = await repo().createGroup(programId, { name: "VIP", holdDays: 7, minPayoutCents: 5_000 }, at(SECOND));
      expect(vip).toEqual({
        id: vip!.id,
        programId,
        name: "VIP",
        isDefault: false,
        holdDays: 7,
        minPayoutCents: 5_000,
        customerDiscount: null,
        rewardAs: "cash",
        archivedAt: null,
        createdAt: at(SECOND),
        updatedAt: at(SECOND),
      });
      const agencies = (await repo().createGroup(programId, { name: "Agencies", holdDays: 30, minPayoutCents: 0 }, at(2 * SECOND)))!;
      const archived = (await repo().archiveGroup(programId, vip!.id, at(3 * SECOND)))!;

      expect(await repo().listGroups(programId)).toEqual([fallback, archived, agencies]);
      expect(await repo().getGroup(programId, agencies.id)).toEqual(agencies);
      expect(await repo().getGroup(nextProgram(), agencies.id)).toBeNull();
      expect(await repo().getGroup(programId, 987_654)).toBeNull();
      expect(await repo().listGroups(nextProgram())).toEqual([]);
    });

    it("refuses a second live group of the same name, whatever its case; an archived group's name is free again", async () => {
      const { programId } = await program();
      const first = (await repo().createGroup(programId, { name: "Influencers", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      expect(await repo().createGroup(programId, { name: "influencers", holdDays: 1, minPayoutCents: 1 }, at(SECOND))).toBeNull();
      expect(await repo().createGroup(programId, { name: "default", holdDays: 1, minPayoutCents: 1 }, at(SECOND))).toBeNull();
      expect(await repo().listGroups(programId)).toHaveLength(2);
      // Another program may use the name.
      expect(await repo().createGroup(nextProgram(), { name: "Influencers", holdDays: 30, minPayoutCents: 0 }, at(0))).not.toBeNull();

      await repo().archiveGroup(programId, first.id, at(2 * SECOND));
      const second = await repo().createGroup(programId, { name: "INFLUENCERS", holdDays: 5, minPayoutCents: 0 }, at(3 * SECOND));
      expect(second).toMatchObject({ name: "INFLUENCERS", archivedAt: null });
      expect(second!.id).not.toBe(first.id);
    });

    it("updates the fields given, says conflict for another live group's name, and null for a missing or archived group", async () => {
      const { programId, fallback } = await program();
      const group = (await repo().createGroup(programId, { name: "Partners", holdDays: 30, minPayoutCents: 1_000 }, at(0)))!;
      const other = (await repo().createGroup(programId, { name: "Resellers", holdDays: 30, minPayoutCents: 0 }, at(0)))!;

      const held = await repo().updateGroup(programId, group.id, { holdDays: 0 }, at(SECOND));
      expect(held).toEqual({ ...group, holdDays: 0, updatedAt: at(SECOND) });
      const renamed = await repo().updateGroup(programId, group.id, { name: "Top partners", minPayoutCents: 2_500 }, at(2 * SECOND));
      expect(renamed).toEqual({ ...group, name: "Top partners", holdDays: 0, minPayoutCents: 2_500, updatedAt: at(2 * SECOND) });
      // Its own name in another case is no conflict.
      expect(await repo().updateGroup(programId, group.id, { name: "TOP PARTNERS" }, at(3 * SECOND))).toMatchObject({ name: "TOP PARTNERS" });
      expect(await repo().updateGroup(programId, fallback.id, { holdDays: 21 }, at(3 * SECOND))).toMatchObject({ isDefault: true, holdDays: 21 });

      // The referred customers' discount: set, kept by other changes, removed with null.
      const discount = { platform: "stripe" as const, id: "coupon_friends20", code: "FRIENDS20", description: "20% off your first month" };
      expect(await repo().updateGroup(programId, group.id, { customerDiscount: discount }, at(3 * SECOND))).toMatchObject({ customerDiscount: discount });
      expect(await repo().updateGroup(programId, group.id, { holdDays: 0 }, at(3 * SECOND))).toMatchObject({ customerDiscount: discount });
      expect(await repo().updateGroup(programId, group.id, { customerDiscount: null }, at(3 * SECOND))).toMatchObject({ customerDiscount: null });
      const created = await repo().createGroup(programId, { name: "Customers", holdDays: 0, minPayoutCents: 0, customerDiscount: discount }, at(3 * SECOND));
      expect((await repo().getGroup(programId, created!.id))!.customerDiscount).toEqual(discount);
      // Account credit instead of cash: set at creation or by a change, kept by other changes.
      expect(await repo().updateGroup(programId, created!.id, { rewardAs: "account_credit" }, at(3 * SECOND))).toMatchObject({ rewardAs: "account_credit" });
      expect(await repo().updateGroup(programId, created!.id, { holdDays: 1 }, at(3 * SECOND))).toMatchObject({ rewardAs: "account_credit" });
      expect(await repo().createGroup(programId, { name: "Credit", holdDays: 0, minPayoutCents: 0, rewardAs: "account_credit" }, at(3 * SECOND))).toMatchObject({
        rewardAs: "account_credit",
      });

      expect(await repo().updateGroup(programId, group.id, { name: "resellers" }, at(4 * SECOND))).toBe("conflict");
      expect(await repo().updateGroup(programId, group.id, { name: "Default", holdDays: 1 }, at(4 * SECOND))).toBe("conflict");
      expect(await repo().getGroup(programId, group.id)).toMatchObject({ name: "TOP PARTNERS", holdDays: 0, updatedAt: at(3 * SECOND) });

      expect(await repo().updateGroup(programId, 987_654, { holdDays: 1 }, at(5 * SECOND))).toBeNull();
      expect(await repo().updateGroup(nextProgram(), other.id, { holdDays: 1 }, at(5 * SECOND))).toBeNull();
      await repo().archiveGroup(programId, other.id, at(5 * SECOND));
      expect(await repo().updateGroup(programId, other.id, { holdDays: 1 }, at(6 * SECOND))).toBeNull();
      // The archived group's name is no conflict any more.
      expect(await repo().updateGroup(programId, group.id, { name: "Resellers" }, at(7 * SECOND))).toMatchObject({ name: "Resellers" });
    });

    it("archives a group once: its partners are back in the default group and its rewards archived; never the default group", async () => {
      const { programId, fallback } = await program();
      const group = (await repo().createGroup(programId, { name: "Leaving", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      const stays = (await repo().createGroup(programId, { name: "Staying", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      const [p1, p2, p3] = [nextPartner(), nextPartner(), nextPartner()];
      await repo().assignGroups(
        programId,
        [
          { partnerId: p1, groupId: group.id },
          { partnerId: p2, groupId: group.id },
          { partnerId: p3, groupId: stays.id },
        ],
        fallback.id,
        at(SECOND),
      );
      const live = await repo().createReward(programId, group.id, saleTerms, at(SECOND));
      const gone = await repo().createReward(programId, group.id, leadTerms, at(SECOND));
      await repo().archiveReward(programId, gone.id, at(2 * SECOND));
      const elsewhere = await repo().createReward(programId, stays.id, saleTerms, at(SECOND));

      const archived = await repo().archiveGroup(programId, group.id, at(3 * SECOND));
      expect(archived).toEqual({ ...group, archivedAt: at(3 * SECOND), updatedAt: at(3 * SECOND) });
      expect(await repo().findMembership(programId, p1)).toBeNull();
      expect(await repo().findMembership(programId, p2)).toBeNull();
      expect(await repo().findMembership(programId, p3)).toBe(stays.id);
      expect(await repo().listMembers(programId, group.id, 100)).toEqual([]);
      expect(await repo().getReward(programId, live.id)).toMatchObject({ archivedAt: at(3 * SECOND), updatedAt: at(3 * SECOND) });
      // A reward archived before keeps its date.
      expect(await repo().getReward(programId, gone.id)).toMatchObject({ archivedAt: at(2 * SECOND), updatedAt: at(2 * SECOND) });
      expect(await repo().getReward(programId, elsewhere.id)).toMatchObject({ archivedAt: null });

      // Twice: the first date stays.
      expect(await repo().archiveGroup(programId, group.id, at(4 * SECOND))).toEqual({ ...group, archivedAt: at(3 * SECOND), updatedAt: at(4 * SECOND) });
      expect(await repo().archiveGroup(programId, fallback.id, at(4 * SECOND))).toBeNull();
      expect(await repo().getGroup(programId, fallback.id)).toEqual(fallback);
      expect(await repo().archiveGroup(programId, 987_654, at(4 * SECOND))).toBeNull();
      expect(await repo().archiveGroup(nextProgram(), stays.id, at(4 * SECOND))).toBeNull();
    });
  });

  describe("rewards", () => {
    it("creates a reward at version 1 with its history row, every term kept", async () => {
      const { programId, fallback } = await program();
      const reward = await repo().createReward(programId, fallback.id, productTerms, at(SECOND));
      expect(Number.isInteger(reward.id)).toBe(true);
      expect(reward).toEqual({ id: reward.id, programId, groupId: fallback.id, version: 1, ...productTerms, archivedAt: null, createdAt: at(SECOND), updatedAt: at(SECOND) });
      expect(await repo().getReward(programId, reward.id)).toEqual(reward);
      expect(await repo().getReward(nextProgram(), reward.id)).toBeNull();
      expect(await repo().getReward(programId, 987_654)).toBeNull();
      expect(await repo().listRewardVersions(reward.id)).toEqual([{ rewardId: reward.id, version: 1, terms: productTerms, createdAt: at(SECOND) }]);
    });

    it("refuses a reward in a group that does not exist", async () => {
      const { programId } = await program();
      await expect(repo().createReward(programId, 987_654, saleTerms, at(0))).rejects.toThrow();
      expect(await repo().listRewards(programId, { groupId: 987_654, includeArchived: true })).toEqual([]);
    });

    it("makes every edit a new version, keeping the history of the terms", async () => {
      const { programId, fallback } = await program();
      const reward = await repo().createReward(programId, fallback.id, saleTerms, at(0));
      const v2 = await repo().updateReward(programId, reward.id, productTerms, at(SECOND));
      expect(v2).toEqual({ ...reward, ...productTerms, version: 2, updatedAt: at(SECOND) });
      const v3Terms: RewardTerms = { ...saleTerms, value: 2500, recurring: { duration: "first" } };
      const v3 = await repo().updateReward(programId, reward.id, v3Terms, at(2 * SECOND));
      expect(v3).toEqual({ ...reward, ...v3Terms, version: 3, updatedAt: at(2 * SECOND) });
      expect(await repo().getReward(programId, reward.id)).toEqual(v3);
      expect(await repo().listRewardVersions(reward.id)).toEqual([
        { rewardId: reward.id, version: 1, terms: saleTerms, createdAt: at(0) },
        { rewardId: reward.id, version: 2, terms: productTerms, createdAt: at(SECOND) },
        { rewardId: reward.id, version: 3, terms: v3Terms, createdAt: at(2 * SECOND) },
      ]);

      expect(await repo().updateReward(nextProgram(), reward.id, saleTerms, at(3 * SECOND))).toBeNull();
      expect(await repo().updateReward(programId, 987_654, saleTerms, at(3 * SECOND))).toBeNull();
      expect(await repo().listRewardVersions(987_654)).toEqual([]);
    });

    it("gives concurrent edits one version each", async () => {
      const { programId, fallback } = await program();
      const reward = await repo().createReward(programId, fallback.id, saleTerms, at(0));
      const edits = await Promise.all([1, 2, 3, 4].map((n) => repo().updateReward(programId, reward.id, { ...saleTerms, value: 1000 * n }, at(n * SECOND))));
      expect(edits.map((e) => e!.version).sort()).toEqual([2, 3, 4, 5]);
      const history = await repo().listRewardVersions(reward.id);
      expect(history.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
      const last = await repo().getReward(programId, reward.id);
      expect(last!.value).toBe(history[4].terms.value);
    });

    it("archives a reward once: it pays nothing new, cannot be edited, and lists only when asked", async () => {
      const { programId, fallback } = await program();
      const group = (await repo().createGroup(programId, { name: "Second", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      const [seeded] = await repo().listRewards(programId, {});
      const inGroup = await repo().createReward(programId, group.id, leadTerms, at(SECOND));
      const second = await repo().createReward(programId, fallback.id, productTerms, at(SECOND));

      const archived = await repo().archiveReward(programId, second.id, at(2 * SECOND));
      expect(archived).toEqual({ ...second, archivedAt: at(2 * SECOND), updatedAt: at(2 * SECOND) });
      expect(await repo().archiveReward(programId, second.id, at(3 * SECOND))).toEqual({ ...second, archivedAt: at(2 * SECOND), updatedAt: at(3 * SECOND) });
      expect(await repo().updateReward(programId, second.id, saleTerms, at(4 * SECOND))).toBeNull();
      expect(await repo().listRewardVersions(second.id)).toHaveLength(1);
      expect(await repo().archiveReward(programId, 987_654, at(4 * SECOND))).toBeNull();
      expect(await repo().archiveReward(nextProgram(), inGroup.id, at(4 * SECOND))).toBeNull();

      // By group (the default group was created first), then id; archived ones only when asked.
      const ids = async (filter: { groupId?: number; includeArchived?: boolean }) => (await repo().listRewards(programId, filter)).map((r) => r.id);
      expect(fallback.id).toBeLessThan(group.id);
      expect(await ids({})).toEqual([seeded.id, inGroup.id]);
      expect(await ids({ includeArchived: true })).toEqual([seeded.id, second.id, inGroup.id]);
      expect(await ids({ groupId: fallback.id })).toEqual([seeded.id]);
      expect(await ids({ groupId: fallback.id, includeArchived: true })).toEqual([seeded.id, second.id]);
      expect(await ids({ groupId: group.id })).toEqual([inGroup.id]);
      expect(await repo().listRewards(nextProgram(), { includeArchived: true })).toEqual([]);
    });
  });

  describe("members", () => {
    it("moves partners between groups: one group per partner and program, the default group by having no row", async () => {
      const { programId, fallback } = await program();
      const a = (await repo().createGroup(programId, { name: "A", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      const b = (await repo().createGroup(programId, { name: "B", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      const [p1, p2, p3] = [nextPartner(), nextPartner(), nextPartner()];
      expect(await repo().findMembership(programId, p1)).toBeNull();

      await repo().assignGroups(
        programId,
        [
          { partnerId: p3, groupId: a.id },
          { partnerId: p1, groupId: a.id },
          { partnerId: p2, groupId: b.id },
        ],
        fallback.id,
        at(SECOND),
      );
      expect(await repo().findMembership(programId, p1)).toBe(a.id);
      expect(await repo().findMembership(programId, p2)).toBe(b.id);
      expect(await repo().listMembers(programId, a.id, 100)).toEqual([p1, p3]);
      expect(await repo().listMembers(programId, a.id, 1)).toEqual([p1]);
      expect(await repo().listMembers(programId, a.id, 0)).toEqual([]);
      expect(await repo().countMembers(programId)).toEqual(
        new Map([
          [a.id, 2],
          [b.id, 1],
        ]),
      );

      // Moving again replaces the partner's group; to the default group removes the row.
      await repo().assignGroups(
        programId,
        [
          { partnerId: p1, groupId: b.id },
          { partnerId: p3, groupId: fallback.id },
        ],
        fallback.id,
        at(2 * SECOND),
      );
      expect(await repo().findMembership(programId, p1)).toBe(b.id);
      expect(await repo().findMembership(programId, p3)).toBeNull();
      expect(await repo().listMembers(programId, b.id, 100)).toEqual([p1, p2]);
      expect(await repo().countMembers(programId)).toEqual(new Map([[b.id, 2]]));
      // A partner moved to the default group again, having no row: nothing changes.
      await repo().assignGroups(programId, [{ partnerId: p3, groupId: fallback.id }], fallback.id, at(3 * SECOND));
      expect(await repo().countMembers(programId)).toEqual(new Map([[b.id, 2]]));

      // The same partner in another program is another membership.
      const other = await program();
      const c = (await repo().createGroup(other.programId, { name: "C", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      await repo().assignGroups(other.programId, [{ partnerId: p1, groupId: c.id }], other.fallback.id, at(SECOND));
      expect(await repo().findMembership(other.programId, p1)).toBe(c.id);
      expect(await repo().findMembership(programId, p1)).toBe(b.id);
      expect(await repo().countMembers(nextProgram())).toEqual(new Map());
    });

    it("moves all or none: an unknown group moves nobody", async () => {
      const { programId, fallback } = await program();
      const a = (await repo().createGroup(programId, { name: "A", holdDays: 30, minPayoutCents: 0 }, at(0)))!;
      const [p1, p2] = [nextPartner(), nextPartner()];
      await repo().assignGroups(programId, [{ partnerId: p2, groupId: a.id }], fallback.id, at(SECOND));
      await expect(
        repo().assignGroups(
          programId,
          [
            { partnerId: p1, groupId: a.id },
            { partnerId: p2, groupId: fallback.id },
            { partnerId: nextPartner(), groupId: 987_654 },
          ],
          fallback.id,
          at(2 * SECOND),
        ),
      ).rejects.toThrow();
      expect(await repo().findMembership(programId, p1)).toBeNull();
      expect(await repo().findMembership(programId, p2)).toBe(a.id);
      expect(await repo().countMembers(programId)).toEqual(new Map([[a.id, 1]]));
    });

    it("keeps one group per partner when moves of the same partner race", async () => {
      const { programId, fallback } = await program();
      const groups = await Promise.all(["R1", "R2", "R3", "R4"].map((name) => repo().createGroup(programId, { name, holdDays: 30, minPayoutCents: 0 }, at(0))));
      const partnerId = nextPartner();
      await Promise.all(groups.map((g, i) => repo().assignGroups(programId, [{ partnerId, groupId: g!.id }], fallback.id, at(i * SECOND))));
      const memberOf = await repo().findMembership(programId, partnerId);
      expect(groups.map((g) => g!.id)).toContain(memberOf);
      expect(await repo().countMembers(programId)).toEqual(new Map([[memberOf!, 1]]));
    });
  });
});
