/**
 * The packed running totals (shared/storage/running-packed.ts): the bytes PostgreSQL's `int4send || int8send` writes,
 * the ranking merged from a range's parts, and reconcile's comparison, each against a plain recount.
 */
import fc from "fast-check";
import { differingPartners, packFigures, rankPackedRange, unpackFigures } from "../../shared/storage/running-packed";

/** Partners' figures: unique ids (int32, never 0, the program's row), integer totals within int64 and 2^53. */
const figures = fc.uniqueArray(fc.record({ partnerId: fc.integer({ min: 1, max: 40 }), figure: fc.integer({ min: -1_000, max: 1_000 }) }), {
  selector: (row) => row.partnerId,
  maxLength: 30,
});

const asMap = (rows: ReadonlyArray<{ partnerId: number; figure: number }>) => new Map(rows.map((row) => [row.partnerId, row.figure]));

test("a packed value is PostgreSQL's bytes: each partner's int4 then int8, big-endian, by ascending id", () => {
  const packed = packFigures([
    { partnerId: 300, figure: -2 },
    { partnerId: 7, figure: 2 ** 40 + 5 },
  ]);
  expect(packed.toString("hex")).toBe(["00000007", "0000010000000005", "0000012c", "fffffffffffffffe"].join(""));
  expect(unpackFigures(packed)).toEqual({ ids: Int32Array.from([7, 300]), values: Float64Array.from([2 ** 40 + 5, -2]) });
  expect(unpackFigures(null)).toEqual({ ids: new Int32Array(0), values: new Float64Array(0) });
  expect(() => unpackFigures(new Uint8Array(13))).toThrow("13 bytes is not whole 12-byte entries");
});

test("unpacking a packed value gives back every partner's figure", () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.record({ partnerId: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), figure: fc.maxSafeInteger() }), { selector: (row) => row.partnerId }), (rows) => {
      const { ids, values } = unpackFigures(packFigures(rows));
      expect(new Map([...ids].map((id, i) => [id, values[i]]))).toEqual(asMap(rows));
      expect([...ids]).toEqual([...ids].sort((a, b) => a - b));
    }),
  );
});

test("the ranking of a range is last - before + after per partner: the best above zero (ties: lower id), and how many are above zero", () => {
  fc.assert(
    fc.property(
      figures,
      figures,
      figures,
      fc.option(fc.array(fc.integer({ min: 1, max: 40 })), { nil: undefined }),
      fc.integer({ min: 0, max: 8 }),
      (last, before, after, partnerIds, limit) => {
        const total = new Map<number, number>();
        for (const [rows, sign] of [
          [last, 1],
          [before, -1],
          [after, 1],
        ] as const)
          for (const row of rows) total.set(row.partnerId, (total.get(row.partnerId) ?? 0) + sign * row.figure);
        const above = [...total]
          .filter(([id, v]) => v > 0 && (!partnerIds || partnerIds.includes(id)))
          .sort((a, b) => b[1] - a[1] || a[0] - b[0])
          .map(([id]) => id);
        const range = { last: packFigures(last), before: packFigures(before), after: packFigures(after) };
        expect(rankPackedRange(range, partnerIds, limit)).toEqual({ partnerIds: above.slice(0, limit), partnersCounted: above.length });
      },
    ),
  );
  expect(rankPackedRange({ last: null, before: null, after: null }, undefined, 100)).toEqual({ partnerIds: [], partnersCounted: 0 });
});

test("reconcile's comparison names each partner whose figure differs or that only one side holds", () => {
  fc.assert(
    fc.property(figures, figures, (stored, counted) => {
      const [have, want] = [asMap(stored), asMap(counted)];
      const ids = [...new Set([...have.keys(), ...want.keys()])].sort((a, b) => a - b);
      const expected = ids.filter((id) => have.get(id) !== want.get(id)).map((partnerId) => ({ partnerId, stored: have.get(partnerId) ?? 0, counted: want.get(partnerId) ?? 0 }));
      expect(differingPartners(unpackFigures(packFigures(stored)), unpackFigures(packFigures(counted)))).toEqual(expected);
    }),
  );
});
