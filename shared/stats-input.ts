/**
 * The input every stats action takes (attribution.stats, sales.stats,
 * commissions.stats): one program, a range of UTC days (shared/domain/stats.ts),
 * live or test data, optionally some partners only (then the days and totals
 * are theirs too: one partner's overview). Internal (no HTTP): the overview and
 * the partners list call them.
 */
import { z } from "zod";
import { resolveStatsRange, statsAnswer, type Figures, type StatsAnswer, type StatsQuery, type StatsRows, type TopPartners } from "./domain/stats";
import { InvalidRequestError } from "./errors";
import { Id } from "./values";

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a day written YYYY-MM-DD");

export const StatsInput = z.object({
  programId: Id,
  from: Day.optional(),
  to: Day.optional(),
  /** All time, without the daily series (the partners list's totals); from and to are then ignored. */
  allTime: z.boolean().default(false),
  test: z.boolean().default(false),
  partnerIds: z.array(Id).max(200).optional(),
  /** false: the days and totals only, no per-partner rows (the overview asks for its partners' figures once it knows which). */
  partners: z.boolean().default(true),
  /** false: the partners' rows and their totals only, no daily series (the overview's partners' figures over its range). */
  days: z.boolean().default(true),
});

/**
 * The input of the owners' topPartners actions (sales, attribution): the `limit` partners leading a range of days
 * by the owner's figure (revenue, clicks). Internal: the overview's partner table.
 */
export const TopPartnersInput = z.strictObject({
  programId: Id,
  from: Day.optional(),
  to: Day.optional(),
  test: z.boolean().default(false),
  limit: z.number().int().min(1).max(200),
});

/**
 * A stats action's body: resolves the range (400 invalid_request when it is
 * not one), asks the repository, and assembles the zero-filled answer.
 */
export async function answerStats<F extends Figures>(
  input: z.output<typeof StatsInput>,
  zero: F,
  fetch: (q: StatsQuery) => Promise<StatsRows<F>>,
  now = new Date(),
): Promise<StatsAnswer<F>> {
  let range = null;
  if (!input.allTime) {
    const resolved = resolveStatsRange({ from: input.from, to: input.to }, now);
    if (!resolved.ok) throw new InvalidRequestError(resolved.message);
    range = resolved.range;
  }
  const rows = await fetch({
    programId: input.programId,
    test: input.test,
    start: range?.start ?? null,
    end: range?.end ?? null,
    partnerIds: input.partnerIds,
    partners: input.partners,
    days: input.days,
  });
  return statsAnswer(range, rows, zero, input.partnerIds, input.days);
}

/** A topPartners action's body: resolves the range (400 invalid_request when it is not one) and asks the repository. */
export async function answerTopPartners(input: z.output<typeof TopPartnersInput>, fetch: (q: StatsQuery, limit: number) => Promise<TopPartners>, now = new Date()): Promise<TopPartners> {
  const resolved = resolveStatsRange({ from: input.from, to: input.to }, now);
  if (!resolved.ok) throw new InvalidRequestError(resolved.message);
  const { start, end } = resolved.range;
  return fetch({ programId: input.programId, test: input.test, start, end }, input.limit);
}

/**
 * The input of the owners' breakdowns actions (attribution: clicks and leads; sales: sales and amounts): one program,
 * a range of UTC days as the stats take it, live or test data, the program's figures or some partners' only.
 * Internal: programs.breakdowns joins them.
 */
export const BreakdownsInput = z.strictObject({
  programId: Id,
  from: Day.optional(),
  to: Day.optional(),
  test: z.boolean().default(false),
  partnerIds: z.array(Id).min(1).max(200).optional(),
});

/**
 * A breakdowns action's body: resolves the range (400 invalid_request when it is not one), asks the repository for
 * the range's sums per dimension and value, and keeps each family's top values (shared/domain/breakdowns.ts).
 */
export async function answerBreakdowns<R>(input: z.output<typeof BreakdownsInput>, fetch: (q: StatsQuery) => Promise<R>, now = new Date()): Promise<{ from: string; to: string; rows: R }> {
  const resolved = resolveStatsRange({ from: input.from, to: input.to }, now);
  if (!resolved.ok) throw new InvalidRequestError(resolved.message);
  const { start, end, from, to } = resolved.range;
  return { from, to, rows: await fetch({ programId: input.programId, test: input.test, start, end, partnerIds: input.partnerIds }) };
}

/** The input of the owners' rollupDrift actions (sales, attribution): how many drifted keys to list at most. Internal (reconcile). */
export const RollupDriftInput = z.strictObject({ limit: z.number().int().min(1).max(10_000) });
