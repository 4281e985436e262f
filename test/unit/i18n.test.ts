/**
 * The partner-facing catalogues (shared/i18n, docs/partners.md "Languages"): every language has exactly English's keys,
 * each text with the same {placeholders}, none empty; t() interpolates and falls back; the choice of language.
 */
import { CATALOGUES, chooseLocale, LOCALES, supportedLocale, t } from "../../shared/i18n";
import { en } from "../../shared/i18n/en";
import { EMAIL_CATALOGUES, te } from "../../shared/i18n/email";
import { en as emailEn } from "../../shared/i18n/email/en";
import { renderPartnerEmail, SIGN_IN_LINK, type EmailFacts } from "../../services/notifications/partner-emails";

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("i18n catalogues", () => {
  const sets = LOCALES.filter((l) => l !== "en").flatMap((locale) => [
    ["pages", locale, CATALOGUES[locale], en],
    ["emails", locale, EMAIL_CATALOGUES[locale], emailEn],
  ]) as Array<[string, string, Record<string, string>, Record<string, string>]>;
  test.each(sets)("%s, %s: exactly English's keys, each with the same placeholders", (_set, _locale, catalogue, english) => {
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(english).sort());
    for (const key of Object.keys(english)) {
      expect({ key, placeholders: placeholders(catalogue[key]) }).toEqual({ key, placeholders: placeholders(english[key]) });
      expect({ key, empty: catalogue[key].trim() === "" }).toEqual({ key, empty: false });
    }
  });

  test("no text has a stray brace (a placeholder is {word})", () => {
    for (const locale of LOCALES)
      for (const [key, text] of Object.entries(CATALOGUES[locale])) expect({ locale, key, rest: text.replace(/\{\w+\}/g, "").match(/[{}]/g) }).toEqual({ locale, key, rest: null });
  });

  test("t interpolates {name}, leaves an unknown placeholder, and falls back to English", () => {
    expect(te("en", "email.hello", { name: "Ada" })).toBe("Hello Ada,");
    expect(te("de", "email.hello", { name: "Ada {program}" })).toBe("Hallo Ada {program},");
    expect(te("es", "email.received.subject", { program: "Acme" })).toBe("Hemos recibido su solicitud para Acme");
    expect(te("fr", "email.hello")).toBe("Bonjour {name},");
    expect(t("de", "portal.updated", { time: "10:00" })).toBe("Aktualisiert um 10:00");
    expect(t("xx" as never, "signIn.title")).toBe("Sign in");
  });

  test("the language: the setting, else the browser's first supported, else English", () => {
    expect(chooseLocale("de", ["fr-FR"])).toBe("de");
    expect(chooseLocale(null, ["pt-BR", "fr-FR", "de"])).toBe("fr");
    expect(chooseLocale(undefined, ["ES"])).toBe("es");
    expect(chooseLocale(null, ["ja", "pt"])).toBe("en");
    expect(supportedLocale([])).toBeNull();
  });
});

describe("partner emails in every language", () => {
  const payout = { withdrawalId: 7, currency: "usd", amountCents: 2000, runId: 1, method: "bank" as const, transferId: "tr_1", failureCode: "x", failureReason: "why", wasPaid: true };
  const refund = { commissionId: 3, transactionId: "o-1", currency: "eur", amountCents: 500, netCents: 200, deductionCents: 300, reasonCode: "chargeback" as const, reason: "fraud" };
  const line = { commissionId: 1, transactionId: "t1", amountCents: 100, currency: "usd" };
  const facts: EmailFacts[] = [
    { kind: "application_received" },
    { kind: "application_approved" },
    { kind: "application_declined", declineMessage: "Not now" },
    { kind: "partner_banned", reason: "spam" },
    { kind: "commission_digest", frequency: "daily", lines: [line] },
    { kind: "commission_digest", frequency: "weekly", lines: [line, { ...line, currency: "eur" }] },
    { kind: "commission_reduced", refund },
    { kind: "commission_reversed", refund: { ...refund, reasonCode: "void", reason: null } },
    { kind: "payout_paid", payout },
    { kind: "payout_failed", payout: { ...payout, wasPaid: false, method: null } },
    {
      kind: "monthly_summary",
      month: "2026-10",
      figures: [{ currency: "usd", earnedCount: 2, earnedCents: 100, reducedCents: 5, paidOutCents: 9 }],
      balance: { balanceCents: 5, currency: "usd" },
    },
  ];
  test.each(LOCALES)("%s: every kind has its words, no placeholder left, and <html lang>", (locale) => {
    for (const f of facts) {
      const mail = renderPartnerEmail(f, { partnerName: "Ada", programName: "Acme", portalUrl: "https://x.example/portal", unsubscribeUrl: "https://x.example/u", locale });
      expect({ kind: f.kind, left: `${mail.subject}${mail.text}${mail.html}`.replaceAll(SIGN_IN_LINK, "").match(/\{\w+\}/g) }).toEqual({ kind: f.kind, left: null });
      expect(mail.html).toContain(`<html lang="${locale}">`);
      expect(mail.text.startsWith(te(locale, "email.hello", { name: "Ada" }))).toBe(true);
    }
  });
  test("the subject in the partner's language", () => {
    const of = (locale: (typeof LOCALES)[number]) =>
      renderPartnerEmail({ kind: "application_received" }, { partnerName: "Ada", programName: "Acme", portalUrl: "", unsubscribeUrl: null, locale }).subject;
    expect([of("en"), of("de"), of("fr"), of("es")]).toEqual([
      "We received your application to Acme",
      "Wir haben Ihre Bewerbung bei Acme erhalten",
      "Nous avons bien reçu votre candidature à Acme",
      "Hemos recibido su solicitud para Acme",
    ]);
  });
});
