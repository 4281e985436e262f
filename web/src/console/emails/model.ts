/**
 * What the partner email API answers (services/notifications: the contract's PartnerEmailView and the settings), as
 * the Emails screen reads it, and the words the screen uses for the kinds, states and frequencies.
 */
import { dateTime } from "../../lib/format";

export type EmailKind =
  | "application_received"
  | "application_approved"
  | "application_declined"
  | "commission_digest"
  | "commission_reduced"
  | "commission_reversed"
  | "payout_paid"
  | "payout_failed"
  | "monthly_summary"
  | "partner_banned";

export type EmailStatus = "pending" | "sent" | "skipped" | "failed";

/** One email to a partner (GET /api/programs/:programId/partner-emails): no HTML part, no unsubscribe token. */
export interface PartnerEmail {
  id: number;
  kind: EmailKind;
  /** What the partner unsubscribes from; null: it cannot be unsubscribed (a failed payout). */
  category: string | null;
  programId: number;
  partnerId: number;
  withdrawalId: number | null;
  /** The partner's address when it was recorded; null when they had none (then skipped). */
  recipient: string | null;
  replyTo: string | null;
  subject: string;
  text: string;
  messageId: string;
  status: EmailStatus;
  skipReason: string | null;
  /** Attempts started; a pending email with attempts is being retried. */
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  sentAt: string | null;
  createdAt: string;
}

export type CommissionEmails = "each" | "daily" | "weekly" | "off";

/** GET/PUT /api/programs/:programId/partner-email-settings. */
export interface EmailSettings {
  programId: number;
  /** Where partners' replies go; null: no Reply-To (replies go to the sending address). */
  replyTo: string | null;
  commissionEmails: CommissionEmails;
  monthlySummary: boolean;
  updatedAt: string | null;
}

/** The kinds in words, in the order partners meet them (services/notifications/partner-emails.ts, PARTNER_EMAIL_KINDS). */
export const KIND_TEXT: Record<EmailKind, string> = {
  application_received: "Application received",
  application_approved: "Application approved",
  application_declined: "Application declined",
  commission_digest: "New commissions",
  commission_reduced: "Commission reduced by a refund",
  commission_reversed: "Commission reversed",
  payout_paid: "Payout sent",
  payout_failed: "Payout failed",
  monthly_summary: "Monthly summary",
  partner_banned: "Removed from the program",
};

export const STATUS_TEXT: Record<EmailStatus, string> = { pending: "Queued or retrying", sent: "Sent", skipped: "Skipped", failed: "Failed" };

/** An email's state in words: "Queued", "Retrying (attempt 2): 451 Try again later", "Sent 2026-01-31 14:05 UTC"... */
export function stateText(e: PartnerEmail): string {
  if (e.status === "sent") return `Sent ${dateTime(e.sentAt)}`;
  if (e.status === "skipped") return `Skipped: ${e.skipReason ?? "no reason recorded"}`;
  if (e.status === "failed") return `Failed: ${e.lastError ?? "the mail server refused it"}`;
  return e.attempts > 0 ? `Retrying (attempt ${e.attempts}): ${e.lastError ?? "no answer"}` : "Queued";
}

/** How often partners hear of new commissions: [value, label, what it means]. */
export const FREQUENCIES: Array<[CommissionEmails, string, string]> = [
  ["each", "For each commission", "One email per new commission, as soon as it is recorded."],
  ["daily", "Daily digest", "One email a day (after midnight UTC) listing the day's new commissions. The default."],
  ["weekly", "Weekly digest", "One email a week, on Monday (UTC), listing the week's new commissions."],
  ["off", "Never", "No emails about new commissions; partners see them in the portal."],
];
