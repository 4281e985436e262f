/**
 * Rewards: how partners earn (docs/rewards.md). Pure rules shared by the
 * programs service (which stores and validates rewards, and previews them)
 * and the commissions service (which applies them to a sale or a lead and
 * freezes the result on the commission).
 *
 * Money is integer minor units of the program's currency; a percentage is in
 * basis points (2000 = 20.00 %), applied with the one rounding rule of
 * money.ts (half up).
 */
import { percentageOfCents } from "./money";

/** What a reward pays for. No click rewards: clicks are free to farm. */
export type RewardEvent = "sale" | "lead";

/**
 * How a group's partners receive what they earn (docs/rewards.md, "Rewards other than cash"): `cash`, paid out by
 * payout runs by the partner's payout method (the default); `account_credit`, credit in the merchant's own app: a
 * payout run pays it by sending the merchant a `reward.earned` webhook with the amount, which the merchant applies;
 * `stripe_balance`, credit on the partner's Stripe customer balance (their `stripe_customer_id` metadata), made with
 * the program's restricted key, then `reward.earned` says it was applied.
 */
export type RewardForm = "cash" | "account_credit" | "stripe_balance";

/**
 * What a partner group gives the customers its partners refer (a double-sided reward: docs/rewards.md, "The referred
 * customer's discount"): a discount the merchant made at its billing platform, which the merchant's checkout applies
 * for a visitor who came through a referral link (the snippet's `svc.discount()`, or the API for a click id).
 */
export interface CustomerDiscount {
  /** Where the discount lives: a Stripe coupon, or a Paddle discount. */
  platform: "stripe" | "paddle";
  /** The Stripe coupon's id (Checkout's `discounts: [{ coupon }]`) or the Paddle discount's `dsc_...` id (Paddle.js's `discountId`). */
  id: string;
  /** A code the customer could type instead (a Stripe promotion code's code, a Paddle discount code), or null. */
  code: string | null;
  /** In plain words, for the referred visitor: "20% off your first 3 months". */
  description: string;
}

/** A percentage of the amount (basis points) or a flat amount (minor units) per sale line or lead. */
export type RewardKind = "percentage" | "flat";

/**
 * Which payments of a subscription earn: the first only, renewals for N
 * months counted from the subscription's first payment (a renewal exactly N
 * months later no longer earns), or every payment for the subscription's life.
 * A one-time sale is a first payment.
 */
export type RecurringRule = { duration: "first" } | { duration: "months"; months: number } | { duration: "lifetime" };

/**
 * Optional steps of a reward: once the partner's attributed revenue (minor
 * units) or number of sales in the calendar month of the sale (UTC) or all
 * time reaches a step's threshold, the step's value replaces the reward's.
 * Counted before the sale at hand; never applied retroactively.
 */
export interface TierRule {
  metric: "revenue" | "sales";
  period: "month" | "all_time";
  /** Ascending thresholds; each value is in the reward's kind (basis points or minor units). */
  steps: Array<{ threshold: number; value: number }>;
}

/** A reward's terms: what an edit changes (and what a new version holds). */
export interface RewardTerms {
  event: RewardEvent;
  kind: RewardKind;
  /** Basis points for a percentage, minor units for a flat amount. */
  value: number;
  /** Sale rewards only (null for a lead reward). */
  recurring: RecurringRule | null;
  /** The reward applies only to lines of these products (processor product ids) ... */
  productIds: string[];
  /** ... or of these prices; both empty: every line. */
  priceIds: string[];
  tiers: TierRule | null;
}

export interface Reward extends RewardTerms {
  id: number;
  programId: number;
  groupId: number;
  /** 1 at creation, +1 at every edit. */
  version: number;
}

/** One line of a sale: its amount and, when known, the product and price it is for. */
export interface SaleLine {
  amountCents: number;
  productId?: string | null;
  priceId?: string | null;
}

/** What a partner has already earned on, for tiered rewards (counted before the sale at hand). */
export interface TierStats {
  month: { revenueCents: number; sales: number };
  allTime: { revenueCents: number; sales: number };
}

export const NO_TIER_STATS: TierStats = { month: { revenueCents: 0, sales: 0 }, allTime: { revenueCents: 0, sales: 0 } };

/** The reward a commission line was computed from, as it was then (frozen on the commission). */
export interface FrozenReward {
  rewardId: number;
  version: number;
  event: RewardEvent;
  kind: RewardKind;
  /** The value applied: the tier's when a tier was reached, else the reward's. */
  value: number;
  recurring: RecurringRule | null;
  tier: { metric: TierRule["metric"]; period: TierRule["period"]; threshold: number; reachedWith: number } | null;
}

/** One line of a commission: the sale line, the reward chosen for it and what it earned. */
export interface CommissionLine extends FrozenReward {
  productId: string | null;
  priceId: string | null;
  lineAmountCents: number;
  commissionCents: number;
}

/** How specific a reward is for a line: 3 a price match, 2 a product match, 1 a reward for every line, 0 no match. */
export function specificity(reward: Pick<RewardTerms, "productIds" | "priceIds">, line: Pick<SaleLine, "productId" | "priceId">): 0 | 1 | 2 | 3 {
  if (!reward.productIds.length && !reward.priceIds.length) return 1;
  if (line.priceId && reward.priceIds.includes(line.priceId)) return 3;
  if (line.productId && reward.productIds.includes(line.productId)) return 2;
  return 0;
}

/** The value in force for a partner with these stats: the highest step reached, else the reward's own. */
export function valueInForce(reward: Pick<RewardTerms, "value" | "tiers">, stats: TierStats): { value: number; tier: FrozenReward["tier"] } {
  if (!reward.tiers) return { value: reward.value, tier: null };
  const { metric, period, steps } = reward.tiers;
  const figures = period === "month" ? stats.month : stats.allTime;
  const reachedWith = metric === "revenue" ? figures.revenueCents : figures.sales;
  let reached: { threshold: number; value: number } | null = null;
  for (const step of steps) if (reachedWith >= step.threshold) reached = step;
  return reached ? { value: reached.value, tier: { metric, period, threshold: reached.threshold, reachedWith } } : { value: reward.value, tier: null };
}

/** What a kind and value earn on an amount, in minor units. */
export function earnedCents(kind: RewardKind, value: number, amountCents: number): number {
  return kind === "percentage" ? percentageOfCents(amountCents, value) : value;
}

/**
 * Whether a payment earns under a recurring rule. `firstPaymentAt` is the
 * subscription's first payment; a payment that is not a renewal (a one-time
 * sale, a subscription's first payment) always earns.
 */
export function paymentEarns(rule: RecurringRule, payment: { isRenewal: boolean; firstPaymentAt: Date | null; occurredAt: Date }): boolean {
  if (!payment.isRenewal || rule.duration === "lifetime") return true;
  if (rule.duration === "first") return false;
  // A renewal whose first payment was never recorded here: nothing to count from, so it earns.
  if (!payment.firstPaymentAt) return true;
  const end = new Date(payment.firstPaymentAt);
  end.setUTCMonth(end.getUTCMonth() + rule.months);
  return payment.occurredAt < end;
}

/**
 * The reward for a line: among the rewards of the event whose conditions
 * match, the most specific (a price over a product over every line). Tie rule:
 * among equally specific rewards the one that pays more on this line (at the
 * value in force for the partner) wins, and of those the oldest (lowest id),
 * so the choice never depends on the order rewards are listed in.
 */
export function chooseReward<R extends Reward>(rewards: readonly R[], event: RewardEvent, line: SaleLine, stats: TierStats): R | null {
  let best: { reward: R; rank: number; pays: number } | null = null;
  for (const reward of rewards) {
    if (reward.event !== event) continue;
    const rank = specificity(reward, line);
    if (rank === 0) continue;
    const pays = earnedCents(reward.kind, valueInForce(reward, stats).value, line.amountCents);
    const better = !best || rank > best.rank || (rank === best.rank && (pays > best.pays || (pays === best.pays && reward.id < best.reward.id)));
    if (better) best = { reward, rank, pays };
  }
  return best?.reward ?? null;
}

export function freeze(reward: Reward, stats: TierStats): FrozenReward {
  const { value, tier } = valueInForce(reward, stats);
  return { rewardId: reward.id, version: reward.version, event: reward.event, kind: reward.kind, value, recurring: reward.recurring, tier };
}

export interface SalePayment {
  lines: readonly SaleLine[];
  /** A subscription renewal (not its first payment). */
  isRenewal: boolean;
  firstPaymentAt: Date | null;
  occurredAt: Date;
}

/** Why a sale or a lead earns nothing although it is attributed. */
export type NoRewardReason = "no_reward_applies" | "renewal_not_rewarded";

/**
 * What a sale earns: per line, the chosen reward applied to the line's
 * amount (a line whose reward does not cover this payment earns 0). The
 * commission is the sum of its lines; a sale of which no line is rewarded gets
 * none (a rewarded sale whose lines round to 0 cents gets a commission of 0).
 */
export function computeSaleCommission(
  rewards: readonly Reward[],
  payment: SalePayment,
  stats: TierStats,
): { amountCents: number; lines: CommissionLine[] } | { amountCents: 0; reason: NoRewardReason } {
  const lines: CommissionLine[] = [];
  let anyReward = false;
  for (const line of payment.lines) {
    const reward = chooseReward(rewards, "sale", line, stats);
    if (!reward) continue;
    anyReward = true;
    if (!paymentEarns(reward.recurring ?? { duration: "lifetime" }, payment)) continue;
    const frozen = freeze(reward, stats);
    lines.push({
      ...frozen,
      productId: line.productId ?? null,
      priceId: line.priceId ?? null,
      lineAmountCents: line.amountCents,
      commissionCents: earnedCents(frozen.kind, frozen.value, line.amountCents),
    });
  }
  const amountCents = lines.reduce((sum, l) => sum + l.commissionCents, 0);
  // A rewarded payment too small to earn a cent (20 % of 1 cent) still has its commission, of 0, as before rewards.
  if (lines.length) return { amountCents, lines: amountCents > 0 ? lines.filter((l) => l.commissionCents > 0) : lines };
  return { amountCents: 0, reason: anyReward ? "renewal_not_rewarded" : "no_reward_applies" };
}

/** What an attributed lead earns: the group's lead reward (flat), or nothing. */
export function computeLeadCommission(rewards: readonly Reward[]): { amountCents: number; line: CommissionLine } | null {
  const reward = chooseReward(rewards, "lead", { amountCents: 0 }, NO_TIER_STATS);
  if (!reward || reward.value <= 0) return null;
  const frozen = freeze(reward, NO_TIER_STATS);
  return { amountCents: frozen.value, line: { ...frozen, productId: null, priceId: null, lineAmountCents: 0, commissionCents: frozen.value } };
}

/** A sale without lines is one line of its whole amount (no product: only rewards for every line apply). */
export function linesOf(amountCents: number, lines: readonly SaleLine[] | null | undefined): SaleLine[] {
  return lines && lines.length ? [...lines] : [{ amountCents }];
}
