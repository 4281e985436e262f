import { Schema, type Connection, type Model } from "mongoose";
import { isDuplicateKeyError, nextId } from "../../shared/storage/mongo";
import type { NewNotification, Notification, NotificationKind, NotificationsRepository } from "./repository";

type NotificationDoc = Omit<Notification, "id"> & { _id: number };

const schema = new Schema<NotificationDoc>(
  {
    _id: Number,
    eventId: { type: Number, required: true },
    kind: { type: String, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    commissionId: { type: Number, required: true },
    transactionId: { type: String, required: true },
    status: { type: String, required: true },
    deductionCents: { type: Number, required: true },
    currency: { type: String, required: true },
    reason: { type: String, default: null },
    createdAt: { type: Date, required: true },
    readAt: { type: Date, default: null },
  },
  { collection: "notifications", versionKey: false },
);
// The unique pair makes a redelivered event a no-op.
schema.index({ eventId: 1, kind: 1 }, { unique: true });
schema.index({ partnerId: 1, _id: -1 });
schema.index({ programId: 1, kind: 1, _id: -1 });

const toNotification = ({ _id, ...rest }: NotificationDoc): Notification => ({ id: _id, ...rest });

export class MongoNotificationsRepository implements NotificationsRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly model: Model<NotificationDoc>,
  ) {}

  static async create(connection: Connection): Promise<MongoNotificationsRepository> {
    const model = (connection.models.Notification as Model<NotificationDoc>) ?? connection.model<NotificationDoc>("Notification", schema);
    await model.createIndexes();
    return new MongoNotificationsRepository(connection, model);
  }

  async insertOnce(n: NewNotification): Promise<boolean> {
    if (await this.model.exists({ eventId: n.eventId, kind: n.kind })) return false;
    try {
      await this.model.create({ _id: await nextId(this.connection, "notifications"), ...n, createdAt: new Date(), readAt: null });
      return true;
    } catch (err) {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }

  async list(f: { programId?: number; partnerId?: number; kind?: NotificationKind; limit: number }): Promise<Notification[]> {
    const filter: Record<string, unknown> = {};
    if (f.programId !== undefined) filter.programId = f.programId;
    if (f.partnerId !== undefined) filter.partnerId = f.partnerId;
    if (f.kind !== undefined) filter.kind = f.kind;
    const docs = await this.model.find(filter).sort({ _id: -1 }).limit(f.limit).lean<NotificationDoc[]>();
    return docs.map(toNotification);
  }
}
