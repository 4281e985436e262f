/** Converting sale amounts between currencies (shared/domain/exchange-rates.ts): exact rates, half-even rounding once. */
import fc from "fast-check";
import { conversionMismatch, convertMinorUnits, convertSale, crossRate, divideHalfEven, parseRate, rateOfNumber, tableForDay } from "../../shared/domain/exchange-rates";
import { percentageOfCents } from "../../shared/domain/money";
import { planRefund, type CommissionStatus } from "../../shared/domain/refunds";

describe("divideHalfEven", () => {
  test("halves go to the even neighbour, both signs; the rest to the nearest", () => {
    expect([5n, 15n, 25n, 35n, -5n, -15n, -25n].map((n) => divideHalfEven(n, 10n))).toEqual([0n, 2n, 2n, 4n, -0n, -2n, -2n]);
    expect([14n, 16n, -14n, -16n, 1n, 2n].map((n) => divideHalfEven(n, 10n))).toEqual([1n, 2n, -1n, -2n, 0n, 0n]);
    expect(() => divideHalfEven(1n, 0n)).toThrow("positive");
  });

  test("is within half a unit of the exact quotient, and exact when it divides", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), (n, d) => {
        const q = divideHalfEven(n, d);
        const error = q * d - n;
        expect(2n * (error < 0n ? -error : error) <= d).toBe(true);
        expect(divideHalfEven(n * d, d)).toBe(n);
      }),
    );
  });
});

describe("parseRate", () => {
  test("a positive decimal of up to 12 + 12 digits, exactly", () => {
    expect(parseRate("1.0823")).toEqual({ units: 10823n, scale: 4 });
    expect(parseRate("161")).toEqual({ units: 161n, scale: 0 });
    expect(parseRate("0.000000000001")).toEqual({ units: 1n, scale: 12 });
    for (const bad of ["0", "0.0", "-1", "1e3", ".5", "1.", " 1", "1,5", "1.0000000000001", "NaN", ""]) expect(parseRate(bad)).toBeNull();
  });
});

describe("convertMinorUnits", () => {
  test("moves between exponents: EUR, JPY (0) and KWD (3) into USD and back", () => {
    expect(convertMinorUnits(10_000, "eur", "usd", "1.0823")).toBe(10_823); // EUR 100.00 -> USD 108.23
    expect(convertMinorUnits(12_345, "jpy", "usd", "0.006712")).toBe(8286); // JPY 12345 -> USD 82.8596 -> 82.86
    expect(convertMinorUnits(1_500, "kwd", "usd", "3.2552")).toBe(488); // KWD 1.500 -> USD 4.8828 -> 4.88
    expect(convertMinorUnits(10_823, "usd", "jpy", "148.99")).toBe(16_125); // USD 108.23 -> JPY 16125.1877
    expect(convertMinorUnits(10_000, "usd", "kwd", "0.3072")).toBe(30_720); // USD 100.00 -> KWD 30.720
  });

  test("rounds once, half to even, on the converted minor units", () => {
    expect(convertMinorUnits(1, "usd", "eur", "0.5")).toBe(0); // 0.5 cent -> 0
    expect(convertMinorUnits(3, "usd", "eur", "0.5")).toBe(2); // 1.5 cents -> 2
    expect(convertMinorUnits(5, "usd", "eur", "0.5")).toBe(2); // 2.5 cents -> 2
    expect(convertMinorUnits(5, "jpy", "usd", "0.001")).toBe(0); // 0.5 cent -> 0
  });

  test("a rate of 1 between currencies of one exponent changes nothing; larger amounts never convert to less", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 8 }), fc.integer({ min: 0, max: 10 ** 6 }), fc.stringMatching(/^[1-9]\d{0,3}\.\d{1,6}$/), (a, extra, rate) => {
        expect(convertMinorUnits(a, "eur", "usd", "1")).toBe(a);
        expect(convertMinorUnits(a + extra, "jpy", "kwd", rate)).toBeGreaterThanOrEqual(convertMinorUnits(a, "jpy", "kwd", rate));
      }),
    );
  });

  test("is within half a minor unit of the exact product", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 10 }), fc.integer({ min: 1, max: 10 ** 8 }), (a, rateUnits) => {
        // rate = rateUnits / 10^4; EUR -> USD: exact = a * rateUnits / 10^4 cents.
        const converted = BigInt(convertMinorUnits(a, "eur", "usd", (rateUnits / 10_000).toFixed(4)));
        const error = converted * 10_000n - BigInt(a) * BigInt(rateUnits);
        expect(2n * (error < 0n ? -error : error) <= 10_000n).toBe(true);
      }),
    );
  });

  test("refuses what is not a rate or a safe amount", () => {
    expect(() => convertMinorUnits(100, "eur", "usd", "-1.2")).toThrow("is not an exchange rate");
    expect(() => convertMinorUnits(1.5, "eur", "usd", "1.2")).toThrow("safe integer");
    expect(() => convertMinorUnits(Number.MAX_SAFE_INTEGER, "jpy", "kwd", "999999")).toThrow("safe integer range");
  });
});

describe("crossRate", () => {
  const ecb = { usd: "1.0823", jpy: "161.45", gbp: "0.8544", kwd: "0.3325" };

  test("through the base currency, rounded to 12 decimals; the base itself is 1", () => {
    expect(crossRate(ecb, "eur", "eur", "usd")).toBe("1.0823");
    expect(crossRate(ecb, "eur", "usd", "eur")).toBe("0.923958237088"); // 1 / 1.0823
    expect(crossRate(ecb, "eur", "usd", "jpy")).toBe("149.173057377807"); // 161.45 / 1.0823 = 149.17305737780652...
    expect(crossRate(ecb, "eur", "jpy", "kwd")).toBe("0.002059461133"); // 0.3325 / 161.45
    expect(crossRate(ecb, "eur", "usd", "usd")).toBe("1");
    expect(crossRate(ecb, "eur", "usd", "chf")).toBeNull();
  });

  test("a crossed rate converts within a minor unit of converting through the base exactly", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 9 }), fc.constantFrom("usd", "jpy", "gbp", "kwd"), fc.constantFrom("usd", "jpy", "gbp", "kwd"), (a, from, to) => {
        const direct = convertMinorUnits(a, from, to, crossRate(ecb, "eur", from, to)!);
        // Exactly: a / perEur[from] * perEur[to], in the two currencies' exponents.
        const exp = (c: string) => ({ jpy: 0, kwd: 3 })[c as "jpy" | "kwd"] ?? 2;
        const exact = (a / Number(ecb[from as keyof typeof ecb])) * Number(ecb[to as keyof typeof ecb]) * 10 ** (exp(to) - exp(from));
        expect(Math.abs(direct - exact)).toBeLessThanOrEqual(1 + exact * 1e-9);
      }),
    );
  });
});

describe("tableForDay", () => {
  const tables = [{ day: "2026-11-20" }, { day: "2026-11-23" }, { day: "2026-11-27" }];

  test("the latest published on or before the day, at most maxAgeDays old", () => {
    expect(tableForDay(tables, "2026-11-27", 4)).toEqual({ day: "2026-11-27" });
    expect(tableForDay(tables, "2026-11-29", 4)).toEqual({ day: "2026-11-27" }); // a weekend
    expect(tableForDay(tables, "2026-11-26", 4)).toEqual({ day: "2026-11-23" }); // a missing day
    expect(tableForDay(tables, "2026-12-02", 4)).toBeNull(); // stale
    expect(tableForDay(tables, "2026-11-19", 4)).toBeNull(); // before the first
    expect(tableForDay([], "2026-11-27", 4)).toBeNull();
  });
});

describe("convertSale", () => {
  const found = { rate: "0.006662357649", source: "ecb" as const, rateDay: "2026-11-27" };

  test("converts the amount once and keeps what was paid with the rate", () => {
    expect(convertSale({ amountCents: 15_000, currency: "jpy", lines: null }, "usd", found)).toEqual({
      amountCents: 9994,
      lines: null,
      conversion: { originalAmountCents: 15_000, originalCurrency: "jpy", ...found },
    });
  });

  test("moves the lines along by cumulative rounding: they add up to the converted amount", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2_000_000 }), { minLength: 1, maxLength: 8 }), (amounts) => {
        const total = amounts.reduce((a, b) => a + b, 0);
        fc.pre(total > 0);
        const lines = amounts.map((amountCents, i) => ({ amountCents, productId: `p${i}` }));
        const converted = convertSale({ amountCents: total, currency: "jpy", lines }, "usd", found);
        expect(converted.lines!.reduce((a, l) => a + l.amountCents, 0)).toBe(converted.amountCents);
        expect(converted.lines!.map((l) => l.productId)).toEqual(lines.map((l) => l.productId));
        for (const l of converted.lines!) expect(l.amountCents).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});

describe("rateOfNumber (Stripe's exchange_rate)", () => {
  test("a JSON number as a rate's text, exactly as written", () => {
    expect(rateOfNumber(1.0792)).toBe("1.0792");
    expect(rateOfNumber(0.006662)).toBe("0.006662");
    expect(rateOfNumber(150.123456)).toBe("150.123456");
    expect(rateOfNumber(3)).toBe("3");
  });
  test("nothing for what is not a rate", () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e-13]) expect(rateOfNumber(bad)).toBeNull();
  });
});

describe("conversionMismatch (reconcile's sale.converted_at_rate)", () => {
  const conversion = { originalAmountCents: 9200, originalCurrency: "eur", rate: "1.0823", source: "manual" as const, rateDay: "2026-11-27" };
  test("none for a sale at its frozen rate, or not converted", () => {
    expect(conversionMismatch({ amountCents: 9957, currency: "usd", conversion })).toBeNull();
    expect(conversionMismatch({ amountCents: 1, currency: "usd", conversion: null })).toBeNull();
  });
  test("says what the amount should be", () => {
    expect(conversionMismatch({ amountCents: 9958, currency: "usd", conversion })).toBe("9958 usd is not 9200 eur at 1.0823 (manual, 2026-11-27) = 9957");
  });
});

describe("refunds of a converted sale, taken in the sale's own currency", () => {
  test("any sequence of partial refunds never deducts more than the commission, and a full refund deducts all of it", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("jpy", "kwd", "eur"),
        fc.integer({ min: 1, max: 10 ** 8 }),
        fc.stringMatching(/^0\.00[1-9]\d{0,4}$|^[1-3]\.\d{1,4}$/),
        fc.integer({ min: 1, max: 10_000 }),
        fc.array(fc.integer({ min: 1, max: 10 ** 8 }), { maxLength: 8 }),
        (currency, saleMinor, rate, basisPoints, refunds) => {
          // The commission is in the program's currency (USD), of the converted amount; refunds are in the sale's.
          const commission = percentageOfCents(convertMinorUnits(saleMinor, currency, "usd", rate), basisPoints);
          let state = {
            commissionCents: commission,
            saleAmountCents: saleMinor,
            refundedCents: 0,
            status: "pending" as CommissionStatus,
            previousRefunds: [] as Array<{ refundId: string | null; requestedCents: number }>,
          };
          let deducted = 0;
          for (const [i, amount] of [...refunds, 0].entries()) {
            const plan = planRefund(state, { amountCents: amount, refundId: `re_${i}` });
            if (plan.kind === "skip") continue;
            expect(plan.deductionCents).toBeGreaterThanOrEqual(0);
            deducted += plan.deductionCents;
            expect(deducted).toBeLessThanOrEqual(commission);
            state = {
              ...state,
              refundedCents: plan.refundedAfterCents,
              status: plan.nextStatus,
              previousRefunds: [...state.previousRefunds, { refundId: plan.refundId, requestedCents: plan.requestedCents }],
            };
          }
          // The last call (0: the rest) refunded the sale in full.
          expect([state.refundedCents, deducted]).toEqual([saleMinor, commission]);
        },
      ),
    );
  });
});
