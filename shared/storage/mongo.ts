import { Schema, type ClientSession, type Connection, type Model } from "mongoose";
import { indexRuleViolations, type IndexSpec } from "./mongo-index-rules";

/**
 * Integer ids on MongoDB (the spec's ids are integers): one counter document
 * per sequence, incremented atomically. Deliberately outside any transaction
 * so concurrent transactions do not conflict on the counter; a rolled-back
 * transaction leaves a gap, as a PostgreSQL sequence does.
 *
 * Written with a majority, journaled write concern, whatever the connection's
 * default: an increment acknowledged by the primary alone can be rolled back
 * by a failover, and the ids it handed out would be handed out again.
 */
export async function nextId(connection: Connection, sequence: string): Promise<number> {
  const counters = connection.collection<{ _id: string; seq: number }>("counters");
  const doc = await counters.findOneAndUpdate({ _id: sequence }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: "after", writeConcern: { w: "majority", journal: true } });
  return doc!.seq;
}

/** `n` consecutive ids of `sequence` in one counter step; returns the first. */
export async function nextIds(connection: Connection, sequence: string, n: number): Promise<number> {
  const counters = connection.collection<{ _id: string; seq: number }>("counters");
  const doc = await counters.findOneAndUpdate({ _id: sequence }, { $inc: { seq: n } }, { upsert: true, returnDocument: "after", writeConcern: { w: "majority", journal: true } });
  return doc!.seq - n + 1;
}

/** A record as its MongoDB document: the domain type, its integer `id` stored as `_id`. */
export type DocOf<T extends { id: number }> = Omit<T, "id"> & { _id: number };

/**
 * One multi-document transaction with the settings the money path needs.
 * The callback may run more than once (transient errors are retried), so it
 * must only touch the database through `session`, sequentially, and have no
 * side effects outside it.
 */
export function withTransaction<T>(connection: Connection, fn: (session: ClientSession) => Promise<T>): Promise<T> {
  return connection.transaction(fn, {
    readConcern: { level: "snapshot" },
    writeConcern: { w: "majority" },
  });
}

/**
 * A duplicate key on a business key (a unique index such as program and
 * transaction id): the thing is already recorded. A duplicate `_id` is not
 * that: where `_id` comes from `nextId`, it means the counter went back, and
 * reading it as "already recorded" would silently drop a new record; it stays
 * an error. `idIsBusinessKey` is for collections whose `_id` is itself the
 * business key (the processor's event id).
 */
export function isDuplicateKeyError(err: unknown, opts: { idIsBusinessKey?: boolean } = {}): boolean {
  const e = err as { code?: unknown; keyPattern?: Record<string, unknown>; message?: unknown } | null;
  if (e?.code !== 11000) return false;
  if (opts.idIsBusinessKey) return true;
  const fields = e.keyPattern ? Object.keys(e.keyPattern) : null;
  // Without keyPattern (older servers), the message names the index: "... index: _id_ dup key: ...".
  const onId = fields ? fields.length === 1 && fields[0] === "_id" : typeof e.message === "string" && / index: _id_ dup key/.test(e.message);
  return !onId;
}

/**
 * An insert whose duplicate business key means "already recorded" (ON
 * CONFLICT DO NOTHING RETURNING on SQL): null then, the inserted value
 * otherwise. Any other error, a duplicate `_id` included, is thrown.
 */
export async function insertOrNull<T>(insert: () => Promise<T>, opts: { idIsBusinessKey?: boolean } = {}): Promise<T | null> {
  try {
    return await insert();
  } catch (err) {
    if (isDuplicateKeyError(err, opts)) return null;
    throw err;
  }
}

/**
 * Why a MongoDB deployment cannot run this system, from its `hello` reply:
 * every money-moving write is a multi-document transaction, which needs a
 * replica set member (`setName`) or a mongos router (`msg: "isdbgrid"`).
 * Null when it can.
 */
export function transactionsUnsupportedReason(hello: { setName?: unknown; msg?: unknown; [field: string]: unknown }): string | null {
  if (typeof hello.setName === "string" && hello.setName) return null;
  if (hello.msg === "isdbgrid") return null;
  return (
    "DATABASE_URL points at a standalone mongod: this system writes money in multi-document transactions, which need a replica set. " +
    "Run mongod as a replica set (even of one member: mongod --replSet rs0, then rs.initiate() once; docker-compose.yml does this) and add ?replicaSet=rs0 to DATABASE_URL."
  );
}

/** Refuses a deployment without transactions at start, rather than failing on the first sale. */
export async function requireTransactionSupport(connection: Connection): Promise<void> {
  const hello = await connection.db!.admin().command({ hello: 1 });
  const reason = transactionsUnsupportedReason(hello);
  if (reason) throw new Error(reason);
}

/** What the index rules read of a schema. */
type IndexedSchema = { indexes(): unknown[]; get(key: "collection"): unknown };

/** Every collection schema defined in this process, by collection name (collectionSchema, registerCollectionSchema). */
const collectionSchemas = new Map<string, IndexedSchema>();

/**
 * A collection's schema, with the options every repository schema uses, and registered so that its indexes are
 * checked with the others (definedCollectionSchemas). Index and collection creation are not left to mongoose's
 * background `init()`: `prepareCollections` runs them before the repository is handed out, so a failure stops the
 * service start.
 */
export function collectionSchema<T>(collection: string, definition: ConstructorParameters<typeof Schema<T>>[0], options: { minimize?: boolean } = {}): Schema<T> {
  const schema = new Schema<T>(definition, { ...options, collection, versionKey: false, autoIndex: false, autoCreate: false });
  return registerCollectionSchema(schema);
}

/** Registers a schema built another way (a clone of a registered one) under its `collection` option. */
export function registerCollectionSchema<S extends IndexedSchema>(schema: S): S {
  const collection = schema.get("collection");
  if (typeof collection !== "string" || !collection) throw new Error("a collection schema needs its collection option");
  collectionSchemas.set(collection, schema);
  return schema;
}

/** The collection schemas the loaded modules defined, by collection name. */
export function definedCollectionSchemas(): ReadonlyMap<string, IndexedSchema> {
  return collectionSchemas;
}

/** Why MongoDB would refuse `schema`'s indexes (mongo-index-rules.ts); empty when it accepts them. */
export function schemaIndexViolations(schema: IndexedSchema): string[] {
  return indexRuleViolations(String(schema.get("collection")), schema.indexes() as IndexSpec[]);
}

/** The connection's model `name`, compiled once (services sharing a connection each build their repository). */
export function modelOn<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

/**
 * Creates the models' collections and schema indexes; idempotent, so every instance may run it at start. Refuses,
 * before touching the database, indexes MongoDB's rules forbid (mongo-index-rules.ts).
 */
export async function prepareCollections(models: ReadonlyArray<{ createCollection(): Promise<unknown>; createIndexes(): Promise<unknown>; schema: IndexedSchema }>): Promise<void> {
  const violations = models.flatMap((model) => schemaIndexViolations(model.schema));
  if (violations.length) throw new Error(`indexes MongoDB refuses:\n${violations.join("\n")}`);
  for (const model of models) {
    await model.createCollection();
    await model.createIndexes();
  }
}

/**
 * SQL's NOT NULL accepts "", mongoose's `required` refuses it: after this,
 * the schema's required strings refuse only null and missing values. (The
 * required validator calls the path's own `checkRequired`, so this stays
 * local to these schemas, unlike the global `Schema.Types.String.checkRequired`.)
 */
export function requiredStringsMayBeEmpty<T>(schema: Schema<T>): Schema<T> {
  schema.eachPath((_path, type) => {
    if (type.instance === "String") {
      (type as unknown as { checkRequired(v: unknown): boolean }).checkRequired = (v) => typeof v === "string";
    }
  });
  return schema;
}

/** The case-insensitive regular expression of "contains `text`": every character of it matches itself (SQL's ILIKE with `likeContains`). */
export function containsRegExp(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
}
