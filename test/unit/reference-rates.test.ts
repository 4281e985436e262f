/** The ECB's euro reference-rate feed (services/sales/reference-rates.ts), parsed whole or refused whole. */
import fs from "node:fs";
import path from "node:path";
import { parseEcbReferenceRates } from "../../services/sales/reference-rates";
import { crossRate, tableForDay } from "../../shared/domain/exchange-rates";

const SAMPLE = fs.readFileSync(path.join(__dirname, "..", "fixtures", "ecb", "eurofxref-hist-sample.xml"), "utf8");

test("a feed of days: each day's quotes per euro as published, oldest first", () => {
  const tables = parseEcbReferenceRates(SAMPLE);
  expect(tables.map((t) => t.day)).toEqual(["2026-11-24", "2026-11-26", "2026-11-27"]);
  expect(tables[2].perEuro).toEqual({ usd: "1.0823", jpy: "161.45", gbp: "0.8544", chf: "0.9371" });
  // A sale of Sunday the 29th uses Friday's table; Wednesday the 25th (no table) uses Tuesday's.
  expect(tableForDay(tables, "2026-11-29", 4)?.day).toBe("2026-11-27");
  expect(crossRate(tableForDay(tables, "2026-11-25", 4)!.perEuro, "eur", "gbp", "usd")).toBe("1.259228971963");
});

test("a feed with one bad day or quote is refused whole, naming it", () => {
  const broken = (from: string, to: string) => () => parseEcbReferenceRates(SAMPLE.replace(from, to));
  expect(broken("rate='161.45'", "rate='-161.45'")).toThrow("JPY rate on 2026-11-27 is '-161.45'");
  expect(broken("currency='GBP' rate='0.8544'", "currency='XYZ' rate='0.8544'")).toThrow("quotes 'XYZ' on 2026-11-27");
  expect(broken("time='2026-11-26'", "time='26.11.2026'")).toThrow("day '26.11.2026'");
  expect(() => parseEcbReferenceRates("<gesmes:Envelope><Cube></gesmes:Envelope>")).toThrow("not well-formed XML");
  expect(() => parseEcbReferenceRates("<html><body>Maintenance</body></html>")).toThrow("not the ECB's eurofxref format");
  expect(() => parseEcbReferenceRates("<gesmes:Envelope><Cube><Cube time='2026-11-27'></Cube></Cube></gesmes:Envelope>")).toThrow("no quotes on 2026-11-27");
});
