/**
 * Running totals of a daily rollup on MongoDB (running-sql.ts is the SQL side and explains them): per partner and
 * day, one figure summed from the program's first day through that day, built by the owner's job up to two days
 * before today (UTC); `<collection>_through` keeps per program the last day built. A write moving a partner's
 * figures of a day before today moves that day back in its own transaction (`moveRunningBack`, called by
 * incrementRollup), so a build running meanwhile conflicts on that document and runs again.
 */
import type { ClientSession, Connection, Model, mongo } from "mongoose";
import { ALL_PARTNERS, type RollupDrift, type StatsQuery, type TopPartners } from "../domain/stats";
import { withTransaction } from "./mongo";

/** How many days a program's build writes per transaction (about partners x days documents). */
const DAYS_PER_BUILD = 7;
/** Today and yesterday are never built (the rollup's own documents count for them). */
const UNBUILT_DAYS = 2;

/** A program's last built day. */
interface ThroughDoc {
  _id: number;
  /** YYYY-MM-DD. */
  throughDay: string;
}

type RunningDoc = Record<string, string | number | boolean>;

/** A rollup's running totals: the collections and which of the rollup's fields they keep. */
export interface MongoRunning {
  connection: Connection;
  running: mongo.Collection<RunningDoc>;
  through: mongo.Collection<ThroughDoc>;
  /** The rollup's figure summed (amountCents, clicks). */
  figure: string;
  /** The rollup's key fields other than programId, partnerId and day, in key order (isTest, currency). */
  rest: string[];
}

const addDays = (day: string, n: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * The running totals' collections, `<name>` (each rollup key field but the day, the figure, a day) and
 * `<name>_through` (`_id` the program); the ranking reads along the unique key, the job along program and day.
 */
export async function runningCollections(connection: Connection, name: string, figure: string, rest: string[]): Promise<MongoRunning> {
  const db = connection.db!;
  const running = db.collection<RunningDoc>(name);
  // Creating the index creates the collection: never inside a transaction (older servers refuse it there).
  await running.createIndex({ programId: 1, ...Object.fromEntries(rest.map((f) => [f, 1])), day: 1, partnerId: 1 }, { unique: true, name: "running_key" });
  await running.createIndex({ programId: 1, day: 1 }, { name: "running_days" });
  const through = db.collection<ThroughDoc>(`${name}_through`);
  if (!(await db.listCollections({ name: through.collectionName }).hasNext())) await db.createCollection(through.collectionName).catch(() => undefined);
  return { connection, running, through, figure, rest };
}

/**
 * Moves each program's built day back before the earliest day of `rows` (moved rollup rows) that is before today:
 * in the write's transaction, so the job rebuilds from there. Rows of today, and the programs' rows, never do.
 */
export async function moveRunningBack(r: MongoRunning, rows: ReadonlyArray<Record<string, unknown>>, session: ClientSession): Promise<void> {
  const today = new Date().toISOString().slice(0, 10);
  const earliest = new Map<number, string>();
  for (const row of rows) {
    const day = String(row.day);
    if (row.partnerId === ALL_PARTNERS || day >= today) continue;
    const programId = Number(row.programId);
    if (!earliest.has(programId) || day < earliest.get(programId)!) earliest.set(programId, day);
  }
  for (const [programId, day] of [...earliest].sort((a, b) => a[0] - b[0]))
    await r.through.updateOne({ _id: programId }, [{ $set: { throughDay: { $min: ["$throughDay", addDays(day, -1)] } } }], { session });
}

/**
 * Builds the running totals of every program up to two days before `today`, at most DAYS_PER_BUILD days per
 * program and call, from `daily` (the rollup's collection); returns how many program-days it built (0: done).
 */
export async function extendRunningTotals(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, today: Date): Promise<number> {
  const target = addDays(today.toISOString().slice(0, 10), -UNBUILT_DAYS);
  const keyOf = (doc: RunningDoc) => JSON.stringify([...r.rest.map((f) => doc[f]), doc.partnerId]);
  let built = 0;
  for (const programId of ((await daily.collection.distinct("programId")) as number[]).sort((a, b) => a - b)) {
    // Written before any build, so a write of a past day always finds the document to move back.
    const [first] = await daily.collection
      .find({ programId, partnerId: ALL_PARTNERS }, { projection: { day: 1 } })
      .sort({ day: 1 })
      .limit(1)
      .toArray();
    if (!first) continue;
    await r.through.updateOne({ _id: programId }, { $setOnInsert: { throughDay: addDays(String(first.day), -1) } }, { upsert: true });
    built += await withTransaction(r.connection, async (session) => {
      const through = await r.through.findOne({ _id: programId }, { session });
      if (!through || through.throughDay >= target) return 0;
      const from = addDays(through.throughDay, 1);
      const last = [addDays(through.throughDay, DAYS_PER_BUILD), target].sort()[0];
      const totals = new Map<string, RunningDoc>();
      for (const doc of await r.running.find({ programId, day: through.throughDay }, { session }).toArray()) totals.set(keyOf(doc), doc);
      const days = await daily.collection
        .find({ programId, partnerId: { $ne: ALL_PARTNERS }, day: { $gte: from, $lte: last } }, { session })
        .sort({ day: 1 })
        .toArray();
      const docs: RunningDoc[] = [];
      for (let day = from, i = 0; day <= last; day = addDays(day, 1)) {
        for (; i < days.length && days[i].day === day; i++) {
          const row = days[i] as RunningDoc;
          const total = totals.get(keyOf(row));
          totals.set(keyOf(row), { ...Object.fromEntries([...r.rest, "partnerId"].map((f) => [f, row[f]])), [r.figure]: Number(total?.[r.figure] ?? 0) + Number(row[r.figure]) });
        }
        for (const total of totals.values()) if (Number(total[r.figure]) !== 0) docs.push({ ...total, programId, day });
      }
      await r.running.deleteMany({ programId, day: { $gte: from, $lte: last } }, { session });
      if (docs.length)
        await r.running.insertMany(
          docs.map(({ _id, ...doc }) => doc),
          { session, ordered: true },
        );
      await r.through.updateOne({ _id: programId }, { $set: { throughDay: last } }, { session });
      return (Date.parse(last) - Date.parse(from)) / 86_400_000 + 1;
    });
  }
  return built;
}

/**
 * Each partner's figure over the range from the running totals (running-sql.ts's runningFigureQuery): its running
 * total at the range's last built day minus the day before the range, plus the rollup's documents after the built
 * days; `then` ranks or projects the { _id: partnerId, figure } rows. One snapshot.
 */
async function aggregateRunningFigures<T extends object>(
  r: MongoRunning,
  daily: Pick<Model<unknown>, "collection">,
  q: StatsQuery,
  filter: Record<string, unknown>,
  then: object[],
): Promise<T[]> {
  const session = await r.connection.startSession({ snapshot: true });
  try {
    const through = (await r.through.findOne({ _id: q.programId }, { session }))?.throughDay ?? null;
    const start = q.start && q.end ? q.start.toISOString().slice(0, 10) : null;
    const end = q.start && q.end ? q.end.toISOString().slice(0, 10) : null;
    const common = { programId: q.programId, isTest: q.test, ...filter, ...(q.partnerIds ? { partnerId: { $in: [...q.partnerIds] } } : {}) };
    const value = (sign: 1 | -1) => ({ $project: { _id: 0, partnerId: 1, v: sign === 1 ? `$${r.figure}` : { $multiply: [-1, `$${r.figure}`] } } });
    const unions: Array<{ coll: string; pipeline: object[] }> = [];
    // The built part of the range, if it has one.
    if (through && (!start || through >= start)) {
      const last = end && addDays(end, -1) < through ? addDays(end, -1) : through;
      unions.push({ coll: r.running.collectionName, pipeline: [{ $match: { ...common, day: last } }, value(1)] });
      if (start) unions.push({ coll: r.running.collectionName, pipeline: [{ $match: { ...common, day: addDays(start, -1) } }, value(-1)] });
    }
    // The rollup's own documents for the range's days after the built ones.
    const day: Record<string, string> = {};
    if (start && end) Object.assign(day, { $gte: start, $lt: end });
    if (through && !(start && through < start)) {
      delete day.$gte;
      day.$gt = through;
    }
    const partners = { $ne: ALL_PARTNERS, ...(q.partnerIds ? { $in: [...q.partnerIds] } : {}) };
    unions.push({ coll: daily.collection.collectionName, pipeline: [{ $match: { ...common, partnerId: partners, ...(Object.keys(day).length ? { day } : {}) } }, value(1)] });
    const [head, ...rest] = unions;
    return await r.connection
      .db!.collection(head.coll)
      .aggregate<T>([...head.pipeline, ...rest.map((u) => ({ $unionWith: u })), { $group: { _id: "$partnerId", figure: { $sum: "$v" } } }, ...then], { session })
      .toArray();
  } finally {
    await session.endSession();
  }
}

/**
 * An owner's topPartners on MongoDB (running-sql.ts's topPartnersQuery): the `limit` partners whose figure over the
 * range leads, above zero (ties: lower id first), with how many partners are above zero.
 */
export async function runningTopPartners(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, q: StatsQuery, filter: Record<string, unknown>, limit: number): Promise<TopPartners> {
  const rows = await aggregateRunningFigures<{ _id: number; counted: number }>(r, daily, q, filter, [
    { $match: { figure: { $gt: 0 } } },
    { $setWindowFields: { output: { counted: { $count: {} } } } },
    { $sort: { figure: -1, _id: 1 } },
    { $limit: limit },
  ]);
  return { partnerIds: rows.map((row) => Number(row._id)), partnersCounted: rows.length ? Number(rows[0].counted) : 0 };
}

/**
 * The partners' figures over the range (or all time) from the running totals (running-sql.ts's
 * runningFiguresQuery), for a rollup whose one figure they keep: `partnerId` and the figure, for the partners with
 * one other than zero.
 */
export function runningPartnerFigures<F extends string>(
  r: MongoRunning & { figure: F },
  daily: Pick<Model<unknown>, "collection">,
  q: StatsQuery,
): Promise<Array<{ partnerId: number } & Record<F, number>>> {
  return aggregateRunningFigures(r, daily, q, {}, [{ $match: { figure: { $ne: 0 } } }, { $project: { _id: 0, partnerId: "$_id", [r.figure]: "$figure" } }]);
}

/**
 * The running totals that differ from a recount (reconcile), at most `limit`: each built document must be the
 * partner's total of the day before plus the rollup's document of its day (missing ones counting zero).
 */
export async function runningDrift(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, limit: number): Promise<RollupDrift[]> {
  const drift: RollupDrift[] = [];
  const keyFields = ["programId", "partnerId", ...r.rest];
  const side = (stored: unknown, counted: unknown, day: unknown = "$day") => ({
    $project: { _id: 0, ...Object.fromEntries(keyFields.map((f) => [f, `$${f}`])), day, stored, counted },
  });
  const nextDay = { $dateToString: { format: "%Y-%m-%d", date: { $dateAdd: { startDate: { $dateFromString: { dateString: "$day" } }, unit: "day", amount: 1 } } } };
  for (const { _id: programId, throughDay } of await r.through.find({}).sort({ _id: 1 }).toArray()) {
    if (drift.length >= limit) break;
    const session = await r.connection.startSession({ snapshot: true });
    try {
      const rows = await r.running
        .aggregate<Record<string, string | number | boolean> & { _id: Record<string, string | number | boolean> }>(
          [
            { $match: { programId, day: { $lte: throughDay } } },
            side(`$${r.figure}`, { $literal: 0 }),
            { $unionWith: { coll: r.running.collectionName, pipeline: [{ $match: { programId, day: { $lt: throughDay } } }, side({ $literal: 0 }, `$${r.figure}`, nextDay)] } },
            {
              $unionWith: {
                coll: daily.collection.collectionName,
                pipeline: [{ $match: { programId, partnerId: { $ne: ALL_PARTNERS }, day: { $lte: throughDay } } }, side({ $literal: 0 }, `$${r.figure}`)],
              },
            },
            { $group: { _id: { ...Object.fromEntries(keyFields.map((f) => [f, `$${f}`])), day: "$day" }, stored: { $sum: "$stored" }, counted: { $sum: "$counted" } } },
            { $match: { $expr: { $ne: ["$stored", "$counted"] } } },
            { $sort: { "_id.partnerId": 1, ...Object.fromEntries(r.rest.map((f) => [`_id.${f}`, 1])), "_id.day": 1 } },
            { $limit: limit - drift.length },
          ],
          { session },
        )
        .toArray();
      for (const row of rows)
        drift.push({
          rollup: r.running.collectionName,
          programId,
          partnerId: Number(row._id.partnerId),
          day: String(row._id.day),
          key: r.rest.map((f) => (f === "isTest" ? (row._id[f] ? "test" : "live") : String(row._id[f]))).join(" "),
          stored: { [r.figure]: Number(row.stored) },
          counted: { [r.figure]: Number(row.counted) },
        });
    } finally {
      await session.endSession();
    }
  }
  return drift;
}
