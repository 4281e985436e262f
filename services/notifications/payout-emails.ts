/**
 * The emails a partner gets about a payout (docs/payouts.md, "Email"): when it is paid and when it fails. Which
 * events mail, and what each mail says: plain text, the amount in major units with its currency, the method, for a
 * failure the reason and that the amount is back in the balance, and the portal's address. Pure.
 */
import { currencyExponent, toMajorUnits } from "../../shared/domain/money";
import type { PayoutMethod } from "../../shared/partner-profile";
import type { PartnerEmailKind } from "./repository";

/** The facts of a withdrawal event the mails use (shared/events.ts, `withdrawalFacts` and the paid/failed extras). */
export interface PayoutEventFacts {
  withdrawalId: number;
  programId: number;
  partnerId: number;
  currency: string;
  amountCents: number;
  runId: number | null;
  method: PayoutMethod | null;
  transferId?: string | null;
  failureCode?: string;
  failureReason?: string;
  wasPaid?: boolean;
}

/**
 * The email an event calls for, or null. A paid payout mails when it was a run's or had a method: an operator's
 * withdrawal paid by other means (both null) is the operator's business with the partner, as before payout runs.
 * A failed payout always mails: its amount is back in the partner's balance.
 */
export function payoutEmailKindOf(type: string, facts: Pick<PayoutEventFacts, "runId" | "method">): PartnerEmailKind | null {
  if (type === "withdrawal.paid") return facts.runId !== null || facts.method !== null ? "payout_paid" : null;
  if (type === "withdrawal.failed") return "payout_failed";
  return null;
}

/** Minor units in major units with the currency's digits and code: 2000 usd is "20.00 USD", 500 jpy "500 JPY". */
export function payoutAmountWords(minor: number, currency: string): string {
  return `${toMajorUnits(minor, currency).toFixed(currencyExponent(currency))} ${currency.toUpperCase()}`;
}

const METHOD_WORDS: Record<PayoutMethod, string> = {
  stripe: "by Stripe, to your connected Stripe account",
  paypal: "by PayPal, to your PayPal email",
  bank: "by bank transfer, to your bank account",
};
const methodWords = (method: PayoutEventFacts["method"]) => (method ? METHOD_WORDS[method] : "by the merchant directly (not through Stripe, PayPal or a bank file)");

/** A header never spans lines, whatever a name holds. */
const oneLine = (text: string) => text.replace(/[\r\n]+/g, " ").trim();

/**
 * The Message-ID of the email recorded for (producer, event, kind): the same on every attempt, so a mail sent again
 * after a crash (between the SMTP server's acceptance and the record's "sent") carries the id of the first one, and
 * mail clients and servers that deduplicate on it, or a person comparing headers, see one message twice.
 */
export function payoutEmailMessageId(key: { producer: string; eventId: number; kind: PartnerEmailKind }, publicUrl: string): string {
  return `<${key.kind}.${key.producer}.${key.eventId}@${new URL(publicUrl).hostname || "localhost"}>`;
}

export interface PayoutEmailContent {
  subject: string;
  text: string;
}

/** The subject and plain text of the email of `kind`, to `partnerName`, about a payout of `programName`. */
export function payoutEmailContent(kind: PartnerEmailKind, facts: PayoutEventFacts, names: { partnerName: string; programName: string }, portalUrl: string): PayoutEmailContent {
  const amount = payoutAmountWords(facts.amountCents, facts.currency);
  const program = names.programName;
  const reference = `Reference: payout-${facts.withdrawalId}`;
  if (kind === "payout_paid") {
    const transfer = facts.transferId ? ` (Stripe transfer ${facts.transferId})` : "";
    return {
      subject: oneLine(`Your payout of ${amount} from ${program} was sent`),
      text:
        `Hello ${names.partnerName},\n\n` +
        `Your payout of ${amount} from the ${program} partner program was sent ${methodWords(facts.method)}${transfer}.\n\n` +
        `The payouts, the commissions each one paid and a statement are in the partner portal:\n\n${portalUrl}\n\n${reference}\n`,
    };
  }
  const returned = facts.wasPaid ? "was returned after it was sent" : "could not be paid";
  return {
    subject: oneLine(`Your payout of ${amount} from ${program} ${facts.wasPaid ? "was returned" : "could not be paid"}`),
    text:
      `Hello ${names.partnerName},\n\n` +
      `Your payout of ${amount} from the ${program} partner program (${methodWords(facts.method)}) ${returned}.\n\n` +
      `Reason: ${facts.failureReason ?? "not given"} (${facts.failureCode ?? "unknown"})\n\n` +
      `The amount is back in your balance, for the next payout run. If the reason is about your payout details, ` +
      `check them in the partner portal (Profile) before then:\n\n${portalUrl}\n\n${reference}\n`,
  };
}
