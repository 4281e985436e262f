import { percentageOfCents } from "./money";

/** How a program pays its partners; frozen onto each commission at creation. */
export type CommissionRule = { type: "percentage"; basisPoints: number } | { type: "flat"; amountCents: number };

export function calculateCommissionCents(rule: CommissionRule, saleAmountCents: number): number {
  return rule.type === "percentage" ? percentageOfCents(saleAmountCents, rule.basisPoints) : rule.amountCents;
}

const DAY_MS = 86_400_000;

/** A commission becomes creditable once the program's hold period has passed. */
export function approvableAt(createdAt: Date, holdDays: number): Date {
  return new Date(createdAt.getTime() + holdDays * DAY_MS);
}

/**
 * Whether a renewal still earns commission: `months` null means for the
 * subscription's lifetime, 0 the first payment only, N for N calendar months
 * after the first payment (a renewal exactly N months later no longer earns).
 */
export function renewalEarnsCommission(firstPaymentAt: Date, renewalAt: Date, months: number | null): boolean {
  if (months === null) return true;
  const end = new Date(firstPaymentAt);
  end.setUTCMonth(end.getUTCMonth() + months);
  return renewalAt < end;
}
