import { assertCents, currencyExponent, mulDivRound, percentageOfCents, toMajorUnits } from "../../shared/domain/money";

describe("mulDivRound", () => {
  it("computes round(a * b / c) exactly when it divides", () => {
    expect(mulDivRound(10_000, 2000, 10_000)).toBe(2000);
    expect(mulDivRound(0, 123, 7)).toBe(0);
    expect(mulDivRound(123, 0, 7)).toBe(0);
  });

  it("rounds halves up", () => {
    expect(mulDivRound(1, 1, 2)).toBe(1); // 0.5
    expect(mulDivRound(3, 1, 2)).toBe(2); // 1.5
    expect(mulDivRound(5, 1, 2)).toBe(3); // 2.5 (not banker's rounding)
    expect(mulDivRound(25, 1, 10)).toBe(3); // 2.5
  });

  it("rounds below a half down and above a half up", () => {
    expect(mulDivRound(1, 1, 3)).toBe(0); // 0.333
    expect(mulDivRound(2, 1, 3)).toBe(1); // 0.667
    expect(mulDivRound(2000, 3333, 10_000)).toBe(667); // 666.6
    expect(mulDivRound(2000, 1, 10_000)).toBe(0); // 0.2
    expect(mulDivRound(999, 1250, 10_000)).toBe(125); // 124.875
  });

  it("stays exact where a floating-point product would not", () => {
    const max = Number.MAX_SAFE_INTEGER; // 9007199254740991
    expect(mulDivRound(max, 10_000, 10_000)).toBe(max);
    expect(mulDivRound(max, max, max)).toBe(max);
    // max * 2000 / 10000 = 1801439850948198.2 -> 1801439850948198
    expect(mulDivRound(max, 2000, 10_000)).toBe(1_801_439_850_948_198);
    // max * 5000 / 10000 = 4503599627370495.5 -> rounds up; doubles lose the half and give ...495.
    expect(mulDivRound(max, 5000, 10_000)).toBe(4_503_599_627_370_496);
    expect(Math.round((max * 5000) / 10_000)).not.toBe(4_503_599_627_370_496);
    // max * 9999 / 10000 = 9006298534815516.9009 -> ...517 (doubles give ...516).
    expect(mulDivRound(max, 9999, 10_000)).toBe(9_006_298_534_815_517);
    expect(mulDivRound(123_456_789_012_345, 7777, 10_000)).toBe(96_012_344_814_901); // 96012344814900.7065 rounds up
  });

  it("rejects unsafe or fractional operands, negative operands and a non-positive divisor", () => {
    expect(() => mulDivRound(1.5, 1, 1)).toThrow(RangeError);
    expect(() => mulDivRound(Number.MAX_SAFE_INTEGER + 1, 1, 1)).toThrow(RangeError);
    expect(() => mulDivRound(1, Number.NaN, 1)).toThrow(RangeError);
    expect(() => mulDivRound(-1, 1, 1)).toThrow(RangeError);
    expect(() => mulDivRound(1, -1, 1)).toThrow(RangeError);
    expect(() => mulDivRound(1, 1, 0)).toThrow(RangeError);
    expect(() => mulDivRound(1, 1, -2)).toThrow(RangeError);
  });
});

describe("assertCents", () => {
  it("accepts safe integers and names what it rejects", () => {
    expect(() => assertCents(0, "amount")).not.toThrow();
    expect(() => assertCents(-5, "amount")).not.toThrow();
    expect(() => assertCents(0.1, "amount")).toThrow(/amount/);
    expect(() => assertCents(Infinity, "amount")).toThrow(RangeError);
  });
});

describe("percentageOfCents", () => {
  it("takes basis points of an amount with half-up rounding", () => {
    expect(percentageOfCents(10_000, 2000)).toBe(2000); // 20 %
    expect(percentageOfCents(12_345, 1250)).toBe(1543); // 1543.125
    expect(percentageOfCents(1, 5000)).toBe(1); // 0.5
    expect(percentageOfCents(12_345, 10_000)).toBe(12_345); // 100 %
    expect(percentageOfCents(12_345, 0)).toBe(0);
  });
});

describe("toMajorUnits", () => {
  it("divides two-decimal currencies by 100", () => {
    expect(toMajorUnits(1250, "usd")).toBe(12.5);
    expect(toMajorUnits(1999, "EUR")).toBe(19.99);
    expect(toMajorUnits(1, "usd")).toBe(0.01);
    expect(toMajorUnits(0, "usd")).toBe(0);
    expect(toMajorUnits(-600, "usd")).toBe(-6);
  });

  it("leaves zero-decimal currencies as they are", () => {
    expect(toMajorUnits(500, "jpy")).toBe(500);
    expect(toMajorUnits(500, "JPY")).toBe(500);
    expect(toMajorUnits(12_345, "krw")).toBe(12_345);
    expect(toMajorUnits(0, "clp")).toBe(0);
  });

  it("divides three-decimal currencies by 1000", () => {
    expect(toMajorUnits(1234, "kwd")).toBe(1.234);
    expect(toMajorUnits(1000, "BHD")).toBe(1);
  });

  it("gives numbers without floating-point noise", () => {
    // 0.1 + 0.2 style artefacts must not reach the API.
    for (const cents of [1, 7, 10, 29, 57, 110, 1005, 123_456_789]) {
      expect(String(toMajorUnits(cents, "usd"))).toBe(String(cents / 100));
      expect(toMajorUnits(cents, "usd").toString().split(".")[1]?.length ?? 0).toBeLessThanOrEqual(2);
    }
  });
});

describe("currencyExponent", () => {
  it("knows the minor-unit exponents, case-insensitively", () => {
    expect(currencyExponent("usd")).toBe(2);
    expect(currencyExponent("xof")).toBe(0);
    expect(currencyExponent("Jpy")).toBe(0);
    expect(currencyExponent("omr")).toBe(3);
  });
});
