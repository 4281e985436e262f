/**
 * Running totals of a daily rollup on MongoDB (running-sql.ts is the SQL side and explains them): per partner and
 * day, one figure summed from the program's first day through that day, built by the owner's job up to yesterday
 * (UTC; from a quarter of an hour after midnight, lastSafeDay); `<collection>_through` keeps per program the last
 * day built. A write moving a partner's figures of a day before today moves that day back in its own transaction
 * (`moveRunningBack`, called by incrementRollup), so a build running meanwhile conflicts on that document and runs
 * again.
 */
import { randomUUID } from "node:crypto";
import type { ClientSession, Connection, Model, mongo } from "mongoose";
import { ALL_PARTNERS, type RollupDrift, type StatsQuery, type TopPartners } from "../domain/stats";
import { withTransaction } from "./mongo";
import { differingPartners, PackedDayCache, packFigures, rankPackedRange, unpackFigures } from "./running-packed";

/** How many days a program's build writes per transaction (about partners x days documents). */
const DAYS_PER_BUILD = 7;
/**
 * How long after midnight (UTC) the job waits before building yesterday. A write whose process called its day today
 * (moveRunningBack, by that process's clock, so it moved no built day back) may commit after midnight, unseen by a
 * build that began earlier; MongoDB ends every transaction within transactionLifetimeLimitSeconds (60 by default),
 * and the rest allows for the processes' clocks differing by up to five minutes either way.
 */
const YESTERDAY_AFTER_MS = 15 * 60_000;

/** The last day the job may build: yesterday from YESTERDAY_AFTER_MS past midnight, the day before until then; never after the day before `today`. */
function lastSafeDay(today: Date): string {
  const byClock = addDays(new Date(Date.now() - YESTERDAY_AFTER_MS).toISOString().slice(0, 10), -1);
  return [addDays(today.toISOString().slice(0, 10), -1), byClock].sort()[0];
}

/** A program's last built day. */
interface ThroughDoc {
  _id: number;
  /** YYYY-MM-DD. */
  throughDay: string;
  /** The last day packed (running totals kept packed; absent on a document an earlier version inserted). */
  packedThroughDay?: string;
}

type RunningDoc = Record<string, string | number | boolean>;

/** A built day's running totals of every partner of a key packed (running-packed.ts): the ranking's reads. */
type PackedDoc = Record<string, string | number | boolean | mongo.Binary | Uint8Array>;

/** A rollup's running totals: the collections and which of the rollup's fields they keep. */
export interface MongoRunning {
  connection: Connection;
  running: mongo.Collection<RunningDoc>;
  through: mongo.Collection<ThroughDoc>;
  /** The rollup's figure summed (amountCents, clicks). */
  figure: string;
  /** The rollup's key fields other than programId, partnerId and day, in key order (isTest, currency). */
  rest: string[];
  /** `<name>_packed`, when the job also packs each built day (the ranking reads them). */
  packed: mongo.Collection<PackedDoc> | null;
  /** The packed days the ranking has read, by revision (running-packed.ts). */
  packedDays: PackedDayCache;
}

const addDays = (day: string, n: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * The running totals' collections, `<name>` (each rollup key field but the day, the figure, a day) and
 * `<name>_through` (`_id` the program), and with `packed` `<name>_packed` (programId, the rest, day, `figures`, and
 * a `revision` new with each document the job writes);
 * the partners' figures read along the unique key, the job along program and day, the ranking the packed days.
 */
export async function runningCollections(connection: Connection, name: string, figure: string, rest: string[], options: { packed: boolean }): Promise<MongoRunning> {
  const db = connection.db!;
  const running = db.collection<RunningDoc>(name);
  // Creating the index creates the collection: never inside a transaction (older servers refuse it there).
  await running.createIndex({ programId: 1, ...Object.fromEntries(rest.map((f) => [f, 1])), day: 1, partnerId: 1 }, { unique: true, name: "running_key" });
  await running.createIndex({ programId: 1, day: 1 }, { name: "running_days" });
  const through = db.collection<ThroughDoc>(`${name}_through`);
  if (!(await db.listCollections({ name: through.collectionName }).hasNext())) await db.createCollection(through.collectionName).catch(() => undefined);
  let packed: mongo.Collection<PackedDoc> | null = null;
  if (options.packed) {
    packed = db.collection<PackedDoc>(`${name}_packed`);
    await packed.createIndex({ programId: 1, ...Object.fromEntries(rest.map((f) => [f, 1])), day: 1 }, { unique: true, name: "packed_key" });
  }
  return { connection, running, through, figure, rest, packed, packedDays: new PackedDayCache() };
}

/** The bytes of a packed document's figures (the driver reads BinData as a Binary). */
const packedBytes = (doc: PackedDoc | null | undefined): Uint8Array | null => {
  const value = doc?.figures;
  if (!value) return null;
  return value instanceof Uint8Array ? value : (value as mongo.Binary).value();
};

/** The packed documents of `docs` (running totals of one program): one per rest key and day. */
function packedDocs(r: MongoRunning, docs: readonly RunningDoc[]): PackedDoc[] {
  const groups = new Map<string, { key: RunningDoc; rows: Array<{ partnerId: number; figure: number }> }>();
  for (const doc of docs) {
    const key: RunningDoc = { programId: doc.programId, ...Object.fromEntries(r.rest.map((f) => [f, doc[f]])), day: doc.day };
    const text = JSON.stringify(Object.values(key));
    if (!groups.has(text)) groups.set(text, { key, rows: [] });
    groups.get(text)!.rows.push({ partnerId: Number(doc.partnerId), figure: Number(doc[r.figure]) });
  }
  return [...groups.values()].map((g) => ({ ...g.key, figures: packFigures(g.rows), revision: randomUUID() }));
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
    await r.through.updateOne(
      { _id: programId },
      [{ $set: { throughDay: { $min: ["$throughDay", addDays(day, -1)] }, ...(r.packed ? { packedThroughDay: { $min: ["$packedThroughDay", addDays(day, -1)] } } : {}) } }],
      { session },
    );
}

/**
 * Builds the running totals of every program up to yesterday (lastSafeDay), at most DAYS_PER_BUILD days per
 * program and call, from `daily` (the rollup's collection), and packs as many built days (running-sql.ts); returns
 * how many program-days it built or packed (0: done).
 */
export async function extendRunningTotals(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, today: Date): Promise<number> {
  const target = lastSafeDay(today);
  let built = 0;
  for (const programId of ((await daily.collection.distinct("programId")) as number[]).sort((a, b) => a - b)) {
    // Written before any build, so a write of a past day always finds the document to move back.
    const [first] = await daily.collection
      .find({ programId, partnerId: ALL_PARTNERS }, { projection: { day: 1 } })
      .sort({ day: 1 })
      .limit(1)
      .toArray();
    if (!first) continue;
    const beforeFirst = addDays(String(first.day), -1);
    await r.through.updateOne({ _id: programId }, { $setOnInsert: { throughDay: beforeFirst, ...(r.packed ? { packedThroughDay: beforeFirst } : {}) } }, { upsert: true });
    built += await withTransaction(r.connection, async (session) => {
      const through = await r.through.findOne({ _id: programId }, { session });
      if (!through) return 0;
      // The days to build (none once the target is built) and, packed, the days to pack up to the new built day
      // (a document an earlier version inserted has no packed day: packed from the program's first day).
      const builtTo = through.throughDay >= target ? through.throughDay : [addDays(through.throughDay, DAYS_PER_BUILD), target].sort()[0];
      const packedThrough = through.packedThroughDay ?? beforeFirst;
      const packTo = r.packed && packedThrough < builtTo ? [addDays(packedThrough, DAYS_PER_BUILD), builtTo].sort()[0] : null;
      if (builtTo === through.throughDay && !packTo) return 0;
      const days = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
      let done = 0;
      if (builtTo > through.throughDay) {
        await buildDays(r, daily, programId, through.throughDay, builtTo, session);
        done += days(addDays(through.throughDay, 1), builtTo);
      }
      if (r.packed && packTo) {
        const from = addDays(packedThrough, 1);
        const built = await r.running.find({ programId, day: { $gte: from, $lte: packTo } }, { session }).toArray();
        await r.packed.deleteMany({ programId, day: { $gte: from, $lte: packTo } }, { session });
        const packed = packedDocs(r, built);
        if (packed.length) await r.packed.insertMany(packed, { session, ordered: true });
        done += days(from, packTo);
      }
      await r.through.updateOne({ _id: programId }, { $set: { throughDay: builtTo, ...(packTo ? { packedThroughDay: packTo } : {}) } }, { session });
      return done;
    });
  }
  return built;
}

/** Builds the running totals of a program's days after `through` up to `last` (replacing what they held), in `session`. */
async function buildDays(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, programId: number, through: string, last: string, session: ClientSession): Promise<void> {
  const keyOf = (doc: RunningDoc) => JSON.stringify([...r.rest.map((f) => doc[f]), doc.partnerId]);
  const from = addDays(through, 1);
  const totals = new Map<string, RunningDoc>();
  for (const doc of await r.running.find({ programId, day: through }, { session }).toArray()) totals.set(keyOf(doc), doc);
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
}

/**
 * What a range reads (running-sql.ts's runningRange): the built day whose totals end it and the day before it (null
 * for all time; both null when the range has no built day), and the rollup's days after the built ones.
 */
function rangeDays(through: string | null, q: StatsQuery): { last: string | null; before: string | null; after: Record<string, string> } {
  const start = q.start && q.end ? q.start.toISOString().slice(0, 10) : null;
  const end = q.start && q.end ? q.end.toISOString().slice(0, 10) : null;
  const built = through !== null && (!start || through >= start);
  const after: Record<string, string> = {};
  if (start && end) Object.assign(after, { $gte: start, $lt: end });
  if (built) {
    delete after.$gte;
    after.$gt = through;
  }
  return {
    last: built ? (end && addDays(end, -1) < through ? addDays(end, -1) : through) : null,
    before: built && start ? addDays(start, -1) : null,
    after,
  };
}

/** The program's last built day (`packed`: built and packed), read in `session`. */
async function throughOf(r: MongoRunning, programId: number, session: ClientSession, packed = false): Promise<string | null> {
  const through = await r.through.findOne({ _id: programId }, { session });
  if (!through) return null;
  if (!packed) return through.throughDay;
  return through.packedThroughDay ? [through.throughDay, through.packedThroughDay].sort()[0] : null;
}

/**
 * Each partner's figure over the range from the running totals (running-sql.ts's runningFiguresQuery): its running
 * total at the range's last built day minus the day before the range, plus the rollup's documents after the built
 * days; `then` projects the { _id: partnerId, figure } rows. One snapshot.
 */
async function aggregateRunningFigures<T extends object>(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, q: StatsQuery, then: object[]): Promise<T[]> {
  const session = await r.connection.startSession({ snapshot: true });
  try {
    const days = rangeDays(await throughOf(r, q.programId, session), q);
    const common = { programId: q.programId, isTest: q.test, ...(q.partnerIds ? { partnerId: { $in: [...q.partnerIds] } } : {}) };
    const value = (sign: 1 | -1) => ({ $project: { _id: 0, partnerId: 1, v: sign === 1 ? `$${r.figure}` : { $multiply: [-1, `$${r.figure}`] } } });
    const unions: Array<{ coll: string; pipeline: object[] }> = [];
    if (days.last) unions.push({ coll: r.running.collectionName, pipeline: [{ $match: { ...common, day: days.last } }, value(1)] });
    if (days.before) unions.push({ coll: r.running.collectionName, pipeline: [{ $match: { ...common, day: days.before } }, value(-1)] });
    const partners = { $ne: ALL_PARTNERS, ...(q.partnerIds ? { $in: [...q.partnerIds] } : {}) };
    const after = Object.keys(days.after).length ? { day: days.after } : {};
    unions.push({ coll: daily.collection.collectionName, pipeline: [{ $match: { ...common, partnerId: partners, ...after } }, value(1)] });
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
 * An owner's topPartners on MongoDB (running-sql.ts's topPartnersQuery): the packed totals of the range's last built
 * day and of the day before it, and the rollup's documents after the built days summed per partner, ranked by
 * rankPackedRange (the `limit` best above zero, ties: lower id first, and how many are above zero; the days it holds
 * are read without their bytes). One snapshot.
 */
export async function runningTopPartners(r: MongoRunning, daily: Pick<Model<unknown>, "collection">, q: StatsQuery, filter: Record<string, unknown>, limit: number): Promise<TopPartners> {
  const packed = r.packed;
  if (!packed) throw new Error(`${r.running.collectionName} keeps no packed days`);
  const session = await r.connection.startSession({ snapshot: true });
  try {
    const days = rangeDays(await throughOf(r, q.programId, session, true), q);
    const key = { programId: q.programId, isTest: q.test, ...filter };
    const after = Object.keys(days.after).length ? { day: days.after } : {};
    return await rankPackedRange(
      r.packedDays,
      async (held) => {
        // The bytes of a revision held are left out (a document an earlier version wrote has none: read whole).
        const projection = { revision: 1, figures: { $cond: [{ $in: ["$revision", held] }, "$$REMOVE", "$figures"] } };
        const packedDay = async (day: string | null) => {
          const doc = day ? await packed.findOne({ ...key, day }, { session, projection }) : null;
          return { revision: typeof doc?.revision === "string" ? doc.revision : null, figures: packedBytes(doc) };
        };
        const [last, before] = [await packedDay(days.last), await packedDay(days.before)];
        const sums = [{ $match: { ...key, partnerId: { $ne: ALL_PARTNERS }, ...after } }, { $group: { _id: "$partnerId", figure: { $sum: `$${r.figure}` } } }];
        const rows = await daily.collection.aggregate<{ _id: number; figure: number }>(sums, { session }).toArray();
        const afterFigures = packFigures(rows.map((row) => ({ partnerId: Number(row._id), figure: Number(row.figure) })));
        return { lastRevision: last.revision, last: last.figures, beforeRevision: before.revision, before: before.figures, after: afterFigures };
      },
      q.partnerIds,
      limit,
    );
  } finally {
    await session.endSession();
  }
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
  return aggregateRunningFigures(r, daily, q, [{ $match: { figure: { $ne: 0 } } }, { $project: { _id: 0, partnerId: "$_id", [r.figure]: "$figure" } }]);
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
  for (const { _id: programId, throughDay, packedThroughDay } of await r.through.find({}).sort({ _id: 1 }).toArray()) {
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
      const packedThrough = packedThroughDay && [throughDay, packedThroughDay].sort()[0];
      if (r.packed && packedThrough && drift.length < limit) drift.push(...(await packedDrift(r, r.packed, programId, packedThrough, limit - drift.length, session)));
    } finally {
      await session.endSession();
    }
  }
  return drift;
}

/**
 * The partners whose packed total of a built day of the program differs from its running totals' document (missing
 * ones counting zero), at most `limit`: the documents read in key order and packed again day by day.
 */
async function packedDrift(r: MongoRunning, packed: mongo.Collection<PackedDoc>, programId: number, throughDay: string, limit: number, session: ClientSession): Promise<RollupDrift[]> {
  const drift: RollupDrift[] = [];
  const seen = new Set<string>();
  const keyText = (doc: RunningDoc | PackedDoc) => JSON.stringify([...r.rest.map((f) => doc[f]), doc.day]);
  const compare = (key: RunningDoc | PackedDoc, stored: Uint8Array | null, rows: Array<{ partnerId: number; figure: number }>) => {
    for (const d of differingPartners(unpackFigures(stored), unpackFigures(packFigures(rows))))
      drift.push({
        rollup: packed.collectionName,
        programId,
        partnerId: d.partnerId,
        day: String(key.day),
        key: r.rest.map((f) => (f === "isTest" ? (key[f] ? "test" : "live") : String(key[f]))).join(" "),
        stored: { [r.figure]: d.stored },
        counted: { [r.figure]: d.counted },
      });
  };
  // The running documents in the unique key's order: a day's partners of each rest key follow each other.
  let group: { key: RunningDoc; rows: Array<{ partnerId: number; figure: number }> } | null = null;
  const flush = async () => {
    if (!group) return;
    seen.add(keyText(group.key));
    compare(group.key, packedBytes(await packed.findOne({ programId, ...Object.fromEntries(r.rest.map((f) => [f, group!.key[f]])), day: group.key.day }, { session })), group.rows);
  };
  const sort = { programId: 1, ...Object.fromEntries(r.rest.map((f) => [f, 1])), day: 1, partnerId: 1 } as const;
  for await (const doc of r.running.find({ programId, day: { $lte: throughDay } }, { session, sort })) {
    if (!group || keyText(group.key) !== keyText(doc)) {
      await flush();
      if (drift.length >= limit) return drift.slice(0, limit);
      group = { key: doc, rows: [] };
    }
    group.rows.push({ partnerId: Number(doc.partnerId), figure: Number(doc[r.figure]) });
  }
  await flush();
  // Packed days without any running document.
  for await (const doc of packed.find({ programId, day: { $lte: throughDay } }, { session })) if (!seen.has(keyText(doc))) compare(doc, packedBytes(doc), []);
  return drift.slice(0, limit);
}
