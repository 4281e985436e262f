/**
 * The partner's profile and payout details (docs/partners.md, "Profile and payout details"): IBAN check digits
 * (shared/domain/iban.ts) as properties, the pinned country list (shared/domain/countries.ts), the fields' own
 * schemas (shared/partner-profile.ts) and what the whole profile must hold (services/programs/partner-profile.ts).
 */
import fc from "fast-check";
import { ibanCheckDigits, isValidIban, normalizeIban } from "../../shared/domain/iban";
import { COUNTRY_CODES, isCountryCode } from "../../shared/domain/countries";
import { BankDetailsInput, Country, Iban, PartnerProfilePatchFields } from "../../shared/partner-profile";
import { applyProfilePatch, profileProblem } from "../../services/programs/partner-profile";
import type { PartnerProfile } from "../../services/programs/repository";
import { z } from "zod";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".split("");
const DIGITS = "0123456789".split("");
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".split("");

/** A valid IBAN: a country, the check digits computed for a random national account number (11 to 30 characters). */
const validIban = fc
  .record({ country: fc.constantFrom(...COUNTRY_CODES), bban: fc.array(fc.constantFrom(...ALNUM), { minLength: 11, maxLength: 30 }).map((a) => a.join("")) })
  .map(({ country, bban }) => `${country}${ibanCheckDigits(country, bban)}${bban}`);

describe("IBAN", () => {
  test.each([
    "GB82 WEST 1234 5698 7654 32",
    "DE89 3704 0044 0532 0130 00",
    "FR14 2004 1010 0505 0001 3M02 606",
    "NL91 ABNA 0417 1643 00",
    "CH93 0076 2011 6238 5295 7",
    "be68 5390 0754 7034",
  ])("%s is valid", (text) => {
    expect(isValidIban(normalizeIban(text))).toBe(true);
  });

  test.each([
    ["a wrong check digit", "GB82 WEST 1234 5698 7654 33"],
    ["two swapped digits", "DE89 3704 0044 0532 0131 00"],
    ["too short", "GB82 WEST 12"],
    ["too long", `GB82${"1".repeat(31)}`],
    ["no country", "8289 WEST 1234 5698 7654 32"],
    ["punctuation", "GB82-WEST-1234-5698-7654-32"],
    ["empty", ""],
  ])("%s is refused", (_what, text) => {
    expect(isValidIban(normalizeIban(text))).toBe(false);
  });

  test("normalised: spaces out, letters upper-case", () => {
    expect(normalizeIban(" gb82 west\t1234 5698 7654 32 ")).toBe("GB82WEST12345698765432");
  });

  test("property: the computed check digits make any account number valid, in any spacing and case", () => {
    fc.assert(
      fc.property(validIban, fc.integer({ min: 1, max: 6 }), (iban, group) => {
        expect(isValidIban(iban)).toBe(true);
        const spaced = iban.toLowerCase().replace(new RegExp(`(.{${group}})`, "g"), "$1 ");
        expect(isValidIban(normalizeIban(spaced))).toBe(true);
      }),
    );
  });

  test("property: one digit changed into another digit, or one letter into another letter, is caught", () => {
    fc.assert(
      fc.property(validIban, fc.nat(), fc.nat(), (iban, at, pick) => {
        const i = at % iban.length;
        const pool = DIGITS.includes(iban[i]) ? DIGITS : LETTERS;
        const others = pool.filter((c) => c !== iban[i]);
        const changed = iban.slice(0, i) + others[pick % others.length] + iban.slice(i + 1);
        // Changing the country letters may leave a valid form with wrong check digits, or no IBAN form at all: both refused.
        expect(isValidIban(changed)).toBe(false);
      }),
    );
  });

  test("property: two different neighbouring digits swapped are caught", () => {
    fc.assert(
      fc.property(validIban, fc.nat(), (iban, at) => {
        const pairs = [...iban].map((_, i) => i).filter((i) => i + 1 < iban.length && DIGITS.includes(iban[i]) && DIGITS.includes(iban[i + 1]) && iban[i] !== iban[i + 1]);
        fc.pre(pairs.length > 0);
        const i = pairs[at % pairs.length];
        const swapped = iban.slice(0, i) + iban[i + 1] + iban[i] + iban.slice(i + 2);
        expect(isValidIban(swapped)).toBe(false);
      }),
    );
  });

  test("the schema stores the electronic form and names what is wrong", () => {
    expect(Iban.parse("de89 3704 0044 0532 0130 00")).toBe("DE89370400440532013000");
    const refused = Iban.safeParse("DE89 3704 0044 0532 0130 01");
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0].message).toMatch(/not a valid IBAN/);
  });
});

describe("countries", () => {
  test("the 249 assigned ISO 3166-1 alpha-2 codes, upper-case, each once, each one Intl names", () => {
    expect(COUNTRY_CODES).toHaveLength(249);
    expect(new Set(COUNTRY_CODES).size).toBe(249);
    const names = new Intl.DisplayNames(["en"], { type: "region" });
    for (const code of COUNTRY_CODES) {
      expect(code).toMatch(/^[A-Z]{2}$/);
      expect({ code, named: names.of(code) !== code }).toEqual({ code, named: true });
    }
    expect([...COUNTRY_CODES].sort()).toEqual(COUNTRY_CODES);
  });

  test("known codes in, reserved, user-assigned, lower-case and odd keys out", () => {
    for (const code of ["DE", "US", "GB", "FR", "JP", "SS", "BQ", "AX"]) expect(isCountryCode(code)).toBe(true);
    for (const code of ["UK", "EU", "XK", "ZZ", "AA", "de", "D", "DEU", "", "__proto__", "constructor"]) expect(isCountryCode(code)).toBe(false);
  });

  test("the schema takes any case and answers upper-case", () => {
    expect(Country.parse(" de ")).toBe("DE");
    expect(Country.safeParse("XX").error?.issues[0].message).toBe("is not an ISO 3166-1 country code");
    expect(Country.safeParse("Germany").error?.issues[0].message).toMatch(/two-letter/);
  });
});

describe("the fields' schemas", () => {
  const Patch = z.strictObject(PartnerProfilePatchFields);

  test("bank details: every field present in the result (absent is null), normalised", () => {
    expect(BankDetailsInput.parse({ accountHolder: " Jane Doe ", iban: "de89 3704 0044 0532 0130 00", swift: "cobade ffxxx" })).toEqual({
      accountHolder: "Jane Doe",
      iban: "DE89370400440532013000",
      accountNumber: null,
      routingNumber: null,
      swift: "COBADEFFXXX",
    });
    expect(BankDetailsInput.safeParse({ iban: "DE89370400440532013000" }).success).toBe(false);
    expect(BankDetailsInput.safeParse({ accountHolder: "J", swift: "COBADE" }).success).toBe(false);
    expect(BankDetailsInput.safeParse({ accountHolder: "J", routingNumber: "12a" }).success).toBe(false);
  });

  test("parsing a parsed patch changes nothing (the portal and programs both parse it)", () => {
    const once = Patch.parse({
      name: " Jane ",
      country: "de",
      payoutMethod: "paypal",
      paypalEmail: " Jane@Example.com ",
      bank: { accountHolder: "Jane", iban: "gb82 west 1234 5698 7654 32" },
    });
    expect(Patch.parse(once)).toEqual(once);
    expect(once).toMatchObject({ name: "Jane", country: "DE", paypalEmail: "jane@example.com", bank: { iban: "GB82WEST12345698765432" } });
  });

  test("refused: a name too long or empty, an unknown payout method, an invalid email, an unknown field", () => {
    for (const patch of [{ name: "" }, { name: "x".repeat(101) }, { payoutMethod: "cheque" }, { paypalEmail: "not an email" }, { email: "new@example.com" }]) {
      expect({ patch, ok: Patch.safeParse(patch).success }).toEqual({ patch, ok: false });
    }
  });
});

describe("the profile as a whole", () => {
  const stored: PartnerProfile = {
    partnerId: 3,
    name: "Jane",
    email: "jane@example.com",
    country: "DE",
    payoutMethod: null,
    paypalEmail: "jane@paypal.example",
    bank: null,
    locale: "de",
    updatedAt: new Date("2026-01-01T00:00:00Z"),
  };
  const bank = { accountHolder: "Jane", iban: null, accountNumber: null, routingNumber: null, swift: null };

  test("the fields given replace the stored ones; the others, and undefined, keep theirs", () => {
    expect(applyProfilePatch(stored, { country: null, payoutMethod: "paypal", name: undefined })).toEqual({
      name: "Jane",
      country: null,
      payoutMethod: "paypal",
      paypalEmail: "jane@paypal.example",
      bank: null,
      locale: "de",
    });
    expect(applyProfilePatch(stored, { locale: null }).locale).toBeNull();
  });

  test.each([
    ["paypal without an email", { payoutMethod: "paypal", paypalEmail: null, bank: null }, "paypalEmail"],
    ["bank without bank details", { payoutMethod: "bank", paypalEmail: null, bank: null }, "bank"],
    ["bank without an IBAN or an account number", { payoutMethod: "bank", paypalEmail: null, bank }, "bank.iban"],
  ] as const)("%s is refused, naming %s", (_what, fields, field) => {
    expect(profileProblem({ name: "Jane", country: null, locale: null, ...fields })?.field).toBe(field);
  });

  test.each([
    ["no payout method yet", { payoutMethod: null, paypalEmail: null, bank: null }],
    ["paypal with its email", { payoutMethod: "paypal", paypalEmail: "j@x.example", bank: null }],
    ["bank with an IBAN", { payoutMethod: "bank", paypalEmail: null, bank: { ...bank, iban: "DE89370400440532013000" } }],
    ["bank with an account number", { payoutMethod: "bank", paypalEmail: null, bank: { ...bank, accountNumber: "000123456789", routingNumber: "110000000" } }],
    ["stripe (its onboarding comes with payouts)", { payoutMethod: "stripe", paypalEmail: null, bank: null }],
  ] as const)("%s is accepted", (_what, fields) => {
    expect(profileProblem({ name: "Jane", country: null, locale: null, ...fields })).toBeNull();
  });
});
