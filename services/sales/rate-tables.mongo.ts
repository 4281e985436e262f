/** The reference-rate tables on MongoDB (the contract: rate-tables.ts). */
import { Schema, type Connection, type Model } from "mongoose";
import { collectionSchema, modelOn, prepareCollections, withTransaction } from "../../shared/storage/mongo";
import { daysBefore, inDayOrder, type NewRateTable, type TableSource, type RateTable, type RateTableFilter, type RateTableStore } from "./rate-tables";

/** A table as stored: `day` is YYYY-MM-DD text (its order is the days' order), `rates` JSON as SQL's JSONB. */
type RateTableDoc = RateTable;

const rateTableSchema = collectionSchema<RateTableDoc>(
  "exchange_rate_tables",
  {
    source: { type: String, required: true },
    day: { type: String, required: true },
    base: { type: String, required: true },
    rates: { type: Schema.Types.Mixed, required: true },
    loadedAt: { type: Date, required: true },
  },
  { minimize: false },
);
// As the SQL primary key: one table per source and day, and the lookup's range (one source, days up to a sale's, newest first).
rateTableSchema.index({ source: 1, day: 1 }, { unique: true });
// The admin list of every source, newest first (as the SQL index exchange_rate_tables_newest).
rateTableSchema.index({ day: -1, source: 1 });

const toTable = (d: RateTableDoc): RateTable => ({ source: d.source, day: d.day, base: d.base, rates: d.rates, loadedAt: d.loadedAt });

export class MongoRateTableStore implements RateTableStore {
  private constructor(
    private readonly connection: Connection,
    private readonly tables: Model<RateTableDoc>,
  ) {}

  static async create(connection: Connection): Promise<MongoRateTableStore> {
    const tables = modelOn(connection, "ExchangeRateTable", rateTableSchema);
    await prepareCollections([tables]);
    return new MongoRateTableStore(connection, tables);
  }

  async saveTables(source: TableSource, base: string, tables: readonly NewRateTable[]): Promise<number> {
    if (tables.length === 0) return 0;
    const sorted = inDayOrder(tables);
    const loadedAt = new Date();
    // All or nothing: one transaction (retried by the driver on a conflict with an instance saving the same days).
    await withTransaction(this.connection, (session) =>
      this.tables.bulkWrite(
        sorted.map((t) => ({
          updateOne: {
            filter: { source, day: t.day },
            // Stored as JSON, as the SQL adapter's JSONB; the whole rates object replaced.
            update: { $set: { base, rates: { ...t.rates }, loadedAt } },
            upsert: true,
          },
        })),
        { session, ordered: true },
      ),
    );
    return sorted.length;
  }

  async findTable(source: TableSource, day: string, maxAgeDays: number): Promise<RateTable | null> {
    const doc = await this.tables
      .findOne({ source, day: { $lte: day, $gte: daysBefore(day, maxAgeDays) } })
      .sort({ day: -1 })
      .lean<RateTableDoc>();
    return doc ? toTable(doc) : null;
  }

  async listTables(filter: RateTableFilter): Promise<RateTable[]> {
    const day: Record<string, string> = {};
    if (filter.from) day.$gte = filter.from;
    if (filter.to) day.$lte = filter.to;
    const query = { ...(filter.source ? { source: filter.source } : {}), ...(Object.keys(day).length ? { day } : {}) };
    const docs = await this.tables.find(query).sort({ day: -1, source: 1 }).limit(filter.limit).lean<RateTableDoc[]>();
    return docs.map(toTable);
  }
}
