/**
 * A day's running totals of every partner packed in one value (running-sql.ts, running-mongo.ts): per partner, in
 * ascending id order, its id (int32) then its total (int64), big-endian (PostgreSQL's `int4send(id) || int8send(v)`).
 * The overview's ranking reads two of them and the rollup's days not yet built, and merges them here: for 10,000
 * partners two values of 120 kB and a loop, where the same ranking over rows (two index rows a partner, joined and
 * counted by PostgreSQL) took about 20 ms of the database (docs/performance.md, "Rollups"). A built day's value
 * changes only when the job replaces its row, so the owner keeps the days it has read, decoded (PackedDayCache).
 */
import type { TopPartners } from "../domain/stats";

/** Bytes of one partner's entry. */
const ENTRY = 12;

/** Ranges whose built part an owner keeps (PackedDayCache.closedPart): 16 x 10,000 partners, about 2 MB. */
const CLOSED_PARTS = 16;

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

/** Each partner's figure in `a` plus `sign` times its figure in `b` (a merge of their id orders), in ascending id order. */
function mergeFigures(a: PackedFigures, b: PackedFigures, sign: 1 | -1): PackedFigures {
  const [aIds, aValues, bIds, bValues] = [a.ids, a.values, b.ids, b.values];
  const ids = new Int32Array(aIds.length + bIds.length);
  const values = new Float64Array(ids.length);
  let [i, j, n] = [0, 0, 0];
  while (i < aIds.length || j < bIds.length) {
    if (j === bIds.length || (i < aIds.length && aIds[i] < bIds[j])) {
      ids[n] = aIds[i];
      values[n++] = aValues[i++];
    } else if (i === aIds.length || bIds[j] < aIds[i]) {
      ids[n] = bIds[j];
      values[n++] = sign * bValues[j++];
    } else {
      ids[n] = aIds[i];
      values[n++] = aValues[i++] + sign * bValues[j++];
    }
  }
  return { ids: ids.subarray(0, n), values: values.subarray(0, n) };
}

/**
 * The `limit` partners whose figure leads, above zero, best first (ties: lower id first), and how many are above
 * zero (of the partners in `only`, when given): a heap of the `limit` best so far (its root the worst of them).
 */
function rankFigures(f: PackedFigures, limit: number, only?: ReadonlySet<number>): TopPartners {
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
    if (f.values[i] <= 0 || (only && !only.has(f.ids[i]))) continue;
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

/**
 * Figures packed in any order, one entry or more per partner (the rollup's rows of the days not yet built, as read):
 * summed per partner, in ascending id order.
 */
export function unpackRows(packed: Uint8Array | null | undefined): PackedFigures {
  const rows = unpackFigures(packed);
  const n = rows.ids.length;
  // The rows' positions by id: each row's id and position in one number (exact: an int32 and 21 bits fit 53),
  // sorted as numbers, which is several times faster than a comparator.
  const POSITIONS = 2 ** 21;
  const order = new Float64Array(n);
  if (n <= POSITIONS) {
    for (let i = 0; i < n; i++) order[i] = rows.ids[i] * POSITIONS + i;
    order.sort();
    for (let k = 0; k < n; k++) order[k] -= Math.floor(order[k] / POSITIONS) * POSITIONS;
  } else order.set(Array.from(rows.ids.keys()).sort((a, b) => rows.ids[a] - rows.ids[b]));
  const ids = new Int32Array(n);
  const values = new Float64Array(n);
  let out = -1;
  for (const i of order) {
    if (out < 0 || ids[out] !== rows.ids[i]) ids[++out] = rows.ids[i];
    values[out] += rows.values[i];
  }
  return { ids: ids.subarray(0, out + 1), values: values.subarray(0, out + 1) };
}

/**
 * A range's parts: the running totals of its last built day and of the day before it (each with the revision of
 * its packed row; bytes null when the query left out a revision the cache holds) and the rollup's rows of its days
 * after the built ones (packed by unpackRows' rules).
 */
export interface PackedRangeRow {
  lastRevision: string | null;
  last: Uint8Array | null;
  beforeRevision: string | null;
  before: Uint8Array | null;
  after: Uint8Array | null;
}

/**
 * The packed days an owner has read, decoded, by the revision of their row: a packed row is never updated, the job
 * replaces it (a new revision), so a revision names its figures for good. The ranking's query leaves out the bytes
 * of the revisions held: a range's two days cost two index probes, not 2 x 120 kB read, sent and decoded. The least
 * recently used go first beyond `maxEntries` or `maxBytes`.
 */
export class PackedDayCache {
  private readonly days = new Map<string, PackedFigures>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 64,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  /** The revisions held (the query leaves their bytes out). */
  revisions(): string[] {
    return [...this.days.keys()];
  }

  /**
   * The figures of a packed day read as `revision` and `packed` (a revision null: no such day, or a row without
   * one; `packed` null with a revision: held here), kept when new; undefined when held no longer (read again).
   */
  figures(revision: string | null, packed: Uint8Array | null): PackedFigures | undefined {
    if (packed === null) return revision === null ? EMPTY : this.touch(revision);
    const figures = unpackFigures(packed);
    if (revision !== null && !this.days.has(revision)) {
      this.days.set(revision, figures);
      this.bytes += figures.ids.length * ENTRY;
      for (const [oldest, f] of this.days) {
        if (this.days.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
        this.days.delete(oldest);
        this.bytes -= f.ids.length * ENTRY;
      }
    }
    return figures;
  }

  /** The built part of ranges read lately (`last` minus `before`), by the two days' revisions. */
  private readonly closedParts = new Map<string, PackedFigures>();

  /**
   * The built part of a range, `last` minus `before` (each partner's total over the range's built days), kept by
   * their revisions while both are held: a range asked again (the overview's default 30 days, every request) merges
   * only its days after the built ones.
   */
  closedPart(lastRevision: string | null, beforeRevision: string | null, last: PackedFigures, before: PackedFigures): PackedFigures {
    if (lastRevision === null || beforeRevision === null) return mergeFigures(last, before, -1);
    // A revision names its figures for good, so a part kept under two is right for as long as it is kept.
    const key = `${lastRevision}:${beforeRevision}`;
    const part = this.closedParts.get(key) ?? mergeFigures(last, before, -1);
    this.closedParts.delete(key);
    this.closedParts.set(key, part);
    for (const oldest of this.closedParts.keys()) {
      if (this.closedParts.size <= CLOSED_PARTS) break;
      this.closedParts.delete(oldest);
    }
    return part;
  }

  private touch(revision: string): PackedFigures | undefined {
    const figures = this.days.get(revision);
    if (figures) {
      this.days.delete(revision);
      this.days.set(revision, figures);
    }
    return figures;
  }
}

/** The `limit` partners leading a range (of `partnerIds` only, when given), above zero, best first (ties: lower id first). */
export function rankRange(range: { last: PackedFigures; before: PackedFigures; after: PackedFigures }, partnerIds: readonly number[] | undefined, limit: number): TopPartners {
  return rankClosedPart(mergeFigures(range.last, range.before, -1), range.after, partnerIds, limit);
}

/** rankRange with the range's built part (`last` minus `before`) given. */
function rankClosedPart(closed: PackedFigures, after: PackedFigures, partnerIds: readonly number[] | undefined, limit: number): TopPartners {
  return rankFigures(after.ids.length ? mergeFigures(closed, after, 1) : closed, limit, partnerIds ? new Set(partnerIds) : undefined);
}

/**
 * An owner's topPartners: `read` runs the ranking's query, leaving out the bytes of the revisions it is given; read
 * again with none when the cache let one go meanwhile (another ranking's days pushed it out).
 */
export async function rankPackedRange(
  cache: PackedDayCache,
  read: (heldRevisions: string[]) => Promise<PackedRangeRow>,
  partnerIds: readonly number[] | undefined,
  limit: number,
): Promise<TopPartners> {
  for (let held = cache.revisions(); ; held = []) {
    const row = await read(held);
    const last = cache.figures(row.lastRevision, row.last);
    const before = cache.figures(row.beforeRevision, row.before);
    if (last && before) return rankClosedPart(cache.closedPart(row.lastRevision, row.beforeRevision, last, before), unpackRows(row.after), partnerIds, limit);
  }
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
