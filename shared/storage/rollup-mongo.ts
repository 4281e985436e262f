/**
 * Daily rollups on MongoDB (docs/performance.md, "Rollups"; rollup-sql.ts is the SQL side): a collection of counters
 * per key (program, partner, UTC day, ...). MongoDB has no triggers, so every write of a summarised document adds its
 * change with `incrementRollup` in the write's own transaction: one `$inc` upsert per key that moved, keys in the
 * unique index's order. Written through the driver's collection (no casting, no defaults on insert: the rows carry
 * every figure).
 */
import type { ClientSession, Connection, Model, PipelineStage, Schema } from "mongoose";
import { ALL_PARTNERS, firstOfMonth, splitByMonths, type DaySpan, type Figures, type RollupDrift, type StatsQuery } from "../domain/stats";
import { collectionSchema, registerCollectionSchema, withTransaction } from "./mongo";
import { moveRunningBack, type MongoRunning } from "./running-mongo";
import { DIRECT_VALUE, UNKNOWN_VALUE, type BreakdownDimension } from "../domain/breakdowns";

type KeyValue = string | number | boolean;

/** A rollup's key and figures, and how to recount them from the collection it summarises. */
export interface RollupShape {
  /** Each key field with its value computed from a source document (an aggregation expression), in the unique index's order. */
  key: Record<string, unknown>;
  /** Each figure with its value from a source document (summed). */
  figures: Record<string, unknown>;
  /** The source documents counted; all when absent. */
  match?: Record<string, unknown>;
  /** The rollup's running totals (running-mongo.ts), when kept. */
  running?: MongoRunning;
  /**
   * Its monthly rollup (`<name>_monthly`, monthlySchema): the same key and figures per partner and month (`day`: the
   * month's first), incremented with the daily one; a page of partners reads its whole months from it.
   */
  monthly?: Model<unknown>;
  /** Only the partners' own rows, no program row of all partners (a monthly rollup). */
  partnersOnly?: boolean;
  /**
   * Stages run on each matched source document before its key is computed (the recount): several rows of one document
   * (a breakdown's dimension and value: breakdownStages). The writes add the same rows themselves.
   */
  expand?: Array<Record<string, unknown>>;
  /**
   * The first day (YYYY-MM-DD) reconcile compares, all when absent: the days before it may count documents whose
   * fields were erased since (a click's details after their retention).
   */
  driftFrom?: string;
  /**
   * Per-program revisions ({ _id: programId, revision }, pastChangesSchema) bumped in the write's transaction when it
   * changes the figures of a day before today (UTC): the owner keeps sums of closed days while it stays (closed-days.ts).
   */
  pastChanges?: Model<PastChangesDoc>;
}

/** A program's revision of past changes of a rollup (RollupShape.pastChanges). */
export interface PastChangesDoc {
  _id: number;
  revision: number;
}

/** The collection of a rollup's past changes: keyed by the program's id (`_id`, no other index). */
export function pastChangesSchema(collection: string): Schema<PastChangesDoc> {
  return collectionSchema<PastChangesDoc>(collection, { _id: { type: Number, required: true }, revision: { type: Number, required: true } });
}

/** A program's revision of past changes, "0" before the first. */
export async function mongoPastRevision(pastChanges: Model<PastChangesDoc>, programId: number): Promise<string> {
  const doc = await pastChanges.collection.findOne({ _id: programId } as never, { projection: { revision: 1 } });
  return String(doc?.revision ?? 0);
}

/**
 * A breakdown's recount stages (RollupShape.expand): each document once per dimension (shared/domain/breakdowns.ts),
 * as `breakdown.dimension` and `breakdown.value`, its bucket when the field is null or absent. `fields` name the
 * document's fields of the four dimensions.
 */
export function breakdownStages(fields: Record<"country" | "deviceType" | "browser" | "referrerDomain", string>): Array<Record<string, unknown>> {
  const v = (dimension: BreakdownDimension, field: string, otherwise: string) => ({ dimension, value: { $ifNull: [`$${field}`, otherwise] } });
  return [
    {
      $set: {
        breakdown: [
          v("country", fields.country, UNKNOWN_VALUE),
          v("device", fields.deviceType, UNKNOWN_VALUE),
          v("browser", fields.browser, UNKNOWN_VALUE),
          v("referrer", fields.referrerDomain, DIRECT_VALUE),
        ],
      },
    },
    { $unwind: "$breakdown" },
  ];
}

/** A breakdown's key fields after the rollup's own (breakdownStages sets them). */
export const BREAKDOWN_KEY_FIELDS = { dimension: "$breakdown.dimension", value: "$breakdown.value" };

/** A rollup's collection and the collection it summarises. */
export interface MongoRollup<R, S> extends RollupShape {
  /** The rollup's model (its collection, e.g. sales_daily, with a unique index on the key). */
  rollup: Model<R>;
  /** The collection it summarises. */
  source: Model<S>;
}

/** The UTC day of an instant as the rollups key it (YYYY-MM-DD). */
export const utcDayText = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * The $match of a stats query on a rollup (its `day` text), fields in the order of its indexes. The rows: the
 * partners asked for, else for `rows` "days" the program's rows of all partners, for "partners" every partner's own.
 */
export function rollupStatsMatch(q: StatsQuery, testField: string | null, rows: "days" | "partners"): Record<string, unknown> {
  const match: Record<string, unknown> = { programId: q.programId };
  if (testField) match[testField] = q.test;
  if (q.start && q.end) match.day = { $gte: utcDayText(q.start), $lt: utcDayText(q.end) };
  match.partnerId = q.partnerIds ? { $in: [...q.partnerIds] } : rows === "days" ? ALL_PARTNERS : { $ne: ALL_PARTNERS };
  return match;
}

const compareValues = (a: KeyValue, b: KeyValue): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Adds `rows` (each a key and its figures, signed) to the rollup in `session`, each to its partner's row and to the
 * program's row of all partners (ALL_PARTNERS): summed per key, keys whose figures all sum to zero left out, one
 * upsert per key in the key's order, one round trip; then to its monthly rollup alike (partners' rows).
 */
export async function incrementRollup<R>(r: RollupShape & { rollup: Model<R> }, rows: ReadonlyArray<object>, session: ClientSession): Promise<void> {
  const keyFields = Object.keys(r.key);
  const figureFields = Object.keys(r.figures);
  const summed = new Map<string, { key: Record<string, KeyValue>; figures: Record<string, number> }>();
  const partnerRows = rows as ReadonlyArray<Record<string, KeyValue>>;
  const programRows = r.partnersOnly ? [] : partnerRows.map((row): Record<string, KeyValue> => ({ ...row, partnerId: ALL_PARTNERS }));
  for (const row of [...partnerRows, ...programRows]) {
    const text = JSON.stringify(keyFields.map((f) => row[f]));
    let entry = summed.get(text);
    if (!entry) summed.set(text, (entry = { key: Object.fromEntries(keyFields.map((f) => [f, row[f]])), figures: Object.fromEntries(figureFields.map((f) => [f, 0])) }));
    for (const f of figureFields) entry.figures[f] += Number(row[f] ?? 0);
  }
  const moved = [...summed.values()]
    .filter((e) => figureFields.some((f) => e.figures[f] !== 0))
    .sort((a, b) => keyFields.reduce((order, f) => order || compareValues(a.key[f], b.key[f]), 0));
  if (!moved.length) return;
  await r.rollup.collection.bulkWrite(
    moved.map((e) => ({ updateOne: { filter: e.key, update: { $inc: e.figures }, upsert: true } })),
    { session, ordered: true },
  );
  if (r.pastChanges) {
    const today = utcDayText(new Date());
    const programs = [...new Set(moved.filter((e) => String(e.key.day) < today).map((e) => Number(e.key.programId)))].sort((a, b) => a - b);
    if (programs.length)
      await r.pastChanges.collection.bulkWrite(
        programs.map((id) => ({ updateOne: { filter: { _id: id } as never, update: { $inc: { revision: 1 } }, upsert: true } })),
        { session, ordered: true },
      );
  }
  if (r.running)
    await moveRunningBack(
      r.running,
      moved.map((e) => e.key),
      session,
    );
  if (r.monthly)
    await incrementRollup(
      monthlyOf(r),
      partnerRows.map((row) => ({ ...row, day: firstOfMonth(String(row.day)) })),
      session,
    );
}

/** A rollup's monthly one as a rollup of its own (incremented, backfilled and recounted alike). */
export function monthlyOf<R, S>(r: MongoRollup<R, S>): MongoRollup<unknown, S>;
export function monthlyOf(r: RollupShape): RollupShape & { rollup: Model<unknown> };
export function monthlyOf(r: RollupShape & { source?: unknown }): RollupShape & { rollup: Model<unknown> } {
  if (!r.monthly) throw new Error("the rollup keeps no monthly rollup");
  const day = r.key.day;
  return { ...r, rollup: r.monthly, monthly: undefined, running: undefined, partnersOnly: true, key: { ...r.key, day: { $concat: [{ $substrCP: [day, 0, 7] }, "-01"] } } };
}

/**
 * A daily rollup's schema for its monthly one in `collection`: the same fields, the unique key index only (a page of
 * partners reads along it).
 */
export function monthlySchema<R>(daySchema: Schema<R>, collection: string, key: Record<string, 1>): Schema<unknown> {
  const schema = daySchema.clone();
  schema.set("collection", collection);
  schema.clearIndexes();
  schema.index(key, { unique: true });
  registerCollectionSchema(schema);
  // Written through the driver's collection and aggregated only: no document type needed.
  return schema as unknown as Schema<unknown>;
}

/**
 * Some partners' rows of a range, then `stages` (a $group by partner): their whole months from the monthly rollup,
 * the days outside them from the daily one (splitByMonths), the second read by $unionWith; `match` narrows both
 * (mode, currency).
 */
export function aggregatePartnerRange<T, R>(
  r: { rollup: Model<R>; monthly?: Model<unknown> },
  q: StatsQuery & { partnerIds: readonly number[] },
  match: Record<string, unknown>,
  stages: PipelineStage[],
): Promise<T[]> {
  const monthly = r.monthly;
  if (!monthly) throw new Error("the rollup keeps no monthly rollup");
  const base = { programId: q.programId, partnerId: { $in: [...q.partnerIds] }, ...match };
  const within = (s: DaySpan) => ({ ...base, day: { $gte: s.from, $lt: s.to } });
  const { months, days } = splitByMonths(q.start && utcDayText(q.start), q.end && utcDayText(q.end));
  const reads = [
    ...(months ? [{ collection: monthly.collection.collectionName, match: months === "all" ? base : within(months) }] : []),
    ...days.map((s) => ({ collection: r.rollup.collection.collectionName, match: within(s) })),
  ];
  if (!reads.length) return Promise.resolve([]);
  const [first, ...rest] = reads;
  const pipeline = [{ $match: first.match }, ...rest.map((read) => ({ $unionWith: { coll: read.collection, pipeline: [{ $match: read.match }] } })), ...stages];
  return (first.collection === monthly.collection.collectionName ? monthly.aggregate<T>(pipeline) : r.rollup.aggregate<T>(pipeline)).exec();
}

/**
 * The recount: one row per key of the source's matching documents, with its key fields and summed figures; each
 * document counts for its partner and for the program's row of all partners (ALL_PARTNERS).
 */
function recount(r: RollupShape): Array<Record<string, unknown>> {
  const keyFields = Object.keys(r.key);
  return [
    ...(r.match ? [{ $match: r.match }] : []),
    ...(r.expand ?? []),
    { $set: { rollupPartnerId: r.partnersOnly ? [r.key.partnerId] : [r.key.partnerId, ALL_PARTNERS] } },
    { $unwind: "$rollupPartnerId" },
    { $group: { _id: { ...r.key, partnerId: "$rollupPartnerId" }, ...Object.fromEntries(Object.entries(r.figures).map(([f, expr]) => [f, { $sum: expr }])) } },
    { $project: { _id: 0, ...Object.fromEntries(keyFields.map((f) => [f, `$_id.${f}`])), ...Object.fromEntries(Object.keys(r.figures).map((f) => [f, 1])) } },
  ];
}

/**
 * A duplicate key on a rollup's key index: two transactions inserted the same key's row at once (where the server
 * reports that as a duplicate rather than a write conflict). Never an "already recorded" of the row being written.
 */
export function isRollupKeyRace(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; writeErrors?: { errmsg?: unknown } | Array<{ errmsg?: unknown }> } | null;
  if (e?.code !== 11000) return false;
  const messages = [e.message, ...[e.writeErrors ?? []].flat().map((w) => w.errmsg)];
  return messages.some((m) => typeof m === "string" && /_(daily|monthly) index: /.test(m));
}

/**
 * `withTransaction` for a transaction that writes a rollup: run once more when it lost a race on a rollup key (the
 * re-run updates the winner's row), so that duplicate key never reads as one of the written documents' own.
 */
export async function withRollupTransaction<T>(connection: Connection, fn: (session: ClientSession) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(connection, fn);
  } catch (err) {
    if (!isRollupKeyRace(err)) throw err;
    return withTransaction(connection, fn);
  }
}

/**
 * Builds an empty rollup from what the source holds (the first start of a version with rollups; the SQL migration's
 * backfill). One transaction: instances starting together, or writing meanwhile, either see the rows or conflict
 * with them, so the rows equal the recount. Documents written by an instance of an earlier version afterwards are
 * not counted: reconcile reports them. Bounded by the transaction lifetime (60 s by default). Its monthly rollup
 * first, alike (a version that adds one to a rollup already filled).
 */
export async function backfillRollup<R, S>(r: MongoRollup<R, S>): Promise<void> {
  const rollup = r.rollup.collection;
  if (r.monthly) await backfillRollup(monthlyOf(r));
  if (await rollup.findOne({}, { projection: { _id: 1 } })) return;
  if (!(await r.source.collection.findOne(r.match ?? {}, { projection: { _id: 1 } }))) return;
  await withRollupTransaction(r.rollup.db, async (session) => {
    if (await rollup.findOne({}, { projection: { _id: 1 }, session })) return;
    const rows = await r.source.collection.aggregate(recount(r), { session }).toArray();
    if (rows.length) await rollup.insertMany(rows, { session, ordered: true });
  });
}

/**
 * The keys where the rollup differs from a recount of its source (reconcile), at most `limit`, in key order: one
 * aggregation over the source and the rollup in one snapshot, a side without the key counting zeros; then its
 * monthly rollup's alike.
 */
export async function rollupDrift<R, S>(r: MongoRollup<R, S>, limit: number): Promise<RollupDrift[]> {
  // $limit refuses 0.
  if (limit < 1) return [];
  if (r.monthly) {
    const drift = await rollupDrift({ ...r, monthly: undefined }, limit);
    return [...drift, ...(await rollupDrift(monthlyOf(r), limit - drift.length))];
  }
  const keyFields = Object.keys(r.key);
  const figureFields = Object.keys(r.figures);
  const sides = (stored: (f: string) => unknown, counted: (f: string) => unknown) => ({
    $project: {
      _id: 0,
      ...Object.fromEntries(keyFields.map((f) => [f, `$${f}`])),
      ...Object.fromEntries(
        figureFields.flatMap((f) => [
          [`stored_${f}`, stored(f)],
          [`counted_${f}`, counted(f)],
        ]),
      ),
    },
  });
  const within = r.driftFrom ? [{ $match: { day: { $gte: r.driftFrom } } }] : [];
  const pipeline = [
    ...recount(r),
    ...within,
    sides(
      () => ({ $literal: 0 }),
      (f) => `$${f}`,
    ),
    {
      $unionWith: {
        coll: r.rollup.collection.collectionName,
        pipeline: [
          ...within,
          sides(
            (f) => ({ $ifNull: [`$${f}`, 0] }),
            () => ({ $literal: 0 }),
          ),
        ],
      },
    },
    {
      $group: {
        _id: Object.fromEntries(keyFields.map((f) => [f, `$${f}`])),
        ...Object.fromEntries(figureFields.flatMap((f) => [`stored_${f}`, `counted_${f}`].map((s) => [s, { $sum: `$${s}` }]))),
      },
    },
    { $match: { $expr: { $or: figureFields.map((f) => ({ $ne: [`$stored_${f}`, `$counted_${f}`] })) } } },
    { $sort: Object.fromEntries(keyFields.map((f) => [`_id.${f}`, 1])) },
    { $limit: limit },
  ];
  const session = await r.rollup.db.startSession({ snapshot: true });
  try {
    const rows = await r.source.collection.aggregate<{ _id: Record<string, KeyValue> } & Record<string, number>>(pipeline, { session }).toArray();
    const figures = (row: Record<string, number>, side: "stored" | "counted"): Figures => Object.fromEntries(figureFields.map((f) => [f, Number(row[`${side}_${f}`])]));
    return rows.map((row) => ({
      rollup: r.rollup.collection.collectionName,
      programId: Number(row._id.programId),
      partnerId: Number(row._id.partnerId),
      day: String(row._id.day),
      key: keyFields
        .filter((f) => !["programId", "partnerId", "day"].includes(f))
        .map((f) => (f === "isTest" ? (row._id[f] ? "test" : "live") : String(row._id[f])))
        .join(" "),
      stored: figures(row, "stored"),
      counted: figures(row, "counted"),
    }));
  } finally {
    await session.endSession();
  }
}

/** Drops an index a rollup replaced (the stats indexes over the source); already gone is fine. */
export async function dropReplacedIndex(model: Pick<Model<unknown>, "collection">, name: string): Promise<void> {
  await model.collection.dropIndex(name).catch((err: { codeName?: string }) => {
    if (err?.codeName !== "IndexNotFound" && err?.codeName !== "NamespaceNotFound") throw err;
  });
}
