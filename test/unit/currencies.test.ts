import { ISO_4217_CODES, isIsoCurrency, isoExponent } from "../../shared/domain/currencies";
import { currencyExponent, toMajorUnits } from "../../shared/domain/money";

describe("ISO 4217 table", () => {
  it("knows the exponents of the codes that differ from 2", () => {
    expect(isoExponent("jpy")).toBe(0);
    expect(isoExponent("KRW")).toBe(0);
    expect(isoExponent("isk")).toBe(0);
    expect(isoExponent("usd")).toBe(2);
    expect(isoExponent("EUR")).toBe(2);
    expect(isoExponent("bhd")).toBe(3);
    expect(isoExponent("kwd")).toBe(3);
    expect(isoExponent("iqd")).toBe(3);
    expect(isoExponent("clf")).toBe(4);
  });

  it("refuses codes that are not active ISO 4217 currencies with minor units", () => {
    for (const code of ["xyz", "abc", "usdd", "us", "", "XAU", "xdr", "xts", "xxx", "zwl", "__proto__", "constructor", "toString"]) {
      expect(isIsoCurrency(code)).toBe(false);
      expect(isoExponent(code)).toBeUndefined();
    }
  });

  it("is a list of lowercase three-letter codes with exponents 0, 2, 3 or 4", () => {
    expect(ISO_4217_CODES.length).toBeGreaterThan(150);
    for (const code of ISO_4217_CODES) {
      expect(code).toMatch(/^[a-z]{3}$/);
      expect([0, 2, 3, 4]).toContain(isoExponent(code));
    }
  });

  it("agrees with Intl on the codes Intl knows, except where CLDR departs from ISO", () => {
    // CLDR (Intl) rounds some currencies for display; ISO defines the minor unit. Pinned, so a Node upgrade changes nothing.
    const cldrDiffers = new Set([
      "afn",
      "all",
      "amd",
      "cop",
      "huf",
      "idr",
      "iqd",
      "irr",
      "kpw",
      "lak",
      "lbp",
      "mga",
      "mmk",
      "rsd",
      "sle",
      "sos",
      "syp",
      "twd",
      "uyw",
      "yer",
      "clf",
      "uzs",
      "ugx",
      "pkr",
      "mru",
      "isk",
      "crc",
      "bov",
      "che",
      "chw",
      "cou",
      "mxv",
      "usn",
      "uyi",
      "ved",
      "xcg",
      "zwg",
      "stn",
      "mnt",
      "kzt",
    ]);
    let compared = 0;
    for (const code of ISO_4217_CODES) {
      if (cldrDiffers.has(code)) continue;
      const digits = new Intl.NumberFormat("en", { style: "currency", currency: code.toUpperCase() }).resolvedOptions().maximumFractionDigits;
      expect([code, digits]).toEqual([code, isoExponent(code)]);
      compared++;
    }
    expect(compared).toBeGreaterThan(100);
  });

  it("drives the API's major units", () => {
    expect(currencyExponent("bhd")).toBe(3);
    expect(toMajorUnits(1234, "bhd")).toBe(1.234);
    expect(toMajorUnits(100, "jpy")).toBe(100);
    expect(toMajorUnits(12345, "clf")).toBe(1.2345);
  });
});
