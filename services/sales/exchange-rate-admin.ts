/**
 * The operator's side of the reference rates (docs/currencies.md): loading tables by hand, for installs that cannot reach the
 * feed or want their own rates (PUT /api/admin/exchange-rates, the REPL's rates-load), and listing what is stored.
 */
import type { z } from "zod";
import { toDto } from "../../shared/dto";
import { InvalidRequestError } from "../../shared/errors";
import type { Input } from "../../shared/endpoint";
import type { LoadExchangeRatesInput, ListExchangeRatesInput } from "./exchange-rate-schemas";
import type { NewRateTable, TableSource, RateTable, RateTableStore } from "./rate-tables";
import { parseEcbReferenceRates } from "./reference-rates";

/** What a load answers: how many tables were saved, of which source and base, and their first and last day. */
export interface LoadedRates {
  saved: number;
  source: TableSource;
  base: string;
  firstDay: string;
  lastDay: string;
}

/** The tables of a load: as given, or the ECB document's days (refused whole, naming what is wrong, as invalid_request). */
export function tablesOfLoad(load: z.output<typeof LoadExchangeRatesInput>): { source: TableSource; base: string; tables: NewRateTable[] } {
  if (load.ecbXml !== undefined) {
    let parsed;
    try {
      parsed = parseEcbReferenceRates(load.ecbXml);
    } catch (err) {
      const message = (err as Error).message;
      throw new InvalidRequestError(`Invalid 'ecbXml': ${message}`, { issues: [{ field: "ecbXml", message }] });
    }
    return { source: load.source ?? "ecb", base: "eur", tables: parsed.map((t) => ({ day: t.day, rates: t.perEuro })) };
  }
  return { source: load.source ?? "manual", base: load.base!, tables: load.tables! };
}

/** Saves a load all or nothing (a day of the source already stored is replaced whole). */
export async function loadRateTables(store: RateTableStore, load: Input<typeof LoadExchangeRatesInput>): Promise<LoadedRates> {
  const { source, base, tables } = tablesOfLoad(load);
  const days = tables.map((t) => t.day).sort();
  const saved = await store.saveTables(source, base, tables);
  return { saved, source, base, firstDay: days[0], lastDay: days[days.length - 1] };
}

/** The stored tables, newest first, as JSON. */
export async function listRateTables(store: RateTableStore, filter: Input<typeof ListExchangeRatesInput>) {
  const tables: RateTable[] = await store.listTables(filter);
  return { data: tables.map((t) => toDto(t)) };
}
