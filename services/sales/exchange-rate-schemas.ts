/** The input schemas of the sales service's exchange-rate actions (docs/currencies.md; their endpoints: exchange-rate-endpoints.ts). */
import { z } from "zod";
import { isIsoCurrency } from "../../shared/domain/currencies";
import { parseRate } from "../../shared/domain/exchange-rates";
import { fromDecimalText } from "../../shared/validation";
import { Currency } from "../../shared/values";
import { TABLE_SOURCES } from "./rate-tables";

/** Most tables one load takes (a year and a half of business days); the operator's rates-load sends longer files in parts. */
export const MAX_TABLES_PER_LOAD = 400;
/** Most quotes in one table (ISO 4217 has about 180 currencies). */
const MAX_RATES_PER_TABLE = 200;
/** The largest ECB document one load takes as text (the full history since 1999 is about 6 MB). */
const MAX_ECB_XML_CHARS = 8_000_000;

/** A calendar day, YYYY-MM-DD (a UTC day where it is a sale's). */
const Day = z.iso.date({ error: "must be a day of the calendar written YYYY-MM-DD" });

/** A rate as exact decimal text, as the conversion keeps it (shared/domain/exchange-rates.ts, parseRate). */
const RateText = z
  .string()
  .trim()
  .refine((text) => parseRate(text) !== null, "must be a positive decimal such as 1.0823, as text: up to 12 digits before and 12 after the point, no sign or exponent");

const Source = z.enum(TABLE_SOURCES, { error: "must be ecb or manual" });

/** One day's rates, keyed by ISO 4217 code in any case (kept lower-case). */
const Rates = z
  .record(z.string(), RateText)
  .superRefine((rates, ctx) => {
    const codes = Object.keys(rates);
    if (codes.length === 0) ctx.addIssue({ code: "custom", message: "must quote at least one currency" });
    if (codes.length > MAX_RATES_PER_TABLE) ctx.addIssue({ code: "custom", message: `may quote at most ${MAX_RATES_PER_TABLE} currencies` });
    const seen = new Set<string>();
    for (const code of codes) {
      const lower = code.trim().toLowerCase();
      if (!/^[a-z]{3}$/.test(lower) || !isIsoCurrency(lower)) ctx.addIssue({ code: "custom", path: [code], message: "is not an ISO 4217 currency code (three letters, such as usd)" });
      else if (seen.has(lower)) ctx.addIssue({ code: "custom", path: [code], message: "is given twice (codes are compared in any case)" });
      seen.add(lower);
    }
  })
  .transform((rates) => Object.fromEntries(Object.entries(rates).map(([code, rate]) => [code.trim().toLowerCase(), rate])));

/** `sales.exchangeRate`: the rate a sale of `day` from `from` to `to` is converted with. */
export const ExchangeRateInput = z
  .strictObject({
    from: Currency.meta({ description: "The currency to convert from (the sale's): an ISO 4217 code, any case.", example: "eur" }),
    to: Currency.meta({ description: "The currency to convert to (the program's): an ISO 4217 code, any case.", example: "usd" }),
    day: Day.meta({ description: "The day of the sale (UTC), YYYY-MM-DD.", example: "2026-11-27" }),
  })
  .refine((q) => q.from !== q.to, { path: ["to"], message: "must be another currency than 'from'" });

/** `sales.listExchangeRates`: the stored tables, newest first. */
export const ListExchangeRatesInput = z
  .strictObject({
    source: Source.optional().meta({ description: "Only the tables of this source: ecb (the European Central Bank's reference rates) or manual (loaded by an operator).", example: "ecb" }),
    from: Day.optional().meta({ description: "Only the tables of this day or later (YYYY-MM-DD).", example: "2026-11-01" }),
    to: Day.optional().meta({ description: "Only the tables of this day or earlier (YYYY-MM-DD).", example: "2026-11-30" }),
    limit: z
      .preprocess(fromDecimalText, z.number({ error: "must be an integer from 1 to 500" }).int().min(1).max(500))
      .default(30)
      .meta({ description: "At most this many tables (1 to 500; default 30).", example: 30 }),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { path: ["to"], message: "must not be before 'from'" });

const RateTableInput = z.strictObject({
  day: Day.meta({ description: "The business day the rates were published for (YYYY-MM-DD).", example: "2026-11-27" }),
  rates: Rates.meta({
    description:
      "Units of each currency per one unit of the base, as decimal text, keyed by ISO 4217 code (any case): with base eur, usd 1.0823 means one euro is 1.0823 US dollars. Leave the base itself out.",
    example: { usd: "1.0823", jpy: "161.45" },
  }),
});

/** `sales.loadExchangeRates`: tables given as JSON (a base and its days), or the ECB's XML as published. */
export const LoadExchangeRatesInput = z
  .strictObject({
    source: Source.optional().meta({
      description: "Whose rates these are: manual (your own; the default with tables) or ecb (the European Central Bank's; the default with ecbXml).",
      example: "manual",
    }),
    base: Currency.optional().meta({ description: "The currency the tables quote against (ISO 4217, any case); required with tables.", example: "eur" }),
    tables: z
      .array(RateTableInput)
      .min(1)
      .max(MAX_TABLES_PER_LOAD)
      .optional()
      .meta({ description: `The tables, one per day (at most ${MAX_TABLES_PER_LOAD}); a day already stored for the source is replaced whole. Send tables or ecbXml.` }),
    ecbXml: z.string().min(1).max(MAX_ECB_XML_CHARS).optional().meta({
      description:
        "Instead of tables: a document of the European Central Bank's euro reference rates as published (eurofxref-daily.xml or -hist-90d.xml), as text. Its days are loaded with base eur.",
      example: "<gesmes:Envelope>...</gesmes:Envelope>",
    }),
  })
  .superRefine((load, ctx) => {
    if ((load.tables === undefined) === (load.ecbXml === undefined)) {
      ctx.addIssue({ code: "custom", path: [load.tables === undefined ? "tables" : "ecbXml"], message: "send either tables (with base) or ecbXml, one of them" });
      return;
    }
    if (load.ecbXml !== undefined) {
      if (load.base !== undefined && load.base !== "eur") ctx.addIssue({ code: "custom", path: ["base"], message: "the ECB's rates are quoted against eur: omit base with ecbXml" });
      return;
    }
    if (load.base === undefined) {
      ctx.addIssue({ code: "custom", path: ["base"], message: "is required with tables: the currency the rates are quoted against" });
      return;
    }
    const days = new Set<string>();
    for (const [i, table] of (load.tables ?? []).entries()) {
      if (days.has(table.day)) ctx.addIssue({ code: "custom", path: ["tables", i, "day"], message: `gives ${table.day} a second time` });
      days.add(table.day);
      if (load.base in table.rates) ctx.addIssue({ code: "custom", path: ["tables", i, "rates", load.base], message: `is the base: its rate is 1 by definition, leave it out` });
    }
  });

/** `sales.refreshExchangeRates`: the job's fetch, now (the operator's rates-fetch). */
export const RefreshExchangeRatesInput = z.strictObject({});
