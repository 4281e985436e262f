import type { ClientSession, Connection, Model, Schema } from "mongoose";

/**
 * Integer ids on MongoDB (the spec's ids are integers): one counter document
 * per sequence, incremented atomically. Deliberately outside any transaction
 * so concurrent transactions do not conflict on the counter; a rolled-back
 * transaction leaves a gap, as a PostgreSQL sequence does.
 */
export async function nextId(connection: Connection, sequence: string): Promise<number> {
  const counters = connection.collection<{ _id: string; seq: number }>("counters");
  const doc = await counters.findOneAndUpdate(
    { _id: sequence },
    { $inc: { seq: 1 } },
    { upsert: true, returnDocument: "after" },
  );
  return doc!.seq;
}

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

export function isDuplicateKeyError(err: unknown): boolean {
  return (err as { code?: number } | null)?.code === 11000;
}

/**
 * Options every repository schema uses. Index and collection creation are
 * not left to mongoose's background `init()`: `prepareCollections` runs them
 * before the repository is handed out, so a failure stops the service start.
 */
export function schemaOptions(collection: string) {
  return { collection, versionKey: false, autoIndex: false, autoCreate: false } as const;
}

/** The connection's model `name`, compiled once (services sharing a connection each build their repository). */
export function modelOn<T>(connection: Connection, name: string, schema: Schema<T>): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
}

/** Creates the models' collections and schema indexes; idempotent, so every instance may run it at start. */
export async function prepareCollections(models: ReadonlyArray<Model<any>>): Promise<void> {
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
