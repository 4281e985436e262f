import { Schema, type Connection, type Model } from "mongoose";
import { isDuplicateKeyError, modelOn, prepareCollections, schemaOptions } from "../../shared/storage/mongo";
import type { ProcessorEvent, ProcessorPayment, ProcessorRefund, ProcessorRepository } from "./repository";

type EventDoc = Omit<ProcessorEvent, "eventId"> & { _id: string };

const eventSchema = new Schema<EventDoc>(
  {
    _id: { type: String, required: true },
    type: { type: String, required: true },
    programId: { type: Number, default: null },
    status: { type: String, required: true },
    attempts: { type: Number, required: true, default: 0 },
    claimedUntil: { type: Date, default: null },
    receivedAt: { type: Date, required: true },
    processedAt: { type: Date, default: null },
    lastError: { type: String, default: null },
    outcome: { type: Schema.Types.Mixed, default: null },
  },
  schemaOptions("processor_events"),
);

const paymentSchema = new Schema<ProcessorPayment>(
  {
    programId: { type: Number, required: true },
    reference: { type: String, required: true },
    transactionId: { type: String, required: true },
    saleAmountCents: { type: Number, required: true },
    chargedAmountCents: { type: Number, required: true },
  },
  schemaOptions("processor_payments"),
);
paymentSchema.index({ programId: 1, reference: 1 }, { unique: true });

const refundSchema = new Schema<ProcessorRefund>(
  {
    programId: { type: Number, required: true },
    refundId: { type: String, required: true },
    transactionId: { type: String, required: true },
    amountCents: { type: Number, required: true },
    kind: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  schemaOptions("processor_refunds"),
);
refundSchema.index({ programId: 1, refundId: 1 }, { unique: true });
refundSchema.index({ programId: 1, transactionId: 1, createdAt: 1 });

const toEvent = ({ _id, ...rest }: EventDoc): ProcessorEvent => ({ eventId: _id, ...rest });
const strip = <T extends object>(doc: T & { _id?: unknown }): T => {
  const { _id, ...rest } = doc;
  return rest as T;
};

export class MongoProcessorRepository implements ProcessorRepository {
  private constructor(
    private readonly events: Model<EventDoc>,
    private readonly payments: Model<ProcessorPayment>,
    private readonly refunds: Model<ProcessorRefund>,
  ) {}

  static async create(connection: Connection): Promise<MongoProcessorRepository> {
    const models = [
      modelOn(connection, "ProcessorEvent", eventSchema),
      modelOn(connection, "ProcessorPayment", paymentSchema),
      modelOn(connection, "ProcessorRefund", refundSchema),
    ] as const;
    await prepareCollections(models);
    return new MongoProcessorRepository(...models);
  }

  async claimEvent(e: { eventId: string; type: string; programId: number | null }, leaseMs: number, now: Date) {
    const until = new Date(now.getTime() + leaseMs);
    try {
      // Upsert only matches a claimable event; a done or busy one makes the insert collide on _id.
      const doc = await this.events
        .findOneAndUpdate(
          { _id: e.eventId, $or: [{ status: "failed" }, { status: "processing", claimedUntil: { $lt: now } }] },
          {
            $set: { status: "processing", claimedUntil: until },
            $inc: { attempts: 1 },
            $setOnInsert: { type: e.type, programId: e.programId, receivedAt: now, processedAt: null, lastError: null, outcome: null },
          },
          { upsert: true, new: true },
        )
        .lean<EventDoc>();
      return { claimed: true, event: toEvent(doc!) };
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      return { claimed: false, event: (await this.getEvent(e.eventId))! };
    }
  }

  async finishEvent(eventId: string, status: "processed" | "ignored", outcome: Record<string, unknown>, now: Date): Promise<void> {
    await this.events.updateOne({ _id: eventId }, { $set: { status, outcome, processedAt: now, claimedUntil: null, lastError: null } });
  }

  async releaseEvent(eventId: string, error: string): Promise<void> {
    await this.events.updateOne({ _id: eventId }, { $set: { status: "failed", claimedUntil: null, lastError: error.slice(0, 1000) } });
  }

  async getEvent(eventId: string): Promise<ProcessorEvent | null> {
    const doc = await this.events.findById(eventId).lean<EventDoc>();
    return doc ? toEvent(doc) : null;
  }

  async linkPayment(p: ProcessorPayment): Promise<void> {
    await this.payments.updateOne({ programId: p.programId, reference: p.reference }, { $setOnInsert: p }, { upsert: true }).catch((err) => {
      if (!isDuplicateKeyError(err)) throw err;
    });
  }

  async findPayment(programId: number, reference: string): Promise<ProcessorPayment | null> {
    const doc = await this.payments.findOne({ programId, reference }).lean<ProcessorPayment & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async recordRefund(r: ProcessorRefund): Promise<void> {
    await this.refunds.updateOne({ programId: r.programId, refundId: r.refundId }, { $setOnInsert: r }, { upsert: true }).catch((err) => {
      if (!isDuplicateKeyError(err)) throw err;
    });
  }

  async listRefunds(programId: number, transactionId: string): Promise<ProcessorRefund[]> {
    const docs = await this.refunds.find({ programId, transactionId }).sort({ createdAt: 1, refundId: 1 }).lean<(ProcessorRefund & { _id: unknown })[]>();
    return docs.map(strip);
  }
}
