/**
 * The Rewards screen's data (GET /rewards and the program's partners) and its words: a reward's terms, its tiers and
 * a preview (POST /rewards/preview) said as sentences a merchant reads (docs/rewards.md).
 */
import { isoExponent } from "../../../../shared/domain/currencies";
import type { FrozenReward, RecurringRule, Reward, TierRule } from "../../../../shared/domain/rewards";
import { api, query, type Page } from "../../lib/api";
import { count, money, percent } from "../../lib/format";

export type { RecurringRule, Reward, TierRule };

/** A group as GET /rewards lists it: its settings, the partners moved into it and its live rewards. */
export interface Group {
  id: number;
  name: string;
  isDefault: boolean;
  holdDays: number;
  minPayoutCents: number;
  /** What the customers its partners refer get (a double-sided reward), or null. */
  customerDiscount: CustomerDiscount | null;
  /** How many partners were moved into it (the default group: 0, its partners are everyone else). */
  members: number;
  /** Their ids (possibly fewer than `members`). */
  memberIds: number[];
  rewards: Reward[];
}

export interface Partner {
  partnerId: number;
  name: string;
  email: string | null;
  status: string;
}

/** What POST /rewards/preview answers. */
export interface RewardPreview {
  groupId: number | null;
  amountCents: number;
  commissionCents: number;
  reward: FrozenReward | null;
  recurring: RecurringRule | null;
}

/** Everything the screen shows: the groups with their rewards, and every partner enrolled (sorted by name). */
export interface RewardsData {
  groups: Group[];
  partners: Partner[];
}

/** The partners enrolled in the program: pages of 100, at most 1000. */
async function loadPartners(programPath: (rest: string) => string): Promise<Partner[]> {
  const all: Partner[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 10; n++) {
    const page = await api<Page<Partner>>("GET", programPath(`/partners${query({ limit: 100, cursor })}`));
    all.push(...page.data);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

export async function loadRewards(programPath: (rest: string) => string): Promise<RewardsData> {
  const [list, partners] = await Promise.all([api<{ groups: Group[] }>("GET", programPath("/rewards")), loadPartners(programPath)]);
  return { groups: list.groups, partners };
}

// ---- who is where ----

const isNamedDefault = (g: Group): boolean => g.name.trim().toLowerCase() === "default";

/** Whether the group's heading says it is the default group (not when its name already does). */
export const showsDefaultBadge = (g: Group): boolean => g.isDefault && !isNamedDefault(g);

/** A group as the pickers name it. */
export const groupOption = (g: Group): string => (showsDefaultBadge(g) ? `${g.name} (default group)` : g.name);

export const defaultGroup = (groups: Group[]): Group | undefined => groups.find((g) => g.isDefault) ?? groups[0];

/** The group a partner is in: the one that lists them, else the default group. */
export const groupOf = (groups: Group[], partnerId: number): Group | undefined => groups.find((g) => !g.isDefault && g.memberIds.includes(partnerId)) ?? defaultGroup(groups);

export function partnerName(partners: Partner[], partnerId: number): string {
  return partners.find((p) => p.partnerId === partnerId)?.name ?? `Partner ${partnerId}`;
}

// ---- amounts typed and shown ----

/** Minor units back to what an amount field shows ("49" for 4900 cents). */
export const fromMinor = (minor: number, currency: string): string => String(minor / 10 ** (isoExponent(currency) ?? 2));

/** Product or price ids typed with commas between them. */
export const idList = (text: string): string[] =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const plural = (n: number, one: string, many: string): string => `${count(n)} ${n === 1 ? one : many}`;

/** A value in a reward's kind: basis points as a percentage, else minor units as money. */
const valueText = (kind: Reward["kind"], value: number, currency: string): string => (kind === "percentage" ? percent(value) : money(value, currency));

// ---- a reward in words ----

export function recurringWords(recurring: RecurringRule | null | undefined): string {
  if (!recurring || recurring.duration === "lifetime") return "every payment for the subscription's life";
  if (recurring.duration === "first") return "the first payment only";
  return `the first payment and renewals for ${plural(recurring.months, "month", "months")}`;
}

export function tierWords(tiers: TierRule, kind: Reward["kind"], currency: string): string {
  const period = tiers.period === "month" ? "in the month" : "all time";
  const steps = tiers.steps.map((s) => `${valueText(kind, s.value, currency)} from ${tiers.metric === "revenue" ? money(s.threshold, currency) : `${count(s.threshold)} sales`}`);
  return `tiers on ${tiers.metric} ${period}: ${steps.join(", ")}`;
}

/** A reward's terms in words: "20% of each sale; every payment for the subscription's life". */
export function describeReward(r: Reward, currency: string): string {
  if (r.event === "lead") return `${money(r.value, currency)} per new customer (lead), once`;
  const parts = [`${valueText(r.kind, r.value, currency)} ${r.kind === "percentage" ? "of each sale" : "per sale"}`, recurringWords(r.recurring)];
  if (r.productIds.length) parts.push(`only products ${r.productIds.join(", ")}`);
  if (r.priceIds.length) parts.push(`only prices ${r.priceIds.join(", ")}`);
  if (r.tiers) parts.push(tierWords(r.tiers, r.kind, currency));
  return parts.join("; ");
}

export function groupSummary(g: Group, currency: string): string {
  return `Commissions held ${plural(g.holdDays, "day", "days")} · minimum payout ${money(g.minPayoutCents, currency)}`;
}

export interface CustomerDiscount {
  platform: "stripe" | "paddle";
  id: string;
  code: string | null;
  description: string;
}

/** "Referred customers get 20% off your first month (Stripe coupon FRIENDS20, code FRIENDS20)". */
export function customerDiscountWords(d: CustomerDiscount | null): string {
  if (!d) return "Referred customers get no discount.";
  const where = d.platform === "stripe" ? `Stripe coupon ${d.id}` : `Paddle discount ${d.id}`;
  return `Referred customers get ${d.description} (${where}${d.code ? `, code ${d.code}` : ""}).`;
}

/**
 * A preview in words: the amount per payment and for how long, by the recurring rule:
 * "A $49.00 monthly plan pays $9.80 for 12 months (...)".
 */
export function previewWords(preview: RewardPreview, amountCents: number, product: string, currency: string): string {
  const what = (plan: string) => `A ${money(amountCents, currency)} ${plan}${product ? ` of ${product}` : ""}`;
  if (!preview.reward || preview.commissionCents === 0) return `${what("sale")} earns nothing by these rewards: none covers it.`;
  const pays = money(preview.commissionCents, currency);
  const tier = preview.reward.tier ? ` (a tier is reached: ${valueText(preview.reward.kind, preview.reward.value, currency)})` : "";
  const r = preview.recurring ?? { duration: "lifetime" };
  if (preview.reward.event === "lead") return `Each new customer pays ${pays}, once${tier}.`;
  if (r.duration === "first") return `${what("sale")} pays ${pays} on the first payment only; renewals earn nothing${tier}.`;
  if (r.duration === "months") {
    const months = plural(r.months, "month", "months");
    return `${what("monthly plan")} pays ${pays} for ${months} (each payment in the subscription's first ${months} earns it)${tier}.`;
  }
  return `${what("monthly plan")} pays ${pays} on every payment for the subscription's life${tier}.`;
}
