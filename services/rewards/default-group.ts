import type { CommissionRule } from "../../shared/domain/commission-rules";
import type { RecurringRule, RewardTerms } from "../../shared/domain/rewards";
import type { DefaultGroupSeed } from "./repository";

/**
 * A program's one rule of before rewards (commission rule, hold days,
 * recurring months) as its default group and that group's sale reward: what
 * the first access to a program's rewards creates. A rule paying nothing
 * becomes no reward. Existing commissions are never recomputed.
 */
export function defaultGroupSeed(program: { commissionRule: CommissionRule; holdDays: number; recurringCommissionMonths: number | null }): DefaultGroupSeed {
  const rule = program.commissionRule;
  const value = rule.type === "percentage" ? rule.basisPoints : rule.amountCents;
  const months = program.recurringCommissionMonths;
  const recurring: RecurringRule = months === null ? { duration: "lifetime" } : months === 0 ? { duration: "first" } : { duration: "months", months };
  const saleReward: RewardTerms | null = value > 0 ? { event: "sale", kind: rule.type, value, recurring, productIds: [], priceIds: [], tiers: null } : null;
  return { holdDays: program.holdDays, saleReward };
}
