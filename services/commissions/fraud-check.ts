/**
 * The program's fraud rules for a conversion about to earn a commission (docs/fraud.md): gathers the facts the rules
 * that are on read (the conversion's click and the partner's facts from their owners, counts from this service's own
 * commissions, the disposable-address list) and evaluates them (shared/domain/fraud-rules.ts). It runs before the
 * commission's transaction; a flag makes ledger.createCommission hold the commission for review.
 */
import MailChecker from "mailchecker";
import { evaluateFraudRules, type ConversionFacts, type FraudFlag, type FraudSettings } from "../../shared/domain/fraud-rules";
import type { ClickFacts } from "../attribution/contract";
import type { CommissionsRepository } from "./repository";

export interface ConversionToCheck {
  programId: number;
  partnerId: number;
  kind: "sale" | "lead";
  occurredAt: Date;
  customerEmail: string | null;
  clickId: string | null;
}

/** The flags raised, and the conversion's address hash of its day (stored on its commission: address_velocity counts it). */
export interface FraudCheck {
  flags: FraudFlag[];
  addressHash: string | null;
}

export const NO_FRAUD_CHECK: FraudCheck = Object.freeze({ flags: [], addressHash: null });

/** What the check asks of other services (bus calls in the service; plain functions in tests). */
export interface FraudFactSources {
  repo: Pick<CommissionsRepository, "countConversionsFromAddress" | "partnerRefundStats">;
  clickFacts(programId: number, clickId: string): Promise<ClickFacts | null>;
  partnerFacts(programId: number, partnerId: number): Promise<{ email: string | null; payoutDetailsSharedWith: number[] }>;
  /** The partner's own address hashes of a UTC day (YYYY-MM-DD): their portal visits. */
  partnerAddressHashes(partnerId: number, day: string): Promise<string[]>;
}

const DAY_MS = 86_400_000;

/** Whether an email's domain is a disposable one (mailchecker's list; MIT). Valid addresses only reach here (zod's Email). */
export const isDisposableEmail = (email: string): boolean => !MailChecker.isValid(email);

export async function checkConversion(sources: FraudFactSources, settings: FraudSettings, c: ConversionToCheck): Promise<FraudCheck> {
  const on = (rule: keyof FraudSettings) => settings[rule].enabled;
  const click = c.clickId ? await sources.clickFacts(c.programId, c.clickId) : null;
  const addressHash = click?.addressHash ?? null;
  const dayStart = new Date(Math.floor(c.occurredAt.getTime() / DAY_MS) * DAY_MS);
  const [partner, partnerAddressHashes, last30Days, sameAddressToday] = await Promise.all([
    on("partner_identity") || on("shared_payout_details") ? sources.partnerFacts(c.programId, c.partnerId) : null,
    // The click's hash is of the click's day: the partner's own of that day can match it.
    on("partner_identity") && click?.addressHash ? sources.partnerAddressHashes(c.partnerId, click.at.slice(0, 10)) : undefined,
    on("refund_rate") && c.kind === "sale" ? sources.repo.partnerRefundStats(c.programId, c.partnerId, new Date(c.occurredAt.getTime() - 30 * DAY_MS), c.occurredAt) : undefined,
    on("address_velocity") && addressHash ? sources.repo.countConversionsFromAddress(c.programId, c.kind, addressHash, dayStart, new Date(dayStart.getTime() + DAY_MS)) : undefined,
  ]);
  const facts: ConversionFacts = {
    kind: c.kind,
    occurredAt: c.occurredAt,
    customerEmail: c.customerEmail,
    customerEmailDisposable: c.customerEmail ? isDisposableEmail(c.customerEmail) : false,
    addressHash,
    partner: { email: partner?.email, addressHashes: partnerAddressHashes, payoutDetailsSharedWith: partner?.payoutDetailsSharedWith, last30Days },
    click: click && { at: new Date(click.at), referrerDomain: click.referrerDomain, paid: click.paid, adNetworks: click.adNetworks, utmMedium: click.utmMedium },
    sameAddressToday,
  };
  return { flags: evaluateFraudRules(settings, facts), addressHash };
}
