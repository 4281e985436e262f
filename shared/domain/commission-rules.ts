/** A program's rule as it was created (commissionRule): its default group's first sale reward (docs/rewards.md). */
export type CommissionRule = { type: "percentage"; basisPoints: number } | { type: "flat"; amountCents: number };

const DAY_MS = 86_400_000;

/** A commission becomes creditable once the program's hold period has passed. */
export function approvableAt(createdAt: Date, holdDays: number): Date {
  return new Date(createdAt.getTime() + holdDays * DAY_MS);
}
