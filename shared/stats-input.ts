/**
 * The input every stats action takes (attribution.stats, sales.stats,
 * commissions.stats): one program, a range of UTC days (shared/domain/stats.ts),
 * live or test data, optionally some partners only (then the days and totals
 * are theirs too: one partner's overview). Internal (no HTTP): the overview and
 * the partners list call them.
 */
import { z } from "zod";
import { resolveStatsRange, statsAnswer, type Figures, type StatsAnswer, type StatsQuery, type StatsRows } from "./domain/stats";
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
  partnerIds: z.array(Id).max(100).optional(),
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
  const rows = await fetch({ programId: input.programId, test: input.test, start: range?.start ?? null, end: range?.end ?? null, partnerIds: input.partnerIds });
  return statsAnswer(range, rows, zero, input.partnerIds);
}
