/**
 * The packed running totals (shared/storage/running-packed.ts): the bytes PostgreSQL's `int4send || int8send` writes,
 * the ranking merged from a range's parts, the cache of packed days, and reconcile's comparison, each against a
 * plain recount.
 */
import fc from "fast-check";
import { differingPartners, PackedDayCache, packFigures, rankPackedRange, rankRange, unpackFigures, unpackRows, type PackedRangeRow } from "../../shared/storage/running-packed";

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

/** Rows packed in any order, several a partner (the rollup's rows of the days not yet built). */
const rows = fc.array(fc.record({ partnerId: fc.integer({ min: 1, max: 40 }), figure: fc.integer({ min: -1_000, max: 1_000 }) }), { maxLength: 40 });

/** Rows packed as they come, in their order (PostgreSQL's string_agg without ORDER BY). */
const packedAsTheyCome = (list: ReadonlyArray<{ partnerId: number; figure: number }>) => Buffer.concat(list.map((row) => packFigures([row])));

test("rows packed in any order are summed per partner, by ascending id", () => {
  const anyId = fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constantFrom(-(2 ** 31), -1, 2 ** 31 - 1));
  fc.assert(
    fc.property(fc.array(fc.record({ partnerId: anyId, figure: fc.maxSafeInteger() }), { maxLength: 40 }), (list) => {
      const sums = new Map<number, number>();
      for (const row of list) sums.set(row.partnerId, (sums.get(row.partnerId) ?? 0) + row.figure);
      const { ids, values } = unpackRows(packedAsTheyCome(list));
      expect([...ids]).toEqual([...sums.keys()].sort((a, b) => a - b));
      expect(new Map([...ids].map((id, i) => [id, values[i]]))).toEqual(sums);
    }),
  );
});

test("the ranking of a range is last - before + after per partner: the best above zero (ties: lower id), and how many are above zero", () => {
  fc.assert(
    fc.property(
      figures,
      figures,
      rows,
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
        const range = { last: unpackFigures(packFigures(last)), before: unpackFigures(packFigures(before)), after: unpackRows(packedAsTheyCome(after)) };
        expect(rankRange(range, partnerIds, limit)).toEqual({ partnerIds: above.slice(0, limit), partnersCounted: above.length });
      },
    ),
  );
});

test("the cache of packed days: the query leaves out the revisions held, the least recently used go, a day let go meanwhile is read again", async () => {
  const day = (n: number) => packFigures([{ partnerId: n, figure: n * 10 }]);
  const stored = new Map([1, 2, 3].map((n) => [String(n), day(n)]));
  const heldAsked: string[][] = [];
  const cache = new PackedDayCache(2);
  // A query as topPartnersQuery's: the revisions of the range's two days, the bytes of those not held.
  const read = (last: string, before: string | null, evictBefore?: () => void) => async (held: string[]) => {
    heldAsked.push(held);
    const row: PackedRangeRow = {
      lastRevision: last,
      last: held.includes(last) ? null : stored.get(last)!,
      beforeRevision: before,
      before: before === null || held.includes(before) ? null : stored.get(before)!,
      after: packFigures([{ partnerId: 9, figure: 1 }]),
    };
    evictBefore?.();
    return row;
  };
  expect(await rankPackedRange(cache, read("2", "1"), undefined, 5)).toEqual({ partnerIds: [2, 9], partnersCounted: 2 });
  expect(await rankPackedRange(cache, read("2", "1"), undefined, 5)).toEqual({ partnerIds: [2, 9], partnersCounted: 2 });
  expect(heldAsked).toEqual([[], ["2", "1"]]);
  // A third day pushes out the least recently used: 2 (the last read touched 2, then 1).
  expect(await rankPackedRange(cache, read("3", null), undefined, 5)).toEqual({ partnerIds: [3, 9], partnersCounted: 2 });
  expect(cache.revisions()).toEqual(["1", "3"]);
  // Held when the query ran, let go before its row came back (another ranking's days): read again with none held.
  heldAsked.length = 0;
  expect(
    await rankPackedRange(
      cache,
      read("3", "1", () => cache.figures("2", stored.get("2")!)),
      undefined,
      5,
    ),
  ).toEqual({ partnerIds: [3, 9], partnersCounted: 2 });
  expect(heldAsked).toEqual([["1", "3"], []]);
  // No day built: empty parts.
  expect(await rankPackedRange(new PackedDayCache(), async () => ({ lastRevision: null, last: null, beforeRevision: null, before: null, after: null }), undefined, 100)).toEqual({
    partnerIds: [],
    partnersCounted: 0,
  });
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

test("a range's built part is kept by its two days' revisions: asked again, only the days after it are merged", async () => {
  const cache = new PackedDayCache();
  const [last, before] = [
    unpackFigures(
      packFigures([
        { partnerId: 1, figure: 50 },
        { partnerId: 2, figure: 30 },
      ]),
    ),
    unpackFigures(packFigures([{ partnerId: 1, figure: 10 }])),
  ];
  const part = cache.closedPart("7", "6", last, before);
  expect([...part.ids]).toEqual([1, 2]);
  expect([...part.values]).toEqual([40, 30]);
  // The same revisions name the same figures: the kept part answers, whatever is passed.
  expect(cache.closedPart("7", "6", before, last)).toBe(part);
  // Without a revision (no such day) nothing is kept.
  expect(cache.closedPart("7", null, last, unpackFigures(null))).not.toBe(cache.closedPart("7", null, last, unpackFigures(null)));
  // The ranking merges the days after the built ones into the kept part: partner 2's 20 today puts it first.
  const row = (after: Array<{ partnerId: number; figure: number }>) => async (): Promise<PackedRangeRow> => ({
    lastRevision: "7",
    last: null,
    beforeRevision: "6",
    before: null,
    after: packFigures(after),
  });
  cache.figures(
    "7",
    packFigures([
      { partnerId: 1, figure: 50 },
      { partnerId: 2, figure: 30 },
    ]),
  );
  cache.figures("6", packFigures([{ partnerId: 1, figure: 10 }]));
  expect(await rankPackedRange(cache, row([{ partnerId: 2, figure: 20 }]), undefined, 5)).toEqual({ partnerIds: [2, 1], partnersCounted: 2 });
  expect(await rankPackedRange(cache, row([]), undefined, 5)).toEqual({ partnerIds: [1, 2], partnersCounted: 2 });
});
