/**
 * A partner's profile and payout details (docs/partners.md, "Profile and
 * payout details"): kept on the partner (one partner, many programs) by the
 * programs service, changed by the partner in the portal. The field schemas
 * live here because two services validate them: the portal (the partner's
 * request) and programs (its bus action). Their transforms are idempotent
 * (trim, case, spaces), so the second parse of a parsed value changes nothing.
 *
 * What each field must hold alone is checked here; what the profile must hold
 * as a whole once a change is applied (a PayPal email for PayPal payouts, an
 * account for bank payouts) is services/programs/partner-profile.ts.
 */
import { z } from "zod";
import { oneLine } from "./validation";
import { isCountryCode } from "./domain/countries";
import { isValidIban, normalizeIban } from "./domain/iban";
import { Email } from "./values";
import { LOCALES } from "./i18n";

/** How the partner wants to be paid. Stripe's onboarding (a connected account) belongs to the payouts work: it can be chosen, nothing more yet. */
export const PAYOUT_METHODS = ["paypal", "bank", "stripe"] as const;
export type PayoutMethod = (typeof PAYOUT_METHODS)[number];

/** The partner's bank account: the holder, and an IBAN or a national account number (with its routing number), and the bank's SWIFT/BIC code. */
export interface BankDetails {
  accountHolder: string;
  /** Electronic form: no spaces, upper-case; its check digits were verified. */
  iban: string | null;
  accountNumber: string | null;
  routingNumber: string | null;
  /** Upper-case, 8 or 11 characters. */
  swift: string | null;
}

/** An ISO 3166-1 alpha-2 country code in any case, carried upper-case (`de` -> `DE`); `XX` is refused. */
export const Country = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z]{2}$/, "must be a two-letter ISO 3166-1 country code such as DE")
  .refine(isCountryCode, "is not an ISO 3166-1 country code");

/** An IBAN with or without spaces, in any case; stored without spaces, upper-case, once its check digits match. */
export const Iban = z
  .string()
  .max(64)
  .transform(normalizeIban)
  .refine(isValidIban, "is not a valid IBAN: two letters, two check digits and the account, with check digits that match (mod 97)");

/** A SWIFT/BIC code: 4 letters (the bank), 2 letters (the country), 2 letters or digits (the location), and 3 more (the branch) or none. */
const Swift = z
  .string()
  .max(20)
  .transform((s) => s.replace(/\s+/g, "").toUpperCase())
  .refine((s) => /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(s), "must be a SWIFT/BIC code of 8 or 11 letters and digits, such as DEUTDEFF");

/** Absent and null both mean "none": the stored bank details always have every field. */
const orNull = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? null);

export const BankDetailsInput = z.strictObject({
  accountHolder: oneLine(z.string().trim().min(1).max(200)).meta({ description: "The account holder's name, as the bank knows it.", example: "Jane Doe" }),
  iban: orNull(Iban).meta({
    description: "The IBAN, with or without spaces; its check digits are verified. Required for bank payouts unless accountNumber is given.",
    example: "DE89 3704 0044 0532 0130 00",
  }),
  accountNumber: orNull(
    z
      .string()
      .trim()
      .min(1)
      .max(34)
      .regex(/^[A-Za-z0-9 -]+$/, "may contain letters, digits, spaces and '-'"),
  ).meta({ description: "The account number where accounts have no IBAN (the United States, for example). Required for bank payouts unless iban is given.", example: "000123456789" }),
  routingNumber: orNull(
    z
      .string()
      .trim()
      .min(1)
      .max(20)
      .regex(/^[0-9 -]+$/, "may contain digits, spaces and '-'"),
  ).meta({ description: "The bank's routing number (ABA routing number, sort code, BSB) that goes with accountNumber.", example: "110000000" }),
  swift: orNull(Swift).meta({ description: "The bank's SWIFT/BIC code (8 or 11 characters).", example: "COBADEFFXXX" }),
});

/** The fields a profile change may set; each one given is set, the others keep their values. */
export const PartnerProfilePatchFields = {
  name: oneLine(z.string().trim().min(1).max(100)).optional().meta({ description: "Your name as merchants see it (1 to 100 characters).", example: "Jane Doe" }),
  country: Country.nullable().optional().meta({ description: "Where you are: an ISO 3166-1 alpha-2 country code (any case, answered upper-case); null clears it.", example: "DE" }),
  payoutMethod: z
    .enum(PAYOUT_METHODS)
    .nullable()
    .optional()
    .meta({ description: "How you want to be paid: paypal (needs paypalEmail), bank (needs bank with an iban or an accountNumber) or stripe; null clears it.", example: "bank" }),
  paypalEmail: Email.nullable().optional().meta({ description: "The email of your PayPal account; required when payoutMethod is paypal.", example: "jane@example.com" }),
  locale: z.enum(LOCALES).nullable().optional().meta({
    description: "The language of the partner portal and your emails: en, de, fr or es; null (the default) follows your browser's language, and English for emails.",
    example: "de",
  }),
  bank: BankDetailsInput.nullable()
    .optional()
    .meta({ description: "Your bank account, replaced as a whole (null removes it); accountHolder is required, and an iban or an accountNumber for bank payouts." }),
};
