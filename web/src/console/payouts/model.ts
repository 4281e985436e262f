/**
 * What the payout API answers (docs/payouts.md; the commissions service's payout-runs routes), as the console reads
 * it, and the words the Payouts screen uses for its states, methods and triggers.
 */

export type PayoutState = "open" | "processing" | "paid" | "failed" | "cancelled";
export type PayoutMethod = "stripe" | "paypal" | "bank" | "account_credit" | "stripe_balance";

/** A payable partner a run did not pay, and why (the preview's and the run's `skipped`). */
export interface SkippedPartner {
  partnerId: number;
  partnerName: string;
  availableCents: number;
  code: string;
  reason: string;
}

/** GET /api/programs/:programId/payout-runs/preview: what a run would do now. Nothing is written. */
export interface RunPreview {
  programId: number;
  currency: string;
  periodKey: string;
  /** The run this period already has: confirming would return it and pay nobody. */
  existingRunId: number | null;
  totalCents: number;
  payouts: Array<{ partnerId: number; partnerName: string; method: PayoutMethod; amountCents: number; commissions: number }>;
  skipped: SkippedPartner[];
}

export interface RunTotals {
  payouts: number;
  amountCents: number;
  open: number;
  openCents: number;
  processing: number;
  processingCents: number;
  paid: number;
  paidCents: number;
  failed: number;
  failedCents: number;
}

export interface PayoutRun {
  id: number;
  programId: number;
  currency: string;
  periodKey: string;
  trigger: "console" | "api" | "cli" | "schedule";
  status: "processing" | "completed";
  createdAt: string;
  completedAt: string | null;
  totals: RunTotals;
  skipped: SkippedPartner[];
}

/** One payout of a run (a withdrawal, in the API's older words). */
export interface RunPayout {
  id: number;
  partnerId: number;
  partnerName: string;
  programId: number;
  currency: string;
  amountCents: number;
  status: PayoutState;
  method: PayoutMethod | null;
  runId: number | null;
  transferId: string | null;
  failureCode: string | null;
  failureReason: string | null;
  createdAt: string;
  processingAt: string | null;
  paidAt: string | null;
  failedAt: string | null;
}

export type RunDetail = PayoutRun & { payouts: RunPayout[] };

export interface PayoutSchedule {
  kind: "manual" | "monthly" | "weekly";
  /** 1-28 for monthly. */
  dayOfMonth: number | null;
  /** 0 (Sunday) - 6 for weekly. */
  weekday: number | null;
  nextRunAt: string | null;
}

export const PAYOUT_STATE_TEXT: Record<PayoutState, string> = {
  open: "Open (to pay)",
  processing: "Processing (on its way)",
  paid: "Paid",
  failed: "Failed",
  cancelled: "Cancelled",
};

export const METHOD_TEXT: Record<PayoutMethod, string> = {
  stripe: "Stripe",
  paypal: "PayPal",
  bank: "Bank transfer",
  account_credit: "Account credit",
  stripe_balance: "Stripe balance credit",
};

/** A payout's method in words; an operator's withdrawal has none (paid by whatever means the merchant chose). */
export const methodText = (method: PayoutMethod | null | undefined): string => (method ? METHOD_TEXT[method] : "By hand");

/** The method inside a sentence: "$40.00 by bank transfer". */
export const methodInSentence = (method: PayoutMethod | null | undefined): string => (method === "bank" ? "bank transfer" : method ? METHOD_TEXT[method] : "hand");

/** Why a payout failed, for people: the reason, with the processor's code when there is one (a payout marked failed by hand has none worth showing). */
export const failureText = (p: Pick<RunPayout, "failureCode" | "failureReason">): string =>
  `${p.failureReason ?? "No reason given"}${p.failureCode && p.failureCode !== "marked_failed" ? ` (${p.failureCode})` : ""}`;

export const RUN_STATUS_TEXT: Record<PayoutRun["status"], string> = { processing: "Processing", completed: "Completed" };

export const TRIGGER_TEXT: Record<PayoutRun["trigger"], string> = { console: "the console", api: "the API", cli: "the CLI", schedule: "the schedule" };

export const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** The methods whose payouts travel in a file the merchant downloads, then marks paid or failed by hand. */
export const FILE_METHODS = ["paypal", "bank"] as const;
export type FileMethod = (typeof FILE_METHODS)[number];

/** A file payout the merchant may still mark paid or failed. */
export const awaitsMarking = (p: Pick<RunPayout, "status" | "method">): boolean => p.status === "processing" && (p.method === "paypal" || p.method === "bank");

/** "1 payout", "3 payouts". */
export const several = (n: number, noun: string): string => `${new Intl.NumberFormat("en").format(n)} ${n === 1 ? noun : `${noun}s`}`;

/** The run detail's address (page routes carry no ids of their own: the run is in the query). */
export const runHref = (runId: number, programId: number): string => `/dashboard/payouts?program=${programId}&run=${runId}`;
