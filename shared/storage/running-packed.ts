/**
 * A day's running totals of every partner packed in one value (running-sql.ts, running-mongo.ts): per partner, in
 * ascending id order, its id (int32) then its total (int64), big-endian (PostgreSQL's `int4send(id) || int8send(v)`).
 * The overview's ranking reads two of them and the rollup's days not yet built, and merges them here: for 10,000
 * partners two values of 120 kB and a loop, where the same ranking over rows (two index rows a partner, joined and
 * counted by PostgreSQL) took about 20 ms of the database (docs/performance.md, "Rollups").
 */
import type { TopPartners } from "../domain/stats";

/** Bytes of one partner's entry. */
const ENTRY = 12;

/** Partners' figures in ascending id order. */
export interface PackedFigures {
  ids: Int32Array;
  values: Float64Array;
}

const EMPTY: PackedFigures = { ids: new Int32Array(0), values: new Float64Array(0) };

/** The figures of a packed value (empty for none). Totals are exact up to 2^53 (cents: 90 trillion). */
export function unpackFigures(packed: Uint8Array | null | undefined): PackedFigures {
  if (!packed || packed.length === 0) return EMPTY;
  if (packed.length % ENTRY !== 0) throw new Error(`a packed running total of ${packed.length} bytes is not whole ${ENTRY}-byte entries`);
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const n = packed.length / ENTRY;
  const ids = new Int32Array(n);
  const values = new Float64Array(n);
  for (let i = 0, at = 0; i < n; i++, at += ENTRY) {
    ids[i] = view.getInt32(at);
    values[i] = view.getInt32(at + 4) * 4_294_967_296 + view.getUint32(at + 8);
  }
  return { ids, values };
}

/** The packed value of partners' figures (any order; one per partner). */
export function packFigures(rows: ReadonlyArray<{ partnerId: number; figure: number }>): Buffer {
  const sorted = [...rows].sort((a, b) => a.partnerId - b.partnerId);
  const packed = Buffer.alloc(sorted.length * ENTRY);
  sorted.forEach((row, i) => {
    packed.writeInt32BE(row.partnerId, i * ENTRY);
    packed.writeBigInt64BE(BigInt(row.figure), i * ENTRY + 4);
  });
  return packed;
}

/** One part of a partner's figure: a packed day (or the unbuilt days) added or taken away. */
interface FigurePart {
  sign: 1 | -1;
  figures: PackedFigures;
}

/**
 * Each partner's figure, the parts summed (a merge of their id orders), in ascending id order; only the partners in
 * `only` when given.
 */
function sumParts(parts: readonly FigurePart[], only?: ReadonlySet<number>): PackedFigures {
  const n = parts.length;
  const at = new Int32Array(n);
  const size = parts.reduce((sum, p) => sum + p.figures.ids.length, 0);
  const ids = new Int32Array(size);
  const values = new Float64Array(size);
  let out = 0;
  for (;;) {
    let id = Infinity;
    for (let k = 0; k < n; k++) {
      const partIds = parts[k].figures.ids;
      if (at[k] < partIds.length && partIds[at[k]] < id) id = partIds[at[k]];
    }
    if (id === Infinity) break;
    let v = 0;
    for (let k = 0; k < n; k++) {
      const { ids: partIds, values: partValues } = parts[k].figures;
      if (at[k] < partIds.length && partIds[at[k]] === id) v += parts[k].sign * partValues[at[k]++];
    }
    if (only && !only.has(id)) continue;
    ids[out] = id;
    values[out++] = v;
  }
  return { ids: ids.subarray(0, out), values: values.subarray(0, out) };
}

/**
 * The `limit` partners whose figure leads, above zero, best first (ties: lower id first), and how many are above
 * zero: a heap of the `limit` best so far (its root the worst of them).
 */
export function rankFigures(f: PackedFigures, limit: number): TopPartners {
  // a ranks below b: a smaller figure, or the same with a higher id.
  const below = (a: number, b: number) => f.values[a] < f.values[b] || (f.values[a] === f.values[b] && f.ids[a] > f.ids[b]);
  const heap: number[] = [];
  const swap = (i: number, j: number) => ([heap[i], heap[j]] = [heap[j], heap[i]]);
  const down = (i: number) => {
    for (;;) {
      let worst = i;
      const [left, right] = [2 * i + 1, 2 * i + 2];
      if (left < heap.length && below(heap[left], heap[worst])) worst = left;
      if (right < heap.length && below(heap[right], heap[worst])) worst = right;
      if (worst === i) return;
      swap(i, worst);
      i = worst;
    }
  };
  let counted = 0;
  for (let i = 0; i < f.ids.length; i++) {
    if (f.values[i] <= 0) continue;
    counted++;
    if (limit < 1) continue;
    if (heap.length < limit) {
      heap.push(i);
      for (let c = heap.length - 1; c > 0 && below(heap[c], heap[(c - 1) >> 1]); c = (c - 1) >> 1) swap(c, (c - 1) >> 1);
    } else if (below(heap[0], i)) {
      heap[0] = i;
      down(0);
    }
  }
  const best = heap.sort((a, b) => (below(a, b) ? 1 : below(b, a) ? -1 : 0));
  return { partnerIds: best.map((i) => f.ids[i]), partnersCounted: counted };
}

/** A range's packed parts: the running totals of its last built day and of the day before it, and its days after the built ones. */
export interface PackedRange {
  last: Uint8Array | null;
  before: Uint8Array | null;
  after: Uint8Array | null;
}

/** The `limit` partners leading a range (of `partnerIds` only, when given), above zero, best first (ties: lower id first). */
export function rankPackedRange(range: PackedRange, partnerIds: readonly number[] | undefined, limit: number): TopPartners {
  const parts: FigurePart[] = [
    { sign: 1, figures: unpackFigures(range.last) },
    { sign: -1, figures: unpackFigures(range.before) },
    { sign: 1, figures: unpackFigures(range.after) },
  ];
  return rankFigures(sumParts(parts, partnerIds ? new Set(partnerIds) : undefined), limit);
}

/** The partners whose figure differs between two packed values, or that one holds and the other does not (reconcile). */
export function differingPartners(stored: PackedFigures, counted: PackedFigures): Array<{ partnerId: number; stored: number; counted: number }> {
  const figureOf = (f: PackedFigures, id: number) => {
    const i = f.ids.indexOf(id);
    return { held: i >= 0, figure: i >= 0 ? f.values[i] : 0 };
  };
  const ids = [...new Set([...stored.ids, ...counted.ids])].sort((a, b) => a - b);
  return ids
    .map((partnerId) => ({ partnerId, have: figureOf(stored, partnerId), want: figureOf(counted, partnerId) }))
    .filter(({ have, want }) => have.figure !== want.figure || have.held !== want.held)
    .map(({ partnerId, have, want }) => ({ partnerId, stored: have.figure, counted: want.figure }));
}
