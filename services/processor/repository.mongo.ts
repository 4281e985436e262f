import { Schema, type Connection, type Model } from "mongoose";
import { supersedes } from "./processor-refunds";
import { isDuplicateKeyError, modelOn, prepareCollections, collectionSchema } from "../../shared/storage/mongo";
import { PADDLE_EVENT_PREFIX } from "./repository";
import type {
  BillingPlatform,
  FinishedEventStatus,
  PartnerPayoutAccount,
  PayoutTransfer,
  PaddleConnection,
  PaddleConnectionChange,
  PaypalBatch,
  PaypalCredentials,
  ProcessorApiKey,
  ProcessorEvent,
  ProcessorEventStatus,
  ProcessorMovement,
  ProcessorPayment,
  ProcessorRepository,
  ProcessorWebhookSecret,
  WebhookEndpointKind,
} from "./repository";

type EventDoc = Omit<ProcessorEvent, "eventId"> & { _id: string };

const eventSchema = collectionSchema<EventDoc>("processor_events", {
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
});

const paymentSchema = collectionSchema<ProcessorPayment>("processor_payments", {
  programId: { type: Number, required: true },
  reference: { type: String, required: true },
  transactionId: { type: String, required: true },
  saleAmountCents: { type: Number, required: true },
  chargedAmountCents: { type: Number, required: true },
});
paymentSchema.index({ programId: 1, reference: 1 }, { unique: true });

eventSchema.index({ status: 1, receivedAt: -1 });
eventSchema.index({ receivedAt: -1 });
// A program's newest event (the dashboard's Stripe screen), in the order lastEventOfProgram sorts by.
eventSchema.index({ programId: 1, receivedAt: -1, _id: -1 });
paymentSchema.index({ programId: 1, transactionId: 1 });

interface AliasDoc {
  programId: number;
  reference: string;
  alias: string;
}
const aliasSchema = collectionSchema<AliasDoc>("processor_aliases", {
  programId: { type: Number, required: true },
  reference: { type: String, required: true },
  alias: { type: String, required: true },
});
aliasSchema.index({ programId: 1, reference: 1, alias: 1 }, { unique: true });

const movementSchema = collectionSchema<ProcessorMovement>("processor_movements", {
  programId: { type: Number, required: true },
  movementId: { type: String, required: true },
  kind: { type: String, required: true },
  chargeId: { type: String, required: true },
  paymentIntentId: { type: String, default: null },
  amountCents: { type: Number, required: true },
  status: { type: String, required: true },
  createdAt: { type: Date, required: true },
  statusAt: { type: Date, required: true },
});
movementSchema.index({ programId: 1, movementId: 1 }, { unique: true });
movementSchema.index({ programId: 1, chargeId: 1 });
movementSchema.index({ programId: 1, paymentIntentId: 1 }, { partialFilterExpression: { paymentIntentId: { $type: "string" } } });

interface SaleRevisionDoc {
  programId: number;
  transactionId: string;
  revision: number;
}
const saleRevisionSchema = collectionSchema<SaleRevisionDoc>("processor_sales", {
  programId: { type: Number, required: true },
  transactionId: { type: String, required: true },
  revision: { type: Number, required: true },
});
saleRevisionSchema.index({ programId: 1, transactionId: 1 }, { unique: true });

const apiKeySchema = collectionSchema<ProcessorApiKey>("processor_api_keys", {
  programId: { type: Number, required: true },
  apiKey: { type: String, required: true },
  setAt: { type: Date, required: true },
  failedAt: { type: Date, default: null },
  failure: { type: String, default: null },
});
apiKeySchema.index({ programId: 1 }, { unique: true });

/** A program's signing secret of one of its endpoints: the account endpoint's and the Connect endpoint's collections have this shape. */
function webhookSecretSchemaOf(collection: string) {
  const schema = collectionSchema<ProcessorWebhookSecret>(collection, {
    programId: { type: Number, required: true },
    signingSecret: { type: String, required: true },
    setAt: { type: Date, required: true },
  });
  schema.index({ programId: 1 }, { unique: true });
  return schema;
}
const webhookSecretSchema = webhookSecretSchemaOf("processor_webhook_secrets");
const connectWebhookSecretSchema = webhookSecretSchemaOf("processor_connect_webhook_secrets");

const partnerPayoutAccountSchema = collectionSchema<PartnerPayoutAccount>("processor_partner_payout_accounts", {
  programId: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  accountId: { type: String, required: true },
  ready: { type: Boolean, required: true },
  detailsSubmitted: { type: Boolean, required: true },
  updatedAt: { type: Date, required: true },
});
partnerPayoutAccountSchema.index({ programId: 1, partnerId: 1 }, { unique: true });
partnerPayoutAccountSchema.index({ programId: 1, accountId: 1 }, { unique: true });

const payoutTransferSchema = collectionSchema<PayoutTransfer>("processor_payout_transfers", {
  programId: { type: Number, required: true },
  payoutId: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  transferId: { type: String, required: true },
  amountCents: { type: Number, required: true },
  currency: { type: String, required: true },
  createdAt: { type: Date, required: true },
});
payoutTransferSchema.index({ programId: 1, payoutId: 1 }, { unique: true });
payoutTransferSchema.index({ programId: 1, transferId: 1 }, { unique: true });

const paypalCredentialsSchema = collectionSchema<PaypalCredentials>("processor_paypal_credentials", {
  programId: { type: Number, required: true },
  clientId: { type: String, required: true },
  clientSecret: { type: String, required: true },
  mode: { type: String, required: true, enum: ["sandbox", "live"] },
  setAt: { type: Date, required: true },
  failedAt: { type: Date, default: null },
  failure: { type: String, default: null },
});
paypalCredentialsSchema.index({ programId: 1 }, { unique: true });

const paypalBatchSchema = collectionSchema<PaypalBatch>("processor_paypal_batches", {
  programId: { type: Number, required: true },
  runId: { type: Number, required: true },
  batchId: { type: String, required: true },
  createdAt: { type: Date, required: true },
});
paypalBatchSchema.index({ programId: 1, runId: 1 }, { unique: true });

const paddleConnectionSchema = collectionSchema<PaddleConnection>("processor_paddle_connections", {
  programId: { type: Number, required: true },
  environment: { type: String, required: true, enum: ["sandbox", "live"] },
  secretKey: { type: String, default: null },
  secretSetAt: { type: Date, default: null },
  apiKey: { type: String, default: null },
  apiKeySetAt: { type: Date, default: null },
  apiKeyFailedAt: { type: Date, default: null },
  apiKeyFailure: { type: String, default: null },
});
paddleConnectionSchema.index({ programId: 1 }, { unique: true });

const toEvent = ({ _id, ...rest }: EventDoc): ProcessorEvent => ({ eventId: _id, ...rest });
const strip = <T extends object>(doc: T & { _id?: unknown }): T => {
  const { _id, ...rest } = doc;
  return rest as T;
};

export class MongoProcessorRepository implements ProcessorRepository {
  private constructor(
    private readonly events: Model<EventDoc>,
    private readonly payments: Model<ProcessorPayment>,
    private readonly aliases: Model<AliasDoc>,
    private readonly movements: Model<ProcessorMovement>,
    private readonly revisions: Model<SaleRevisionDoc>,
    private readonly apiKeys: Model<ProcessorApiKey>,
    private readonly webhookSecrets: Model<ProcessorWebhookSecret>,
    private readonly connectWebhookSecrets: Model<ProcessorWebhookSecret>,
    private readonly partnerPayoutAccounts: Model<PartnerPayoutAccount>,
    private readonly payoutTransfers: Model<PayoutTransfer>,
    private readonly paypalCredentials: Model<PaypalCredentials>,
    private readonly paypalBatches: Model<PaypalBatch>,
    private readonly paddleConnections: Model<PaddleConnection>,
  ) {}

  static async create(connection: Connection): Promise<MongoProcessorRepository> {
    const models = [
      modelOn(connection, "ProcessorEvent", eventSchema),
      modelOn(connection, "ProcessorPayment", paymentSchema),
      modelOn(connection, "ProcessorAlias", aliasSchema),
      modelOn(connection, "ProcessorMovement", movementSchema),
      modelOn(connection, "ProcessorSaleRevision", saleRevisionSchema),
      modelOn(connection, "ProcessorApiKey", apiKeySchema),
      modelOn(connection, "ProcessorWebhookSecret", webhookSecretSchema),
      modelOn(connection, "ProcessorConnectWebhookSecret", connectWebhookSecretSchema),
      modelOn(connection, "ProcessorPartnerPayoutAccount", partnerPayoutAccountSchema),
      modelOn(connection, "ProcessorPayoutTransfer", payoutTransferSchema),
      modelOn(connection, "ProcessorPaypalCredentials", paypalCredentialsSchema),
      modelOn(connection, "ProcessorPaypalBatch", paypalBatchSchema),
      modelOn(connection, "ProcessorPaddleConnection", paddleConnectionSchema),
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
          { upsert: true, returnDocument: "after" },
        )
        .lean<EventDoc>();
      return { claimed: true, event: toEvent(doc!) };
    } catch (err) {
      // Here the _id is the processor's event id: its duplicate is the business one.
      if (!isDuplicateKeyError(err, { idIsBusinessKey: true })) throw err;
      return { claimed: false, event: (await this.getEvent(e.eventId))! };
    }
  }

  async finishEvent(eventId: string, status: FinishedEventStatus, outcome: Record<string, unknown>, now: Date): Promise<void> {
    await this.events.updateOne({ _id: eventId }, { $set: { status, outcome, processedAt: now, claimedUntil: null, lastError: null } });
  }

  async releaseEvent(eventId: string, error: string): Promise<void> {
    await this.events.updateOne({ _id: eventId }, { $set: { status: "failed", claimedUntil: null, lastError: error.slice(0, 1000) } });
  }

  async getEvent(eventId: string): Promise<ProcessorEvent | null> {
    const doc = await this.events.findById(eventId).lean<EventDoc>();
    return doc ? toEvent(doc) : null;
  }

  async listEvents(filter: { status?: ProcessorEventStatus; limit: number }): Promise<ProcessorEvent[]> {
    const docs = await this.events
      .find(filter.status ? { status: filter.status } : {})
      .sort({ receivedAt: -1 })
      .limit(filter.limit)
      .lean<EventDoc[]>();
    return docs.map(toEvent);
  }

  async lastEventOfProgram(programId: number, platform: BillingPlatform): Promise<ProcessorEvent | null> {
    const paddle = new RegExp(`^${PADDLE_EVENT_PREFIX}`);
    const doc = await this.events
      .findOne({ programId, _id: platform === "paddle" ? { $regex: paddle } : { $not: paddle } })
      .sort({ receivedAt: -1, _id: -1 })
      .lean<EventDoc>();
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

  async listPaymentReferences(programId: number, transactionId: string): Promise<string[]> {
    const docs = await this.payments.find({ programId, transactionId }, { reference: 1 }).lean<{ reference: string }[]>();
    return docs.map((d) => d.reference);
  }

  async addAlias(programId: number, a: string, b: string): Promise<void> {
    if (a === b) return;
    for (const [reference, alias] of [
      [a, b],
      [b, a],
    ]) {
      await this.aliases.updateOne({ programId, reference, alias }, { $setOnInsert: { programId, reference, alias } }, { upsert: true }).catch((err) => {
        if (!isDuplicateKeyError(err)) throw err;
      });
    }
  }

  async listAliases(programId: number, reference: string): Promise<string[]> {
    const docs = await this.aliases.find({ programId, reference }, { alias: 1 }).lean<{ alias: string }[]>();
    return docs.map((d) => d.alias);
  }

  async recordMovement(m: ProcessorMovement): Promise<boolean> {
    try {
      await this.movements.create([m]);
      return true;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    // Compare-and-set against the stored report, so the precedence rule stays in one (pure) place.
    for (;;) {
      const current = await this.movements.findOne({ programId: m.programId, movementId: m.movementId }).lean<ProcessorMovement>();
      if (!current || !supersedes(current, m)) return false;
      const { modifiedCount } = await this.movements.updateOne(
        { programId: m.programId, movementId: m.movementId, status: current.status, statusAt: current.statusAt, amountCents: current.amountCents },
        { $set: { amountCents: m.amountCents, status: m.status, statusAt: m.statusAt, paymentIntentId: m.paymentIntentId ?? current.paymentIntentId } },
      );
      if (modifiedCount) return true;
    }
  }

  async listMovements(programId: number, references: readonly string[]): Promise<ProcessorMovement[]> {
    if (!references.length) return [];
    const refs = [...references];
    const docs = await this.movements
      .find({ programId, $or: [{ chargeId: { $in: refs } }, { paymentIntentId: { $type: "string", $in: refs } }] })
      .sort({ statusAt: 1, movementId: 1 })
      .lean<(ProcessorMovement & { _id: unknown })[]>();
    return docs.map(strip);
  }

  async nextRevision(programId: number, transactionId: string): Promise<number> {
    // Majority-acknowledged so a failover cannot hand out a revision twice.
    const doc = await this.revisions
      .findOneAndUpdate({ programId, transactionId }, { $inc: { revision: 1 } }, { upsert: true, returnDocument: "after", writeConcern: { w: "majority", j: true } })
      .lean<SaleRevisionDoc>();
    return doc!.revision;
  }

  async setApiKey(programId: number, apiKey: string | null, now: Date): Promise<void> {
    if (apiKey === null) {
      await this.apiKeys.deleteOne({ programId });
      return;
    }
    await this.apiKeys.updateOne({ programId }, { $set: { apiKey, setAt: now, failedAt: null, failure: null } }, { upsert: true }).catch((err) => {
      // Two first keys at once: the other upsert won; set ours over it like a later write would.
      if (!isDuplicateKeyError(err)) throw err;
      return this.apiKeys.updateOne({ programId }, { $set: { apiKey, setAt: now, failedAt: null, failure: null } });
    });
  }

  async getApiKey(programId: number): Promise<ProcessorApiKey | null> {
    const doc = await this.apiKeys.findOne({ programId }).lean<ProcessorApiKey & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async markApiKeyFailed(programId: number, apiKey: string, failure: string, now: Date): Promise<void> {
    await this.apiKeys.updateOne({ programId, apiKey }, { $set: { failedAt: now, failure: failure.slice(0, 500) } });
  }

  /** The collection of each endpoint's signing secrets. */
  private secretsOf(endpoint: WebhookEndpointKind): Model<ProcessorWebhookSecret> {
    return endpoint === "connect" ? this.connectWebhookSecrets : this.webhookSecrets;
  }

  async setWebhookSecret(programId: number, signingSecret: string | null, now: Date, endpoint: WebhookEndpointKind = "account"): Promise<void> {
    const secrets = this.secretsOf(endpoint);
    if (signingSecret === null) {
      await secrets.deleteOne({ programId });
      return;
    }
    await secrets.updateOne({ programId }, { $set: { signingSecret, setAt: now } }, { upsert: true }).catch((err) => {
      // Two first secrets at once: the other upsert won; set ours over it like a later write would.
      if (!isDuplicateKeyError(err)) throw err;
      return secrets.updateOne({ programId }, { $set: { signingSecret, setAt: now } });
    });
  }

  async getWebhookSecret(programId: number, endpoint: WebhookEndpointKind = "account"): Promise<ProcessorWebhookSecret | null> {
    const doc = await this.secretsOf(endpoint).findOne({ programId }).lean<ProcessorWebhookSecret & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async addPartnerPayoutAccount(a: PartnerPayoutAccount): Promise<PartnerPayoutAccount> {
    // Inserted only when the partner has none; a concurrent first insert collides on (programId, partnerId), and
    // the one stored is read back. A collision without a stored account of the partner is the account id's: thrown.
    let collision: unknown = null;
    await this.partnerPayoutAccounts.updateOne({ programId: a.programId, partnerId: a.partnerId }, { $setOnInsert: a }, { upsert: true }).catch((err) => {
      if (!isDuplicateKeyError(err)) throw err;
      collision = err;
    });
    const stored = await this.getPartnerPayoutAccount(a.programId, a.partnerId);
    if (!stored) throw collision ?? new Error(`The payout account of partner ${a.partnerId} of program ${a.programId} was not stored.`);
    return stored;
  }

  async getPartnerPayoutAccount(programId: number, partnerId: number): Promise<PartnerPayoutAccount | null> {
    const doc = await this.partnerPayoutAccounts.findOne({ programId, partnerId }).lean<PartnerPayoutAccount & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async findPartnerPayoutAccount(programId: number, accountId: string): Promise<PartnerPayoutAccount | null> {
    const doc = await this.partnerPayoutAccounts.findOne({ programId, accountId }).lean<PartnerPayoutAccount & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async listPartnerPayoutAccounts(programId: number, partnerIds: readonly number[]): Promise<PartnerPayoutAccount[]> {
    if (!partnerIds.length) return [];
    const docs = await this.partnerPayoutAccounts
      .find({ programId, partnerId: { $in: [...partnerIds] } })
      .sort({ partnerId: 1 })
      .lean<(PartnerPayoutAccount & { _id: unknown })[]>();
    return docs.map(strip);
  }

  async updatePartnerPayoutAccountState(
    programId: number,
    accountId: string,
    state: Pick<PartnerPayoutAccount, "ready" | "detailsSubmitted">,
    reportedAt: Date,
  ): Promise<PartnerPayoutAccount | null> {
    const updated = await this.partnerPayoutAccounts
      .findOneAndUpdate(
        { programId, accountId, updatedAt: { $lte: reportedAt } },
        { $set: { ready: state.ready, detailsSubmitted: state.detailsSubmitted, updatedAt: reportedAt } },
        { returnDocument: "after" },
      )
      .lean<PartnerPayoutAccount & { _id: unknown }>();
    return updated ? strip(updated) : this.findPartnerPayoutAccount(programId, accountId);
  }

  async recordPayoutTransfer(t: PayoutTransfer): Promise<void> {
    await this.payoutTransfers.updateOne({ programId: t.programId, payoutId: t.payoutId }, { $setOnInsert: t }, { upsert: true }).catch((err) => {
      // Like SQL's ON CONFLICT DO NOTHING: a payout's (or a transfer's) first record stays.
      if (!isDuplicateKeyError(err)) throw err;
    });
  }

  async findPayoutTransfer(programId: number, transferId: string): Promise<PayoutTransfer | null> {
    const doc = await this.payoutTransfers.findOne({ programId, transferId }).lean<PayoutTransfer & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async setPaypalCredentials(programId: number, credentials: Pick<PaypalCredentials, "clientId" | "clientSecret" | "mode"> | null, now: Date): Promise<void> {
    if (credentials === null) {
      await this.paypalCredentials.deleteOne({ programId });
      return;
    }
    const set = { clientId: credentials.clientId, clientSecret: credentials.clientSecret, mode: credentials.mode, setAt: now, failedAt: null, failure: null };
    await this.paypalCredentials.updateOne({ programId }, { $set: set }, { upsert: true }).catch((err) => {
      // Two first sets at once: the other upsert won; set ours over it like a later write would.
      if (!isDuplicateKeyError(err)) throw err;
      return this.paypalCredentials.updateOne({ programId }, { $set: set });
    });
  }

  async getPaypalCredentials(programId: number): Promise<PaypalCredentials | null> {
    const doc = await this.paypalCredentials.findOne({ programId }).lean<PaypalCredentials & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async markPaypalCredentialsFailed(programId: number, credentials: Pick<PaypalCredentials, "clientId" | "clientSecret">, failure: string, now: Date): Promise<void> {
    await this.paypalCredentials.updateOne(
      { programId, clientId: credentials.clientId, clientSecret: credentials.clientSecret },
      { $set: { failedAt: now, failure: failure.slice(0, 500) } },
    );
  }

  async recordPaypalBatch(b: PaypalBatch): Promise<PaypalBatch> {
    // Like SQL's ON CONFLICT DO NOTHING: the run's first batch stays, and is what the caller gets back.
    await this.paypalBatches.updateOne({ programId: b.programId, runId: b.runId }, { $setOnInsert: b }, { upsert: true }).catch((err) => {
      if (!isDuplicateKeyError(err)) throw err;
    });
    return (await this.getPaypalBatch(b.programId, b.runId))!;
  }

  async getPaypalBatch(programId: number, runId: number): Promise<PaypalBatch | null> {
    const doc = await this.paypalBatches.findOne({ programId, runId }).lean<PaypalBatch & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async setPaddleConnection(programId: number, change: PaddleConnectionChange, now: Date): Promise<PaddleConnection> {
    const set: Partial<PaddleConnection> = {};
    if (change.environment) set.environment = change.environment;
    if (change.secretKey !== undefined) Object.assign(set, { secretKey: change.secretKey, secretSetAt: change.secretKey === null ? null : now });
    if (change.apiKey !== undefined) Object.assign(set, { apiKey: change.apiKey, apiKeySetAt: change.apiKey === null ? null : now, apiKeyFailedAt: null, apiKeyFailure: null });
    // A new connection is live unless the change says otherwise (the SQL adapter's COALESCE).
    // (MongoDB before 5.0 refuses an empty operator: each is given only when it sets something.)
    const update = { ...(Object.keys(set).length ? { $set: set } : {}), ...(change.environment ? {} : { $setOnInsert: { environment: "live" } }) };
    const apply = () => this.paddleConnections.findOneAndUpdate({ programId }, update, { upsert: true, new: true }).lean<PaddleConnection & { _id: unknown }>();
    // Two first changes at once: the other upsert won; apply ours over it like a later write would.
    const doc = await apply().catch((err) => {
      if (!isDuplicateKeyError(err)) throw err;
      return apply();
    });
    return strip(doc!);
  }

  async getPaddleConnection(programId: number): Promise<PaddleConnection | null> {
    const doc = await this.paddleConnections.findOne({ programId }).lean<PaddleConnection & { _id: unknown }>();
    return doc ? strip(doc) : null;
  }

  async markPaddleApiKeyFailed(programId: number, apiKey: string, failure: string, now: Date): Promise<void> {
    await this.paddleConnections.updateOne({ programId, apiKey }, { $set: { apiKeyFailedAt: now, apiKeyFailure: failure.slice(0, 500) } });
  }
}
