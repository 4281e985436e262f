/**
 * The European Central Bank's euro reference rates (docs/currencies.md: the default source of a sale's exchange rate when the
 * processor gives none): the feed's XML as published at
 * https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml (and -hist-90d.xml, -hist.xml), one `<Cube time>`
 * per business day holding `<Cube currency rate>` quotes of units per euro. Parsed whole or refused whole: a feed
 * with one bad day or quote changes no table.
 */
import { XMLParser } from "fast-xml-parser";
import { isIsoCurrency } from "../../shared/domain/currencies";
import { parseRate } from "../../shared/domain/exchange-rates";

/** One business day's table: units of each currency per euro, as the text published. */
export interface ReferenceRateTable {
  day: string;
  perEuro: Record<string, string>;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => name === "Cube", parseAttributeValue: false, processEntities: false });

type Cube = { time?: unknown; currency?: unknown; rate?: unknown; Cube?: Cube[] };

/** The tables of a feed, oldest first; throws naming what is wrong when the document is not such a feed. */
export function parseEcbReferenceRates(xml: string): ReferenceRateTable[] {
  let document: Record<string, { Cube?: Cube[] } | undefined>;
  try {
    document = parser.parse(xml, true) as typeof document;
  } catch (err) {
    throw new Error(`The reference-rate feed is not well-formed XML: ${(err as Error).message}`, { cause: err });
  }
  const envelope = document["gesmes:Envelope"];
  const days = envelope?.Cube?.[0]?.Cube;
  if (!days) throw new Error("The reference-rate feed has no <Cube> of days: not the ECB's eurofxref format.");
  const tables = days.map((cube): ReferenceRateTable => {
    const day = String(cube.time ?? "");
    if (!DAY.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) throw new Error(`The reference-rate feed has a day '${day}' that is not a date (YYYY-MM-DD).`);
    const perEuro: Record<string, string> = {};
    for (const quote of cube.Cube ?? []) {
      const currency = String(quote.currency ?? "").toLowerCase();
      const rate = String(quote.rate ?? "");
      if (!/^[a-z]{3}$/.test(currency) || !isIsoCurrency(currency)) throw new Error(`The reference-rate feed quotes '${String(quote.currency)}' on ${day}: not an ISO 4217 currency.`);
      if (!parseRate(rate)) throw new Error(`The reference-rate feed's ${currency.toUpperCase()} rate on ${day} is '${rate}': not a positive decimal.`);
      perEuro[currency] = rate;
    }
    if (Object.keys(perEuro).length === 0) throw new Error(`The reference-rate feed has no quotes on ${day}.`);
    return { day, perEuro };
  });
  return tables.sort((a, b) => a.day.localeCompare(b.day));
}
