/**
 * The emails partners get (docs/partners.md, "Emails"): which kinds there are, the category a partner unsubscribes
 * from, when a commission digest is due, and what each email says, as one letter rendered twice, a plain-text part
 * and an HTML part. Pure: the notifications service records and sends, these decide.
 */
import { currencyExponent, toMajorUnits } from "../../shared/domain/money";
import type { PayoutMethod } from "../../shared/partner-profile";

export const PARTNER_EMAIL_KINDS = [
  "application_received",
  "application_approved",
  "application_declined",
  "commission_digest",
  "commission_reduced",
  "commission_reversed",
  "payout_paid",
  "payout_failed",
  "monthly_summary",
  "partner_banned",
] as const;
export type PartnerEmailKind = (typeof PARTNER_EMAIL_KINDS)[number];

/** What a partner unsubscribes from, one click each. */
export const EMAIL_CATEGORIES = ["applications", "commissions", "refunds", "payouts", "summaries"] as const;
export type EmailCategory = (typeof EMAIL_CATEGORIES)[number];

const CATEGORY_OF: Record<PartnerEmailKind, EmailCategory | null> = {
  application_received: "applications",
  application_approved: "applications",
  application_declined: "applications",
  commission_digest: "commissions",
  commission_reduced: "refunds",
  commission_reversed: "refunds",
  payout_paid: "payouts",
  // Money that did not arrive is never something a partner can opt out of hearing about (as the sign-in email).
  payout_failed: null,
  monthly_summary: "summaries",
  // Being removed from a program is never something to opt out of hearing about.
  partner_banned: null,
};
/** The category of a kind; null: it cannot be unsubscribed. */
export const categoryOf = (kind: PartnerEmailKind): EmailCategory | null => CATEGORY_OF[kind];

export const CATEGORY_WORDS: Record<EmailCategory, string> = {
  applications: "emails about your application",
  commissions: "emails about new commissions",
  refunds: "emails about commissions reduced by refunds and chargebacks",
  payouts: "emails about payouts sent",
  summaries: "monthly summaries",
};

/** How often a program's partners hear of new commissions: each one, a daily or weekly digest, or never. */
export const COMMISSION_EMAIL_FREQUENCIES = ["each", "daily", "weekly", "off"] as const;
export type CommissionEmailFrequency = (typeof COMMISSION_EMAIL_FREQUENCIES)[number];

/**
 * When a commission heard of at `at` is mailed: at once (`each`), at the next 00:00 UTC (`daily`), at the next Monday
 * 00:00 UTC (`weekly`); null for `off`. Every commission due at the same instant goes in one digest, so a partner
 * gets at most one per day (or week) per program.
 */
export function digestDueAt(frequency: CommissionEmailFrequency, at: Date): Date | null {
  if (frequency === "off") return null;
  if (frequency === "each") return at;
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) + 86_400_000;
  if (frequency === "daily") return new Date(midnight);
  const daysToMonday = (8 - new Date(midnight).getUTCDay()) % 7; // 0 when the next midnight is a Monday
  return new Date(midnight + daysToMonday * 86_400_000);
}

/** The month ("2026-11") an instant falls in, UTC: what a monthly summary counts. */
export const monthOf = (at: Date): string => at.toISOString().slice(0, 7);
/** The month before the one `at` falls in: the one a summary sent at `at` is about. */
export function previousMonth(at: Date): string {
  return monthOf(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1)));
}

/** Minor units in major units with the currency's digits and code: 2000 usd is "20.00 USD", 500 jpy "500 JPY". */
export function moneyWords(minor: number, currency: string): string {
  return `${toMajorUnits(minor, currency).toFixed(currencyExponent(currency))} ${currency.toUpperCase()}`;
}

/** Stands for the sign-in link in a stored approval email: the link (a credential) is made when it is sent, never stored. */
export const SIGN_IN_LINK = "{{sign_in_link}}";

/** The facts of a withdrawal event the payout emails use (shared/events.ts, `withdrawalFacts` and the paid/failed extras). */
export interface PayoutFacts {
  withdrawalId: number;
  currency: string;
  amountCents: number;
  runId: number | null;
  /** Of the payout: the partner's methods, or account credit in the merchant's app. */
  method: PayoutMethod | "account_credit" | "stripe_balance" | null;
  transferId?: string | null;
  failureCode?: string;
  failureReason?: string;
  wasPaid?: boolean;
}

/**
 * A payout event's email kind, or null. A paid payout mails when it was a run's or had a method: an operator's
 * withdrawal paid by other means (both null) is the operator's business with the partner. A failed one always mails.
 */
export function payoutEmailKindOf(type: string, facts: Pick<PayoutFacts, "runId" | "method">): PartnerEmailKind | null {
  // Account credit is the merchant's app's to announce to its user (it receives reward.earned).
  if (facts.method === "account_credit" || facts.method === "stripe_balance") return null;
  if (type === "withdrawal.paid") return facts.runId !== null || facts.method !== null ? "payout_paid" : null;
  if (type === "withdrawal.failed") return "payout_failed";
  return null;
}

/** A commission refund or reversal event's facts (shared/events.ts, `refundFacts`). */
export interface RefundFacts {
  commissionId: number;
  transactionId: string;
  currency: string;
  amountCents: number;
  netCents: number;
  deductionCents?: number;
  reasonCode?: "refund" | "chargeback" | "void";
  reason: string | null;
}

/** One commission in a digest. */
export interface DigestLine {
  commissionId: number;
  transactionId: string;
  amountCents: number;
  currency: string;
}

/** A month of one partner in one program, per currency (amounts in minor units). */
export interface MonthFigures {
  currency: string;
  earnedCount: number;
  earnedCents: number;
  reducedCents: number;
  paidOutCents: number;
}

/** A month's figures per currency, from the partner's activity in it (earned, reduced by refunds, paid out). */
export function monthFigures(activity: ReadonlyArray<{ kind: "earned" | "reduced" | "paid_out"; amountCents: number; currency: string }>): MonthFigures[] {
  const byCurrency = new Map<string, MonthFigures>();
  for (const a of activity) {
    const f = byCurrency.get(a.currency) ?? { currency: a.currency, earnedCount: 0, earnedCents: 0, reducedCents: 0, paidOutCents: 0 };
    if (a.kind === "earned") {
      f.earnedCount++;
      f.earnedCents += a.amountCents;
    } else if (a.kind === "reduced") f.reducedCents += a.amountCents;
    else f.paidOutCents += a.amountCents;
    byCurrency.set(a.currency, f);
  }
  return [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

/** What an email is about: its kind and the facts its words need. */
export type EmailFacts =
  | { kind: "application_received" | "application_approved" }
  | { kind: "application_declined"; declineMessage: string | null }
  | { kind: "commission_digest"; frequency: CommissionEmailFrequency; lines: DigestLine[] }
  | { kind: "commission_reduced" | "commission_reversed"; refund: RefundFacts }
  | { kind: "payout_paid" | "payout_failed"; payout: PayoutFacts }
  | { kind: "partner_banned"; reason: string }
  | { kind: "monthly_summary"; month: string; figures: MonthFigures[]; balance: { balanceCents: number; currency: string } | null };

/** Who it is to and from, and where its links point. */
export interface EmailAddressing {
  partnerName: string;
  programName: string;
  portalUrl: string;
  /** The one-click unsubscribe page of this email's category; null for emails that cannot be unsubscribed. */
  unsubscribeUrl: string | null;
}

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/** An email before rendering: paragraphs of plain sentences, an optional list, an optional button-like link. */
interface Letter {
  subject: string;
  paragraphs: string[];
  list?: string[];
  after?: string[];
  link?: { label: string; url: string };
}

const METHOD_WORDS: Record<PayoutMethod | "account_credit" | "stripe_balance", string> = {
  account_credit: "as credit on your account",
  stripe_balance: "as credit on your account",
  stripe: "by Stripe, to your connected Stripe account",
  paypal: "by PayPal, to your PayPal email",
  bank: "by bank transfer, to your bank account",
};
const methodWords = (method: PayoutMethod | "account_credit" | "stripe_balance" | null) =>
  method ? METHOD_WORDS[method] : "by the merchant directly (not through Stripe, PayPal or a bank file)";

/** A header never spans lines, whatever a name holds. */
const oneLine = (text: string) => text.replace(/[\r\n]+/g, " ").trim();

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function totalsByCurrency(lines: DigestLine[]): string {
  const totals = new Map<string, number>();
  for (const l of lines) totals.set(l.currency, (totals.get(l.currency) ?? 0) + l.amountCents);
  return [...totals].map(([currency, cents]) => moneyWords(cents, currency)).join(" and ");
}

function letterOf(facts: EmailFacts, a: EmailAddressing): Letter {
  const program = a.programName;
  const portal = { label: "Open the partner portal", url: a.portalUrl };
  switch (facts.kind) {
    case "application_received":
      return {
        subject: `We received your application to ${program}`,
        paragraphs: [
          `Thank you for applying to the ${program} partner program. The merchant will review your application; you will get an email when they decide.`,
          "If you did not apply, ignore this email.",
        ],
      };
    case "application_approved":
      return {
        subject: `Your application to ${program} is approved`,
        paragraphs: [
          `Welcome to the ${program} partner program: your application is approved.`,
          "Open this link to sign in to the partner portal, where your referral link is. It works once, within 24 hours; later, ask the portal for a new sign-in link with this email address.",
        ],
        link: { label: "Sign in to the partner portal", url: SIGN_IN_LINK },
      };
    case "partner_banned":
      return {
        subject: `You are no longer a partner of ${program}`,
        paragraphs: [
          `The ${program} team ended your participation in their partner program: your referral links no longer earn commissions, and commissions not yet credited to your balance were voided.`,
          `Their reason: ${facts.reason}`,
          "What was already credited to your balance stays yours. Reply to this email to reach the team.",
        ],
      };
    case "application_declined":
      return {
        subject: `Your application to ${program}`,
        paragraphs: [
          `Thank you for your interest in the ${program} partner program. Your application was not accepted.`,
          ...(facts.declineMessage ? [`A message from the ${program} team: ${facts.declineMessage}`] : []),
        ],
      };
    case "commission_digest": {
      const n = facts.lines.length;
      const when = facts.frequency === "daily" ? " today" : facts.frequency === "weekly" ? " this week" : "";
      return {
        subject: `You earned ${count(n, "new commission", "new commissions")} from ${program}`,
        paragraphs: [`You earned ${count(n, "new commission", "new commissions")}${when} in the ${program} partner program, ${totalsByCurrency(facts.lines)} in all:`],
        list: facts.lines.map((l) => `${moneyWords(l.amountCents, l.currency)} for sale ${l.transactionId} (commission ${l.commissionId})`),
        after: ["New commissions are pending until the merchant's approval period ends; then they count in your balance for the next payout."],
        link: portal,
      };
    }
    case "commission_reduced":
    case "commission_reversed": {
      const r = facts.refund;
      const cause = r.reasonCode === "chargeback" ? "a chargeback" : r.reasonCode === "void" ? "the merchant" : "a refund";
      const reason = r.reason && r.reason !== r.reasonCode ? ` (${r.reason})` : "";
      const deduction = moneyWords(r.deductionCents ?? 0, r.currency);
      return {
        subject: facts.kind === "commission_reversed" ? `A commission from ${program} was reversed by ${cause}` : `A commission from ${program} was reduced by ${cause}`,
        paragraphs: [
          facts.kind === "commission_reversed"
            ? `Your commission for sale ${r.transactionId} in the ${program} partner program was reversed by ${cause}${reason}: ${deduction} taken back, nothing is left of it.`
            : `Your commission for sale ${r.transactionId} in the ${program} partner program was reduced by ${deduction} because of ${cause}${reason}. It is now ${moneyWords(r.netCents, r.currency)} of the ${moneyWords(r.amountCents, r.currency)} earned.`,
          "Your balance in the partner portal shows the change.",
        ],
        link: portal,
      };
    }
    case "payout_paid": {
      const p = facts.payout;
      const amount = moneyWords(p.amountCents, p.currency);
      const transfer = p.transferId ? ` (Stripe transfer ${p.transferId})` : "";
      return {
        subject: `Your payout of ${amount} from ${program} was sent`,
        paragraphs: [
          `Your payout of ${amount} from the ${program} partner program was sent ${methodWords(p.method)}${transfer}.`,
          "The payouts, the commissions each one paid and a statement are in the partner portal.",
        ],
        after: [`Reference: payout-${p.withdrawalId}`],
        link: portal,
      };
    }
    case "payout_failed": {
      const p = facts.payout;
      const amount = moneyWords(p.amountCents, p.currency);
      return {
        subject: `Your payout of ${amount} from ${program} ${p.wasPaid ? "was returned" : "could not be paid"}`,
        paragraphs: [
          `Your payout of ${amount} from the ${program} partner program (${methodWords(p.method)}) ${p.wasPaid ? "was returned after it was sent" : "could not be paid"}.`,
          `Reason: ${p.failureReason ?? "not given"} (${p.failureCode ?? "unknown"})`,
          "The amount is back in your balance, for the next payout run. If the reason is about your payout details, check them in the partner portal (Profile) before then.",
        ],
        after: [`Reference: payout-${p.withdrawalId}`],
        link: portal,
      };
    }
    case "monthly_summary": {
      const month = new Date(`${facts.month}-01T00:00:00Z`).toLocaleString("en", { month: "long", year: "numeric", timeZone: "UTC" });
      const list = facts.figures.flatMap((f) => [
        `Earned: ${moneyWords(f.earnedCents, f.currency)} (${count(f.earnedCount, "commission", "commissions")})`,
        ...(f.reducedCents > 0 ? [`Taken back by refunds and chargebacks: ${moneyWords(f.reducedCents, f.currency)}`] : []),
        ...(f.paidOutCents > 0 ? [`Paid out to you: ${moneyWords(f.paidOutCents, f.currency)}`] : []),
      ]);
      return {
        subject: `Your ${month} with ${program}`,
        paragraphs: [`Your ${month} in the ${program} partner program:`],
        list,
        after: facts.balance ? [`Your balance now: ${moneyWords(facts.balance.balanceCents, facts.balance.currency)}.`] : [],
        link: portal,
      };
    }
  }
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

function footerOf(facts: EmailFacts, a: EmailAddressing): string {
  const category = categoryOf(facts.kind);
  const why = `You get this email as a partner of ${a.programName}.`;
  if (!category || !a.unsubscribeUrl) return `${why} It is about your money or your account, so it cannot be unsubscribed.`;
  return `${why} To stop ${CATEGORY_WORDS[category]} from ${a.programName}, unsubscribe: ${a.unsubscribeUrl}`;
}

/** The email's subject, plain-text part and HTML part, from the same words. */
export function renderPartnerEmail(facts: EmailFacts, a: EmailAddressing): EmailContent {
  const letter = letterOf(facts, a);
  const footer = footerOf(facts, a);
  const text = [
    `Hello ${a.partnerName},`,
    ...letter.paragraphs,
    ...(letter.list ? [letter.list.map((l) => `- ${l}`).join("\n")] : []),
    ...(letter.after ?? []),
    ...(letter.link ? [`${letter.link.label}: ${letter.link.url}`] : []),
    "-- ",
    footer,
  ].join("\n\n");
  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`;
  const unsubscribe = a.unsubscribeUrl && categoryOf(facts.kind) ? escapeHtml(a.unsubscribeUrl) : null;
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(oneLine(letter.subject))}</title></head>` +
    `<body style="margin:0;padding:24px;background:#ffffff;color:#1f2937;font:16px/1.5 Arial,Helvetica,sans-serif">` +
    `<div style="max-width:560px;margin:0 auto">` +
    p(`Hello ${a.partnerName},`) +
    letter.paragraphs.map(p).join("") +
    (letter.list ? `<ul style="margin:0 0 16px;padding-left:20px">${letter.list.map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>` : "") +
    (letter.after ?? []).map(p).join("") +
    (letter.link
      ? `<p style="margin:24px 0"><a href="${escapeHtml(letter.link.url)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:4px">${escapeHtml(letter.link.label)}</a></p>`
      : "") +
    `<hr style="border:0;border-top:1px solid #d1d5db;margin:24px 0">` +
    `<p style="margin:0;font-size:14px;color:#4b5563">${
      unsubscribe
        ? `${escapeHtml(`You get this email as a partner of ${a.programName}.`)} <a href="${unsubscribe}" style="color:#1d4ed8">Unsubscribe from ${escapeHtml(CATEGORY_WORDS[categoryOf(facts.kind)!])}</a>.`
        : escapeHtml(footer)
    }</p></div></body></html>`;
  return { subject: oneLine(letter.subject), text: `${text}\n`, html };
}

/**
 * The Message-ID of an email, from its unique key: the same on every attempt, so a mail sent again after a crash
 * (between the SMTP server's acceptance and the record's "sent") carries the id of the first one, and is recognisable
 * as the same message.
 */
export function partnerEmailMessageId(dedupeKey: string, publicUrl: string): string {
  return `<${dedupeKey.replace(/[^A-Za-z0-9._-]/g, ".")}@${new URL(publicUrl).hostname || "localhost"}>`;
}
