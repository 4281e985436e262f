/** How the pages show numbers, money and times. Money arrives in integer minor units and is only formatted here. */
import { isoExponent } from "../../../shared/domain/currencies";

/** The language numbers and money are written in: English unless a partner page chose another (./i18n.ts). */
let locale = "en";
export const setFormatLocale = (tag: string) => {
  locale = tag;
};

/** Minor units as an amount of `currency` (ISO 4217 exponent, not Intl's CLDR digits, which differ for some codes). */
export function money(minor: number, currency: string): string {
  const digits = isoExponent(currency) ?? 2;
  try {
    return new Intl.NumberFormat(locale, { style: "currency", currency: currency.toUpperCase(), minimumFractionDigits: digits, maximumFractionDigits: digits }).format(minor / 10 ** digits);
  } catch {
    return `${(minor / 10 ** digits).toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

/** What a person typed in major units to integer minor units; NaN when it is not an amount. */
export function toMinor(text: string, currency: string): number {
  const s = text.trim();
  if (s === "" || !Number.isFinite(Number(s))) return NaN;
  return Math.round(Number(s) * 10 ** (isoExponent(currency) ?? 2));
}

export const count = (n: number): string => new Intl.NumberFormat(locale).format(n);

/** Basis points as a percentage: 2000 is "20%". */
export const percent = (bp: number): string => new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 2 }).format(bp / 10_000);

/** An ISO instant as "2026-01-31 14:05 UTC" (the API's days are UTC days too). */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export const day = (iso: string | null | undefined): string => (iso ? iso.slice(0, 10) : "—");
