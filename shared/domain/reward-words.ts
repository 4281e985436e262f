/**
 * A commission's reward in words, for the partner portal's commissions list
 * ("20% of each sale", "$10.00 per new customer"): read from the reward lines
 * frozen on the commission when it was created (rewards.ts), so the words say
 * what earned it then, whatever the program's rewards are now. Pure.
 */
import { isoExponent } from "./currencies";
import type { FrozenReward } from "./rewards";

/** Minor units as an amount of `currency` in English ("$10.00", "€5.50", "¥500"), with the ISO 4217 exponent. */
export function moneyWords(minor: number, currency: string): string {
  const digits = isoExponent(currency) ?? 2;
  const amount = minor / 10 ** digits;
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency: currency.toUpperCase(), minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount);
  } catch {
    return `${amount.toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

/** Basis points as a percentage: 2000 is "20%", 1250 is "12.5%". */
export const percentWords = (basisPoints: number): string => new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 2 }).format(basisPoints / 10_000);

/** The tier a line's value came from: "(tier reached: 10 sales in the month)". */
function tierWords(tier: NonNullable<FrozenReward["tier"]>, currency: string): string {
  const threshold = tier.metric === "revenue" ? `${moneyWords(tier.threshold, currency)} of sales` : `${tier.threshold} ${tier.threshold === 1 ? "sale" : "sales"}`;
  return ` (tier reached: ${threshold} ${tier.period === "month" ? "in the month" : "in all"})`;
}

/** One frozen reward in words: "20% of each sale", "$10.00 per sale", "$10.00 per new customer". */
export function rewardLineWords(line: Pick<FrozenReward, "event" | "kind" | "value" | "tier">, currency: string): string {
  const value = line.kind === "percentage" ? percentWords(line.value) : moneyWords(line.value, currency);
  // A lead reward is a flat amount (rewards.ts): it pays once per customer the partner referred.
  const what = line.event === "lead" ? `${value} per new customer` : line.kind === "percentage" ? `${value} of each sale` : `${value} per sale`;
  return line.tier ? `${what}${tierWords(line.tier, currency)}` : what;
}

/**
 * The reward that produced a commission: its lines' rewards in words, each said once, in the order of the lines,
 * joined with "; " (a sale whose products earn under different rewards). Null for a commission without reward
 * lines (created before rewards existed).
 */
export function commissionRewardWords(lines: ReadonlyArray<Pick<FrozenReward, "event" | "kind" | "value" | "tier">> | null | undefined, currency: string): string | null {
  if (!lines || !lines.length) return null;
  return [...new Set(lines.map((line) => rewardLineWords(line, currency)))].join("; ");
}
