/**
 * The texts of partner emails (docs/partners.md, "Languages"), kept apart from the pages' catalogues (../index.ts) so
 * the web bundles do not carry them: one catalogue per language, English the source of the keys and the fallback,
 * the others typed `EmailCatalogue` (tsc refuses a missing key); test/unit/i18n.test.ts checks the placeholders.
 */
import { fill, type Locale } from "../index";
import { de } from "./de";
import { en } from "./en";
import { es } from "./es";
import { fr } from "./fr";

export type EmailKey = keyof typeof en;
import type { EmailCatalogue } from "./en";
export type { EmailCatalogue };

export const EMAIL_CATALOGUES: Record<Locale, EmailCatalogue> = { en, de, fr, es };

/** The email text of `key` in `locale` (English when the locale has none), with its `{placeholders}` filled. */
export function te(locale: Locale, key: EmailKey, params?: Record<string, string | number>): string {
  return fill(EMAIL_CATALOGUES[locale]?.[key] ?? en[key], params);
}
