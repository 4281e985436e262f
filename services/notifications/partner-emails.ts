/**
 * The emails partners get (docs/partners.md, "Emails"): which kinds there are, the category a partner unsubscribes
 * from, when a commission digest is due, and what each email says, as one letter rendered twice, a plain-text part
 * and an HTML part. Pure: the notifications service records and sends, these decide.
 */
import { currencyExponent, toMajorUnits } from "../../shared/domain/money";
import type { PayoutMethod } from "../../shared/partner-profile";
import { plural, type Locale } from "../../shared/i18n";
import { te, type EmailKey } from "../../shared/i18n/email";

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

/** Who it is to and from, where its links point, and the language it is written in. */
export interface EmailAddressing {
  partnerName: string;
  programName: string;
  portalUrl: string;
  /** The one-click unsubscribe page of this email's category; null for emails that cannot be unsubscribed. */
  unsubscribeUrl: string | null;
  /** The partner's language (their profile's setting); English when they chose none (docs/partners.md, "Languages"). */
  locale?: Locale | null;
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

/** A text of the emails' catalogue (shared/i18n/email) in one language. */
type Say = (key: EmailKey, params?: Record<string, string | number>) => string;
const sayIn =
  (locale: Locale): Say =>
  (key, params) =>
    te(locale, key, params);

const METHOD_KEYS: Record<PayoutMethod, EmailKey> = { stripe: "email.method.stripe", paypal: "email.method.paypal", bank: "email.method.bank" };
/** A credit payout (account_credit, stripe_balance) sends no email: the merchant's app tells its user. */
const methodWords = (say: Say, method: PayoutFacts["method"]) => say(method && method in METHOD_KEYS ? METHOD_KEYS[method as PayoutMethod] : "email.method.none");

const CATEGORY_KEYS: Record<EmailCategory, EmailKey> = {
  applications: "email.category.applications",
  commissions: "email.category.commissions",
  refunds: "email.category.refunds",
  payouts: "email.category.payouts",
  summaries: "email.category.summaries",
};
/** What unsubscribing from a category stops, in words ("emails about payouts sent"). */
export const categoryWords = (category: EmailCategory, locale: Locale = "en"): string => te(locale, CATEGORY_KEYS[category]);
/** The categories in English words (the unsubscribe page's). */
export const CATEGORY_WORDS: Record<EmailCategory, string> = Object.fromEntries(EMAIL_CATEGORIES.map((c) => [c, categoryWords(c)])) as Record<EmailCategory, string>;

/** A header never spans lines, whatever a name holds. */
const oneLine = (text: string) => text.replace(/[\r\n]+/g, " ").trim();

function totalsByCurrency(say: Say, lines: DigestLine[]): string {
  const totals = new Map<string, number>();
  for (const l of lines) totals.set(l.currency, (totals.get(l.currency) ?? 0) + l.amountCents);
  return [...totals].map(([currency, cents]) => moneyWords(cents, currency)).join(` ${say("email.and")} `);
}

const CAUSE_KEYS = {
  by: { chargeback: "email.by.chargeback", void: "email.by.void", refund: "email.by.refund" },
  because: { chargeback: "email.because.chargeback", void: "email.because.void", refund: "email.because.refund" },
} as const satisfies Record<string, Record<string, EmailKey>>;

function letterOf(facts: EmailFacts, a: EmailAddressing, say: Say, locale: Locale): Letter {
  const program = a.programName;
  const portal = { label: say("email.openPortal"), url: a.portalUrl };
  switch (facts.kind) {
    case "application_received":
      return {
        subject: say("email.received.subject", { program }),
        paragraphs: [say("email.received.body", { program }), say("email.received.ignore")],
      };
    case "application_approved":
      return {
        subject: say("email.approved.subject", { program }),
        paragraphs: [say("email.approved.body", { program }), say("email.approved.signIn")],
        link: { label: say("email.approved.link"), url: SIGN_IN_LINK },
      };
    case "partner_banned":
      return {
        subject: say("email.banned.subject", { program }),
        paragraphs: [say("email.banned.body", { program }), say("email.banned.reason", { reason: facts.reason }), say("email.banned.after")],
      };
    case "application_declined":
      return {
        subject: say("email.declined.subject", { program }),
        paragraphs: [say("email.declined.body", { program }), ...(facts.declineMessage ? [say("email.declined.message", { program, message: facts.declineMessage })] : [])],
      };
    case "commission_digest": {
      const n = facts.lines.length;
      const when = facts.frequency === "daily" ? say("email.digest.when.daily") : facts.frequency === "weekly" ? say("email.digest.when.weekly") : "";
      return {
        subject: say(plural(n, "email.digest.subject.one", "email.digest.subject.other"), { count: n, program }),
        paragraphs: [say(plural(n, "email.digest.body.one", "email.digest.body.other"), { count: n, when, program, total: totalsByCurrency(say, facts.lines) })],
        list: facts.lines.map((l) => say("email.digest.line", { amount: moneyWords(l.amountCents, l.currency), transactionId: l.transactionId, commissionId: l.commissionId })),
        after: [say("email.digest.after")],
        link: portal,
      };
    }
    case "commission_reduced":
    case "commission_reversed": {
      const r = facts.refund;
      const cause = r.reasonCode === "chargeback" ? "chargeback" : r.reasonCode === "void" ? "void" : "refund";
      const reason = r.reason && r.reason !== r.reasonCode ? ` (${r.reason})` : "";
      const deduction = moneyWords(r.deductionCents ?? 0, r.currency);
      const by = say(CAUSE_KEYS.by[cause]);
      const reversed = facts.kind === "commission_reversed";
      return {
        subject: say(reversed ? "email.reversed.subject" : "email.reduced.subject", { program, cause: by }),
        paragraphs: [
          reversed
            ? say("email.reversed.body", { transactionId: r.transactionId, program, cause: by, reason, deduction })
            : say("email.reduced.body", {
                transactionId: r.transactionId,
                program,
                deduction,
                cause: say(CAUSE_KEYS.because[cause]),
                reason,
                net: moneyWords(r.netCents, r.currency),
                amount: moneyWords(r.amountCents, r.currency),
              }),
          say("email.refund.after"),
        ],
        link: portal,
      };
    }
    case "payout_paid": {
      const p = facts.payout;
      const amount = moneyWords(p.amountCents, p.currency);
      const transfer = p.transferId ? ` (${say("email.paid.transfer", { id: p.transferId })})` : "";
      return {
        subject: say("email.paid.subject", { amount, program }),
        paragraphs: [say("email.paid.body", { amount, program, method: methodWords(say, p.method), transfer }), say("email.paid.after")],
        after: [say("email.payout.reference", { id: p.withdrawalId })],
        link: portal,
      };
    }
    case "payout_failed": {
      const p = facts.payout;
      const amount = moneyWords(p.amountCents, p.currency);
      return {
        subject: say(p.wasPaid ? "email.failed.subject.returned" : "email.failed.subject.unpaid", { amount, program }),
        paragraphs: [
          say(p.wasPaid ? "email.failed.body.returned" : "email.failed.body.unpaid", { amount, program, method: methodWords(say, p.method) }),
          say("email.failed.reason", { reason: p.failureReason ?? say("email.failed.reason.none"), code: p.failureCode ?? say("email.failed.code.none") }),
          say("email.failed.after"),
        ],
        after: [say("email.payout.reference", { id: p.withdrawalId })],
        link: portal,
      };
    }
    case "monthly_summary": {
      const month = new Date(`${facts.month}-01T00:00:00Z`).toLocaleString(locale, { month: "long", year: "numeric", timeZone: "UTC" });
      const list = facts.figures.flatMap((f) => [
        say(plural(f.earnedCount, "email.summary.earned.one", "email.summary.earned.other"), { amount: moneyWords(f.earnedCents, f.currency), count: f.earnedCount }),
        ...(f.reducedCents > 0 ? [say("email.summary.reduced", { amount: moneyWords(f.reducedCents, f.currency) })] : []),
        ...(f.paidOutCents > 0 ? [say("email.summary.paidOut", { amount: moneyWords(f.paidOutCents, f.currency) })] : []),
      ]);
      return {
        subject: say("email.summary.subject", { month, program }),
        paragraphs: [say("email.summary.body", { month, program })],
        list,
        after: facts.balance ? [say("email.summary.balance", { amount: moneyWords(facts.balance.balanceCents, facts.balance.currency) })] : [],
        link: portal,
      };
    }
  }
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

function footerOf(facts: EmailFacts, a: EmailAddressing, say: Say): string {
  const category = categoryOf(facts.kind);
  const why = say("email.footer.why", { program: a.programName });
  if (!category || !a.unsubscribeUrl) return `${why} ${say("email.footer.always")}`;
  return `${why} ${say("email.footer.unsubscribe", { what: say(CATEGORY_KEYS[category]), program: a.programName, url: a.unsubscribeUrl })}`;
}

/** The email's subject, plain-text part and HTML part, from the same words, in the addressee's language (English by default). */
export function renderPartnerEmail(facts: EmailFacts, a: EmailAddressing): EmailContent {
  const locale = a.locale ?? "en";
  const say = sayIn(locale);
  const letter = letterOf(facts, a, say, locale);
  const footer = footerOf(facts, a, say);
  const hello = say("email.hello", { name: a.partnerName });
  const text = [
    hello,
    ...letter.paragraphs,
    ...(letter.list ? [letter.list.map((l) => `- ${l}`).join("\n")] : []),
    ...(letter.after ?? []),
    ...(letter.link ? [`${letter.link.label}: ${letter.link.url}`] : []),
    "-- ",
    footer,
  ].join("\n\n");
  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`;
  const category = categoryOf(facts.kind);
  const unsubscribe = a.unsubscribeUrl && category ? escapeHtml(a.unsubscribeUrl) : null;
  const html =
    `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(oneLine(letter.subject))}</title></head>` +
    `<body style="margin:0;padding:24px;background:#ffffff;color:#1f2937;font:16px/1.5 Arial,Helvetica,sans-serif">` +
    `<div style="max-width:560px;margin:0 auto">` +
    p(hello) +
    letter.paragraphs.map(p).join("") +
    (letter.list ? `<ul style="margin:0 0 16px;padding-left:20px">${letter.list.map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>` : "") +
    (letter.after ?? []).map(p).join("") +
    (letter.link
      ? `<p style="margin:24px 0"><a href="${escapeHtml(letter.link.url)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:4px">${escapeHtml(letter.link.label)}</a></p>`
      : "") +
    `<hr style="border:0;border-top:1px solid #d1d5db;margin:24px 0">` +
    `<p style="margin:0;font-size:14px;color:#4b5563">${
      unsubscribe && category
        ? `${escapeHtml(say("email.footer.why", { program: a.programName }))} <a href="${unsubscribe}" style="color:#1d4ed8">${escapeHtml(say("email.footer.unsubscribeLink", { what: say(CATEGORY_KEYS[category]) }))}</a>.`
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
