/**
 * Converting a sale's amount into its program's currency (docs/currencies.md): the
 * rules only, pure. A rate is a decimal text ("1.0823": one unit of the sale's currency is worth 1.0823 units of the
 * program's), kept exactly as published and frozen on the sale. Every conversion rounds once, half to even, on the
 * converted minor units at the target currency's exponent; all arithmetic is on BigInt, so no amount or rate loses
 * precision on the way.
 */
import { currencyExponent } from "./money";

/** How many fractional digits a rate keeps: as published (ECB: up to 4; Stripe: 6), and a crossed rate's rounding. */
export const RATE_DECIMALS = 12;

/** A rate's text: a positive decimal of up to 12 integer and 12 fractional digits, no sign or exponent. */
const RATE_TEXT = /^(\d{1,12})(?:\.(\d{1,12}))?$/;

/** A rate as an exact fraction: `units / 10^scale`. */
interface ExactRate {
  units: bigint;
  scale: number;
}

/** The rate of a decimal text, or null when it is not a positive decimal we keep. */
export function parseRate(text: string): ExactRate | null {
  const match = RATE_TEXT.exec(text);
  if (!match) return null;
  const fraction = match[2] ?? "";
  const units = BigInt(match[1] + fraction);
  return units > 0n ? { units, scale: fraction.length } : null;
}

function rateOf(text: string): ExactRate {
  const rate = parseRate(text);
  if (!rate) throw new RangeError(`'${text}' is not an exchange rate: a positive decimal with up to ${RATE_DECIMALS} decimals`);
  return rate;
}

/** numerator / denominator rounded half to even (denominator > 0). */
export function divideHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError("the divisor must be positive");
  const negative = numerator < 0n;
  const n = negative ? -numerator : numerator;
  const quotient = n / denominator;
  const twice = (n % denominator) * 2n;
  const rounded = twice > denominator || (twice === denominator && quotient % 2n === 1n) ? quotient + 1n : quotient;
  return negative ? -rounded : rounded;
}

/**
 * `amountMinor` of `fromCurrency` in minor units of `toCurrency` at `rate` (units of `toCurrency` per unit of
 * `fromCurrency`): amount x rate, moved between the currencies' exponents (JPY 0, USD 2, KWD 3), rounded half to
 * even once.
 */
export function convertMinorUnits(amountMinor: number, fromCurrency: string, toCurrency: string, rate: string): number {
  if (!Number.isSafeInteger(amountMinor)) throw new RangeError(`the amount must be a safe integer number of minor units, got ${amountMinor}`);
  const { units, scale } = rateOf(rate);
  const shift = currencyExponent(toCurrency) - currencyExponent(fromCurrency);
  const numerator = BigInt(amountMinor) * units * 10n ** BigInt(Math.max(shift, 0));
  const denominator = 10n ** BigInt(scale + Math.max(-shift, 0));
  const converted = divideHalfEven(numerator, denominator);
  if (converted > BigInt(Number.MAX_SAFE_INTEGER) || converted < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError("the converted amount exceeds the safe integer range");
  return Number(converted);
}

/** A fraction as a rate's text with RATE_DECIMALS fractional digits at most (half to even), trailing zeros dropped. */
function rateText(numerator: bigint, denominator: bigint): string {
  const scaled = divideHalfEven(numerator * 10n ** BigInt(RATE_DECIMALS), denominator);
  if (scaled <= 0n) throw new RangeError("the rate rounds to zero at 12 decimals");
  const digits = scaled.toString().padStart(RATE_DECIMALS + 1, "0");
  const whole = digits.slice(0, -RATE_DECIMALS);
  const fraction = digits.slice(-RATE_DECIMALS).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * The rate from `fromCurrency` to `toCurrency` out of reference rates quoted against one base currency (the ECB's:
 * units of each currency per euro): `perBase[to] / perBase[from]`, the base itself being 1, rounded to 12 decimals.
 * Null when either currency has no rate in the table. Currency codes are lower-case, as everywhere in the service.
 */
export function crossRate(perBase: Readonly<Record<string, string>>, base: string, fromCurrency: string, toCurrency: string): string | null {
  const quote = (currency: string): ExactRate | null => (currency === base ? { units: 1n, scale: 0 } : perBase[currency] === undefined ? null : rateOf(perBase[currency]));
  const from = quote(fromCurrency);
  const to = quote(toCurrency);
  if (!from || !to) return null;
  // (to.units / 10^to.scale) / (from.units / 10^from.scale)
  return rateText(to.units * 10n ** BigInt(from.scale), from.units * 10n ** BigInt(to.scale));
}

/**
 * The table a sale of `day` (YYYY-MM-DD, UTC) is converted with: the latest one published on or before that day, and
 * at most `maxAgeDays` older than it (weekends and holidays publish nothing); null when there is none that recent.
 */
export function tableForDay<T extends { day: string }>(tables: readonly T[], day: string, maxAgeDays: number): T | null {
  let best: T | null = null;
  for (const table of tables) if (table.day <= day && (!best || table.day > best.day)) best = table;
  if (!best) return null;
  const ageDays = (Date.parse(`${day}T00:00:00Z`) - Date.parse(`${best.day}T00:00:00Z`)) / 86_400_000;
  return ageDays <= maxAgeDays ? best : null;
}

/** Where a sale's rate came from: the processor's settlement (what the merchant received), or a reference table. */
export const RATE_SOURCES = ["processor", "ecb", "manual"] as const;
export type RateSource = (typeof RATE_SOURCES)[number];

/** A rate found for a sale: the rate, where it came from, and the day it was published (YYYY-MM-DD). */
export interface FoundRate {
  rate: string;
  source: RateSource;
  rateDay: string;
}

/** What a converted sale keeps beside its amount in the program's currency: what was paid, and the frozen rate. */
export interface SaleConversion extends FoundRate {
  originalAmountCents: number;
  originalCurrency: string;
}

/**
 * A sale of `amountMinor` `fromCurrency` converted into `toCurrency` at a found rate, with its lines (product rewards)
 * moved along: each line's share of the converted total by cumulative rounding, so the lines still add up to it.
 */
export function convertSale<L extends { amountCents: number }>(
  sale: { amountCents: number; currency: string; lines: readonly L[] | null },
  toCurrency: string,
  found: FoundRate,
): { amountCents: number; lines: L[] | null; conversion: SaleConversion } {
  const amountCents = convertMinorUnits(sale.amountCents, sale.currency, toCurrency, found.rate);
  let before = 0;
  let convertedBefore = 0;
  const lines =
    sale.lines?.map((line) => {
      before += line.amountCents;
      const convertedThrough = sale.amountCents > 0 ? Number(divideHalfEven(BigInt(amountCents) * BigInt(before), BigInt(sale.amountCents))) : 0;
      const share = convertedThrough - convertedBefore;
      convertedBefore = convertedThrough;
      return { ...line, amountCents: share };
    }) ?? null;
  return { amountCents, lines, conversion: { ...found, originalAmountCents: sale.amountCents, originalCurrency: sale.currency } };
}

/** A rate the processor sends as a JSON number (Stripe's `exchange_rate`: 0.924301) as a rate's text; null when unusable. */
export function rateOfNumber(value: number): string | null {
  if (!Number.isFinite(value) || value <= 0) return null;
  const text = value.toFixed(RATE_DECIMALS).replace(/\.?0+$/, "");
  return parseRate(text) ? text : null;
}

/**
 * Why a converted sale's amount is not its original amount at its frozen rate under the one rounding rule
 * (reconcile's `sale.converted_at_rate`); null when it is, or when the sale was not converted.
 */
export function conversionMismatch(sale: { amountCents: number; currency: string; conversion: SaleConversion | null }): string | null {
  const c = sale.conversion;
  if (!c) return null;
  if (!parseRate(c.rate)) return `its rate '${c.rate}' is not a rate`;
  const expected = convertMinorUnits(c.originalAmountCents, c.originalCurrency, sale.currency, c.rate);
  return expected === sale.amountCents
    ? null
    : `${sale.amountCents} ${sale.currency} is not ${c.originalAmountCents} ${c.originalCurrency} at ${c.rate} (${c.source}, ${c.rateDay}) = ${expected}`;
}
