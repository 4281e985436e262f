/** A commission's reward in words for the partner portal (shared/domain/reward-words.ts), from its frozen reward lines. */
import { commissionRewardWords, moneyWords, percentWords, rewardLineWords } from "../../shared/domain/reward-words";
import type { FrozenReward } from "../../shared/domain/rewards";

type Line = Pick<FrozenReward, "event" | "kind" | "value" | "tier">;
const sale = (kind: Line["kind"], value: number, tier: Line["tier"] = null): Line => ({ event: "sale", kind, value, tier });

test.each([
  [sale("percentage", 2000), "usd", "20% of each sale"],
  [sale("percentage", 1250), "usd", "12.5% of each sale"],
  [sale("percentage", 333), "usd", "3.33% of each sale"],
  [sale("flat", 1000), "usd", "$10.00 per sale"],
  [sale("flat", 550), "eur", "€5.50 per sale"],
  [sale("flat", 500), "jpy", "¥500 per sale"],
  [{ event: "lead", kind: "flat", value: 1000, tier: null }, "usd", "$10.00 per new customer"],
] as const)("%j in %s: %s", (line, currency, words) => {
  expect(rewardLineWords(line, currency)).toBe(words);
});

test("a tier reached says which", () => {
  expect(rewardLineWords(sale("percentage", 2500, { metric: "sales", period: "month", threshold: 10, reachedWith: 12 }), "usd")).toBe(
    "25% of each sale (tier reached: 10 sales in the month)",
  );
  expect(rewardLineWords(sale("flat", 1500, { metric: "revenue", period: "all_time", threshold: 100_000, reachedWith: 250_000 }), "usd")).toBe(
    "$15.00 per sale (tier reached: $1,000.00 of sales in all)",
  );
});

test("a commission: each reward once, in the order of its lines; null before rewards", () => {
  expect(commissionRewardWords([sale("percentage", 2000), sale("percentage", 2000)], "usd")).toBe("20% of each sale");
  expect(commissionRewardWords([sale("percentage", 2000), sale("flat", 500), sale("percentage", 2000)], "usd")).toBe("20% of each sale; $5.00 per sale");
  expect(commissionRewardWords(null, "usd")).toBeNull();
  expect(commissionRewardWords([], "usd")).toBeNull();
});

test("money and percentages", () => {
  expect(moneyWords(123456, "usd")).toBe("$1,234.56");
  expect(moneyWords(1000, "bhd")).toBe("BHD\u00a01.000");
  // A code outside the ISO table (stored before validation existed) shows 2 decimals; one Intl refuses, plainly.
  expect(moneyWords(1, "xyz")).toBe("XYZ\u00a00.01");
  expect(moneyWords(1, "us")).toBe("0.01 US");
  expect(percentWords(10_000)).toBe("100%");
});
