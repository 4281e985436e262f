/**
 * The partner-facing texts (docs/partners.md, "Languages"): the partner portal and the application page (partner
 * emails: ./email/, apart, so the web bundles do not carry them), in English (the source of the keys and the fallback), German, French and Spanish. One catalogue per
 * language (./en.ts, ./de.ts, ./fr.ts, ./es.ts); each non-English one is typed `Catalogue`, so tsc refuses a missing or
 * unknown key, and test/unit/i18n.test.ts checks every catalogue has the same `{placeholders}` per key. Imported by the
 * web pages (bundled) and by services: no Node, no DOM, nothing from services/.
 */
import { de } from "./de";
import { en } from "./en";
import { es } from "./es";
import { fr } from "./fr";

export const LOCALES = ["en", "de", "fr", "es"] as const;
export type Locale = (typeof LOCALES)[number];
export type MessageKey = keyof typeof en;
import type { Catalogue } from "./en";
export type { Catalogue };

export const CATALOGUES: Record<Locale, Catalogue> = { en, de, fr, es };

/** Each language's name in itself, for the language picker. */
export const LOCALE_NAMES: Record<Locale, string> = { en: "English", de: "Deutsch", fr: "Français", es: "Español" };

export const isLocale = (value: unknown): value is Locale => typeof value === "string" && (LOCALES as readonly string[]).includes(value);

/**
 * The text of `key` in `locale` (English when the locale has none), with each `{name}` replaced by `params.name`;
 * a placeholder without a param stays as written.
 */
export function t(locale: Locale, key: MessageKey, params?: Record<string, string | number>): string {
  return fill(CATALOGUES[locale]?.[key] ?? en[key], params);
}

/** `text` with each `{name}` replaced by `params.name` (in one pass: a value's own braces are left alone). */
export function fill(text: string, params?: Record<string, string | number>): string {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : whole));
}

/** The first supported language of a list of language tags (`navigator.languages`, "fr-FR" -> fr); null when none is. */
export function supportedLocale(tags: ReadonlyArray<string | null | undefined>): Locale | null {
  for (const tag of tags) {
    const base = tag?.trim().toLowerCase().split(/[-_]/)[0];
    if (isLocale(base)) return base;
  }
  return null;
}

/** The language to use: the partner's setting, else the first supported of the browser's, else English. */
export const chooseLocale = (setting: Locale | null | undefined, browser: ReadonlyArray<string> = []): Locale => setting ?? supportedLocale(browser) ?? "en";

/** `one` for exactly 1, else `other` (enough for the counts partners see in en, de, fr and es, all at least 1). */
export const plural = <K extends string>(n: number, one: K, other: K): K => (n === 1 ? one : other);
