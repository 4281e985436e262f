/**
 * The partner-facing catalogues (shared/i18n, docs/partners.md "Languages"): every language has exactly English's keys,
 * each text with the same {placeholders}, none empty; t() interpolates and falls back; the choice of language.
 */
import { CATALOGUES, chooseLocale, LOCALES, supportedLocale, t, type MessageKey } from "../../shared/i18n";
import { en } from "../../shared/i18n/en";

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("i18n catalogues", () => {
  test.each(LOCALES.filter((l) => l !== "en"))("%s has exactly English's keys, each with the same placeholders", (locale) => {
    const catalogue: Record<string, string> = CATALOGUES[locale];
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(en).sort());
    for (const key of Object.keys(en) as MessageKey[]) {
      expect({ key, placeholders: placeholders(catalogue[key]) }).toEqual({ key, placeholders: placeholders(en[key]) });
      expect({ key, empty: catalogue[key].trim() === "" }).toEqual({ key, empty: false });
    }
  });

  test("no text has a stray brace (a placeholder is {word})", () => {
    for (const locale of LOCALES)
      for (const [key, text] of Object.entries(CATALOGUES[locale])) expect({ locale, key, rest: text.replace(/\{\w+\}/g, "").match(/[{}]/g) }).toEqual({ locale, key, rest: null });
  });

  test("t interpolates {name}, leaves an unknown placeholder, and falls back to English", () => {
    expect(t("en", "email.hello", { name: "Ada" })).toBe("Hello Ada,");
    expect(t("de", "email.hello", { name: "Ada" })).toBe("Hallo Ada,");
    expect(t("es", "email.received.subject", { program: "Acme" })).toBe("Hemos recibido su solicitud para Acme");
    expect(t("fr", "email.hello")).toBe("Bonjour {name},");
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
