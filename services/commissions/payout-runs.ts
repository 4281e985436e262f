/**
 * The rules of payout runs (docs/payouts.md), pure: who a run pays and who it skips and why, what a run's period is
 * called, and when a schedule is due. The service gathers the facts (balances, groups, profiles, Stripe accounts)
 * and the ledger writes what these decide.
 */
import { currencyExponent, toMajorUnits } from "../../shared/domain/money";
import type { PayoutMethod, PayoutSchedule, SkippedPartner, Withdrawal } from "./repository";

/** What a run knows of one partner with a balance in the program's currency. */
export interface PayoutCandidate {
  partnerId: number;
  /** The program's currency (the reasons name amounts in it). */
  currency: string;
  partnerName: string;
  /** Balance minus open and processing payouts (may be negative: a refund took more than was left). */
  availableCents: number;
  minPayoutCents: number;
  /** The partner's enrollment status in the program. */
  status: string;
  method: PayoutMethod | null;
  /** For bank: an IBAN or account number is on file; for PayPal: an email. */
  detailsComplete: boolean;
  /** For Stripe: the connected account, if the partner started onboarding. */
  stripeAccount: { ready: boolean } | null;
}

export interface PlannedPayout {
  partnerId: number;
  partnerName: string;
  method: PayoutMethod;
  amountCents: number;
}

/** Why a payable partner is not paid, or null when they are. The order is the one a partner fixes them in. */
export function skipReason(c: PayoutCandidate): Pick<SkippedPartner, "code" | "reason"> | null {
  if (c.status !== "approved") return { code: "partner_not_approved", reason: `The partner is ${c.status} in this program.` };
  if (c.availableCents < c.minPayoutCents) return belowMinimum(c.availableCents, c.minPayoutCents, c.currency);
  if (!c.method) return { code: "no_payout_method", reason: "The partner has not chosen a payout method in the portal." };
  if (c.method === "stripe") {
    if (!c.stripeAccount) return { code: "stripe_account_missing", reason: "The partner chose Stripe but has not connected a Stripe account in the portal." };
    if (!c.stripeAccount.ready) return { code: "stripe_account_not_ready", reason: "The partner's Stripe account cannot receive transfers yet (onboarding unfinished or restricted)." };
  } else if (!c.detailsComplete) {
    return { code: "payout_details_missing", reason: `The partner chose ${c.method} but their ${c.method === "paypal" ? "PayPal email" : "bank account"} is missing.` };
  }
  return null;
}

/**
 * One payout per payable partner (available > 0) that nothing keeps from being paid; the others with something
 * available are skipped with their reason. Partners with nothing available (zero or a negative balance carried
 * to the next run) are neither.
 */
export function planPayoutRun(candidates: readonly PayoutCandidate[]): { payouts: PlannedPayout[]; skipped: SkippedPartner[] } {
  const payouts: PlannedPayout[] = [];
  const skipped: SkippedPartner[] = [];
  for (const c of [...candidates].sort((a, b) => a.partnerId - b.partnerId)) {
    if (c.availableCents <= 0) continue;
    const skip = skipReason(c);
    if (skip) skipped.push({ partnerId: c.partnerId, partnerName: c.partnerName, availableCents: c.availableCents, ...skip });
    else payouts.push({ partnerId: c.partnerId, partnerName: c.partnerName, method: c.method!, amountCents: c.availableCents });
  }
  return { payouts, skipped };
}

/** An amount for people: `12.50 USD` (the currency's own digits). */
export const moneyText = (cents: number, currency: string) => `${toMajorUnits(cents, currency).toFixed(currencyExponent(currency))} ${currency.toUpperCase()}`;

/** The below_minimum skip (also decided again when the run is made, under the balance lock). */
export const belowMinimum = (availableCents: number, minPayoutCents: number, currency: string) => ({
  code: "below_minimum",
  reason: `Available ${moneyText(availableCents, currency)} is below the group's minimum payout of ${moneyText(minPayoutCents, currency)}.`,
});

const pad = (n: number) => String(n).padStart(2, "0");
const DAY_MS = 86_400_000;

/** The ISO 8601 week of a UTC date: `2026-W48` (weeks start on Monday; the year is the week's Thursday's). */
export function isoWeekKey(at: Date): string {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const thursday = new Date(day.getTime() + (3 - ((day.getUTCDay() + 6) % 7)) * DAY_MS);
  const yearStart = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = Math.floor((thursday.getTime() - yearStart) / DAY_MS / 7) + 1;
  return `${thursday.getUTCFullYear()}-W${pad(week)}`;
}

/** The period a run started now is named after: the month, the ISO week, or (by hand) the day, in UTC. */
export function periodKeyFor(kind: PayoutSchedule["kind"], at: Date): string {
  const month = `${at.getUTCFullYear()}-${pad(at.getUTCMonth() + 1)}`;
  if (kind === "monthly") return month;
  if (kind === "weekly") return isoWeekKey(at);
  return `${month}-${pad(at.getUTCDate())}`;
}

/** The moment of the current period's run (midnight UTC of its day), which may be later than `at`. */
function scheduledMoment(s: Pick<PayoutSchedule, "kind" | "dayOfMonth" | "weekday">, at: Date): Date | null {
  if (s.kind === "monthly") return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), s.dayOfMonth ?? 1));
  if (s.kind === "weekly") {
    // Days since this ISO week's Monday, for `at` and for the schedule's weekday (Sunday is the week's last day).
    const today = (at.getUTCDay() + 6) % 7;
    const target = ((s.weekday ?? 1) + 6) % 7;
    return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + target - today));
  }
  return null;
}

/**
 * Whether the current period's run is due: its day has come (a service down on the day catches up later in the
 * period), and the schedule already existed then (a schedule set after this period's day waits for the next one).
 * The run's period key makes a second start of the same period harmless.
 */
export function scheduleDue(s: PayoutSchedule, at: Date): boolean {
  const moment = scheduledMoment(s, at);
  return moment !== null && moment <= at && s.updatedAt <= moment;
}

/** When the schedule next starts a run, for people (null: manual). */
export function nextScheduledRun(s: Pick<PayoutSchedule, "kind" | "dayOfMonth" | "weekday" | "updatedAt">, at: Date): Date | null {
  const moment = scheduledMoment(s, at);
  if (!moment) return null;
  if (moment > at && s.updatedAt <= moment) return moment;
  if (s.kind === "monthly") return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, s.dayOfMonth ?? 1));
  return new Date(moment.getTime() + 7 * DAY_MS);
}

/** A run's figures, from its payouts: how many and how much in each state. */
export function runTotals(payouts: readonly Pick<Withdrawal, "status" | "amountCents">[]) {
  const totals = { payouts: payouts.length, amountCents: 0, open: 0, openCents: 0, processing: 0, processingCents: 0, paid: 0, paidCents: 0, failed: 0, failedCents: 0 };
  for (const p of payouts) {
    if (p.status === "cancelled") continue;
    totals.amountCents += p.amountCents;
    totals[p.status] += 1;
    totals[`${p.status}Cents`] += p.amountCents;
  }
  return totals;
}

export type RunTotals = ReturnType<typeof runTotals>;

/** A run is done when none of its payouts is still open or processing. */
export const runSettled = (payouts: readonly Pick<Withdrawal, "status">[]) => payouts.every((p) => p.status !== "open" && p.status !== "processing");
