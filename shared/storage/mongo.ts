import type { ClientSession, Connection } from "mongoose";

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
