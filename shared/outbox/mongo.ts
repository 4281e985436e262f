import { Schema, type ClientSession, type Connection, type Model } from "mongoose";
import { modelOn, nextId, prepareCollections, requiredStringsMayBeEmpty, collectionSchema, type DocOf } from "../storage/mongo";
import { checkOutboxName, type OutboxEvent, type OutboxStore } from "./outbox";

export type OutboxDoc = DocOf<OutboxEvent> & { availableAt: Date; claimedBy: string | null; claimedUntil: Date | null };

/**
 * "dispatchedAt: null" cannot be a partial filter, so it leads the index; with
 * _id next the claim walks the index in claim order and stops at the first
 * claimable event (as the commissions outbox does).
 */
export const CLAIM_INDEX = { dispatchedAt: 1, _id: 1 } as const;

/** The schema of an outbox collection; an owner may add fields and indexes of its own (the commissions outbox adds commissionId). */
export function outboxSchema(collection: string): Schema<OutboxDoc> {
  const schema = requiredStringsMayBeEmpty(
    collectionSchema<OutboxDoc>(
      collection,
      {
        _id: { type: Number, required: true },
        type: { type: String, required: true },
        payload: { type: Schema.Types.Mixed, required: true },
        createdAt: { type: Date, required: true },
        availableAt: { type: Date, required: true },
        attempts: { type: Number, required: true, default: 0 },
        claimedBy: { type: String, default: null },
        claimedUntil: { type: Date, default: null },
        dispatchedAt: { type: Date, default: null },
        lastError: { type: String, default: null },
      },
      // Keep empty objects in payloads, as JSONB does.
      { minimize: false },
    ),
  );
  schema.index(CLAIM_INDEX);
  return schema;
}

export const toOutboxEvent = (d: OutboxDoc): OutboxEvent => ({
  id: d._id,
  type: d.type,
  payload: d.payload,
  attempts: d.attempts,
  createdAt: d.createdAt,
  dispatchedAt: d.dispatchedAt ?? null,
  lastError: d.lastError ?? null,
});

/** One service's outbox collection on MongoDB. */
export class MongoOutbox implements OutboxStore {
  private constructor(
    private readonly connection: Connection,
    private readonly collection: string,
    private readonly events: Model<OutboxDoc>,
  ) {}

  /** Creates the collection and its index (idempotent). */
  static async create(connection: Connection, collection: string): Promise<MongoOutbox> {
    const name = checkOutboxName(collection);
    const events = modelOn(connection, `Outbox_${name}`, outboxSchema(name));
    await prepareCollections([events]);
    return new MongoOutbox(connection, name, events);
  }

  /** Over a model its owner made from outboxSchema (with fields of its own) and prepared. */
  static over<D extends OutboxDoc>(connection: Connection, collection: string, events: Model<D>): MongoOutbox {
    // Reads and writes only the outbox's own fields: the owner's are left as they are.
    return new MongoOutbox(connection, checkOutboxName(collection), events as unknown as Model<OutboxDoc>);
  }

  /**
   * Writes an event in `session`'s transaction: pass the session of the write
   * it reports, so both commit or neither does. The id comes from a counter
   * outside the transaction (a retried or aborted transaction leaves a gap).
   */
  async enqueue(session: ClientSession, type: string, payload: Record<string, unknown>, now: Date): Promise<number> {
    const id = await nextId(this.connection, this.collection);
    await this.events.insertOne(
      {
        _id: id,
        type,
        // Stored as JSON, as the SQL adapter's JSONB: what the relay reads back is what a JSON consumer sees.
        payload: JSON.parse(JSON.stringify(payload)),
        createdAt: now,
        availableAt: now,
        attempts: 0,
        claimedBy: null,
        claimedUntil: null,
        dispatchedAt: null,
        lastError: null,
      },
      { session },
    );
    return id;
  }

  async claimOutbox(relayId: string, leaseMs: number, limit: number, now: Date): Promise<OutboxEvent[]> {
    const claimedUntil = new Date(now.getTime() + leaseMs);
    const claimed: OutboxEvent[] = [];
    // One atomic claim per event: relays running this concurrently never get the same event.
    while (claimed.length < limit) {
      const doc = await this.events
        .findOneAndUpdate(
          { dispatchedAt: null, availableAt: { $lte: now }, $or: [{ claimedUntil: null }, { claimedUntil: { $lt: now } }] },
          { $set: { claimedBy: relayId, claimedUntil }, $inc: { attempts: 1 } },
          { sort: { _id: 1 }, hint: CLAIM_INDEX, returnDocument: "after" },
        )
        .lean();
      if (!doc) break;
      claimed.push(toOutboxEvent(doc as OutboxDoc));
    }
    return claimed.sort((a, b) => a.id - b.id);
  }

  async markDispatched(id: number, relayId: string, now: Date): Promise<void> {
    await this.events.updateOne({ _id: id, claimedBy: relayId }, { $set: { dispatchedAt: now, claimedUntil: null } });
  }

  async markBatchDispatched(ids: number[], relayId: string, now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.events.updateMany({ _id: { $in: ids }, claimedBy: relayId }, { $set: { dispatchedAt: now, claimedUntil: null } });
  }

  async deferOutbox(id: number, relayId: string, retryAt: Date, error: string): Promise<void> {
    await this.events.updateOne({ _id: id, claimedBy: relayId, dispatchedAt: null }, { $set: { availableAt: retryAt, claimedUntil: null, lastError: error.slice(0, 1000) } });
  }

  outboxBacklog(): Promise<number> {
    return this.events.countDocuments({ dispatchedAt: null }).exec();
  }

  async oldestPendingOutboxAt(): Promise<Date | null> {
    const doc = await this.events.findOne({ dispatchedAt: null }, { createdAt: 1 }).sort({ _id: 1 }).lean();
    return doc ? doc.createdAt : null;
  }

  async listOutbox(filter: { limit: number }): Promise<OutboxEvent[]> {
    // MongoDB reads limit(0) as "no limit".
    if (filter.limit < 1) return [];
    const docs = await this.events.find({}).sort({ _id: -1 }).limit(filter.limit).lean();
    return docs.map((d) => toOutboxEvent(d as OutboxDoc));
  }
}
