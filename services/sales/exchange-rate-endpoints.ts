/**
 * The exchange-rate actions' declarations (docs/currencies.md), spread into the sales service's (endpoints.ts): the operator's
 * routes to the reference-rate tables, and the job's fetch on demand (over the bus only).
 */
import type { ActionDeclaration } from "../../shared/endpoint";
import * as S from "./exchange-rate-schemas";

const tableExample = { source: "ecb", day: "2026-11-27", base: "eur", rates: { usd: "1.0823", jpy: "161.45", gbp: "0.8544" }, loadedAt: "2026-11-27T15:10:00.000Z" };

export const EXCHANGE_RATE_ACTIONS = {
  exchangeRate: {
    input: S.ExchangeRateInput,
    http: {
      method: "GET",
      path: "/api/admin/exchange-rates/rate",
      route: "admin",
      tag: "Operator",
      summary: "The exchange rate of a sale's day",
      description:
        "The reference rate a sale of that day in currency from, on a program paying in currency to, is converted with when the payment processor gives no rate: from the latest table published on or before the day, at most EXCHANGE_RATE_MAX_AGE_DAYS (4) days older, crossed through its base. The same day in a manual table and the ECB's: the manual one. None: 503 exchange_rate_unavailable, as a sale of that day would get.",
      example: { from: "gbp", to: "usd", day: "2026-11-29" },
      errors: ["exchange_rate_unavailable"],
      response: {
        description: "Units of to per unit of from (decimal text, up to 12 decimals), the table's source and day.",
        example: { rate: "1.266736891386", source: "ecb", rateDay: "2026-11-27" },
      },
    },
  },
  listExchangeRates: {
    input: S.ListExchangeRatesInput,
    http: {
      method: "GET",
      path: "/api/admin/exchange-rates",
      route: "admin",
      tag: "Operator",
      summary: "Reference-rate tables",
      description:
        "The stored reference-rate tables, newest day first (the same day: ecb before manual), each with its base and its rates per unit of the base as published. For more, ask again with to set to the day before the oldest one shown.",
      example: { source: "ecb", from: "2026-11-01", limit: 30 },
      response: { description: "The tables.", example: { data: [tableExample] } },
    },
  },
  loadExchangeRates: {
    input: S.LoadExchangeRatesInput,
    http: {
      method: "PUT",
      path: "/api/admin/exchange-rates",
      route: "admin",
      tag: "Operator",
      summary: "Load reference-rate tables",
      description:
        "Stores tables of reference rates, for installs that cannot reach the European Central Bank's feed or that convert with rates of their own: tables with their base, or the ECB's XML as published (ecbXml). All or nothing; a day already stored for the source is replaced whole. A body over the size limit (64 KB by default: about 100 days of 30 currencies as tables, 40 days as ECB XML) is refused: send longer histories in parts.",
      example: { source: "manual", base: "eur", tables: [{ day: "2026-11-27", rates: { usd: "1.0823", jpy: "161.45" } }] },
      response: {
        description: "How many tables were saved, their source, base, first and last day.",
        example: { saved: 1, source: "manual", base: "eur", firstDay: "2026-11-27", lastDay: "2026-11-27" },
      },
    },
  },
  refreshExchangeRates: {
    input: S.RefreshExchangeRatesInput,
  },
} satisfies Record<string, ActionDeclaration>;
