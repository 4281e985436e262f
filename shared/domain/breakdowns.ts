/**
 * Traffic breakdowns (issue 49, item 2): clicks, leads and sales by the country, device type, browser and referrer
 * domain of the click behind them, over a range of UTC days. Each owner counts its own (attribution: clicks and leads,
 * sales: sales and their amounts) in daily rollups per (program, partner, mode, day, dimension, value); these pure
 * functions name the buckets and keep the top values of a range.
 *
 * Buckets: a value the click did not tell is `unknown` (country, device, browser) or `direct` (referrer domain: the
 * visitor came without a referrer). A lead or sale attributed without a click (coupon code, email, customer key,
 * processor customer) takes the same buckets: `unknown` country, device and browser, `direct` referrer domain.
 */

export const BREAKDOWN_DIMENSIONS = ["country", "device", "browser", "referrer"] as const;
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

/** The value of a dimension the click did not tell (or of a lead or sale without a click). */
export const UNKNOWN_VALUE = "unknown";
/** The referrer domain of a visit without a referrer (and of a lead or sale without a click). */
export const DIRECT_VALUE = "direct";
/** How many values a dimension shows before the rest, summed. */
export const BREAKDOWN_TOP = 10;

/** The four dimensions a click tells, as stored (null: not told). Leads and sales carry their click's. */
export interface TrafficDimensions {
  country: string | null;
  deviceType: string | null;
  browser: string | null;
  referrerDomain: string | null;
}

export const NO_TRAFFIC_DIMENSIONS: TrafficDimensions = Object.freeze({ country: null, deviceType: null, browser: null, referrerDomain: null });

/** Each dimension's bucket for stored dimensions (null or absent: not told). */
export function breakdownValues(d: TrafficDimensions | null | undefined): Record<BreakdownDimension, string> {
  return {
    country: d?.country ?? UNKNOWN_VALUE,
    device: d?.deviceType ?? UNKNOWN_VALUE,
    browser: d?.browser ?? UNKNOWN_VALUE,
    referrer: d?.referrerDomain ?? DIRECT_VALUE,
  };
}

/** A value's figures summed over a range, as an owner's query returns them. */
export type BreakdownRow<F extends Record<string, number>> = { dimension: BreakdownDimension; value: string } & F;

/** A dimension's top values with their figures, and the rest summed (null when there is no rest). */
export interface DimensionBreakdown<F extends Record<string, number>> {
  values: Array<{ value: string } & F>;
  other: F | null;
}

/** Every dimension's breakdown of one family of figures (clicks; leads; sales and their amount). */
export type Breakdown<F extends Record<string, number>> = Record<BreakdownDimension, DimensionBreakdown<F>>;

/**
 * The top `limit` values of every dimension by `rank` (the first figure decides, then the next; ties by value, so an
 * answer never changes between two reads of the same rows), and the rest summed in `other`. Values whose `figures`
 * are all zero are left out. Figures are integers (counts, minor units).
 */
export function topValues<F extends Record<string, number>>(
  rows: ReadonlyArray<{ dimension: string; value: string } & Partial<Record<keyof F, number>>>,
  figures: ReadonlyArray<keyof F & string>,
  rank: ReadonlyArray<keyof F & string> = figures,
  limit = BREAKDOWN_TOP,
): Breakdown<F> {
  const byDimension = new Map<string, Map<string, { value: string } & F>>(BREAKDOWN_DIMENSIONS.map((d) => [d, new Map()]));
  for (const row of rows) {
    const values = byDimension.get(row.dimension);
    if (!values) continue;
    let entry = values.get(row.value);
    if (!entry) values.set(row.value, (entry = { value: row.value, ...zeros<F>(figures) }));
    for (const f of figures) (entry as Record<string, number>)[f] += Number(row[f] ?? 0);
  }
  const answer = {} as Breakdown<F>;
  for (const dimension of BREAKDOWN_DIMENSIONS) {
    const entries = [...byDimension.get(dimension)!.values()].filter((e) => figures.some((f) => e[f] !== 0));
    entries.sort((a, b) => rank.reduce((order, f) => order || b[f] - a[f], 0) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    const rest = entries.slice(limit);
    let other: F | null = null;
    if (rest.length) {
      other = zeros<F>(figures);
      for (const e of rest) for (const f of figures) (other as Record<string, number>)[f] += e[f];
    }
    answer[dimension] = { values: entries.slice(0, limit), other };
  }
  return answer;
}

function zeros<F extends Record<string, number>>(figures: ReadonlyArray<keyof F & string>): F {
  return Object.fromEntries(figures.map((f) => [f, 0])) as F;
}
