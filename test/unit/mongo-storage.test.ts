/**
 * The MongoDB adapter's pure decisions (shared/storage/mongo.ts), on the
 * driver's own error class and on `hello` replies as servers send them. The
 * adapter itself runs in the contract suites when MONGO_URL is set.
 */
import { MongoServerError } from "mongodb";
import { isDuplicateKeyError, transactionsUnsupportedReason } from "../../shared/storage/mongo";

const duplicate = (index: string, keyPattern?: Record<string, number>) =>
  new MongoServerError({
    message: `E11000 duplicate key error collection: affiliate.sales index: ${index} dup key: { ... }`,
    code: 11000,
    ...(keyPattern ? { keyPattern, keyValue: Object.fromEntries(Object.keys(keyPattern).map((k) => [k, 1])) } : {}),
  });

describe("isDuplicateKeyError", () => {
  test("a business key's duplicate is a duplicate: the record exists", () => {
    expect(isDuplicateKeyError(duplicate("programId_1_transactionId_1", { programId: 1, transactionId: 1 }))).toBe(true);
    expect(isDuplicateKeyError(duplicate("eventId_1_kind_1", { eventId: 1, kind: 1 }))).toBe(true);
  });

  test("a duplicate _id is not: the id counter went back, and the new record must not be dropped as 'already recorded'", () => {
    expect(isDuplicateKeyError(duplicate("_id_", { _id: 1 }))).toBe(false);
  });

  test("without keyPattern (older servers) the index named in the message decides", () => {
    expect(isDuplicateKeyError(duplicate("_id_"))).toBe(false);
    expect(isDuplicateKeyError(duplicate("programId_1_transactionId_1"))).toBe(true);
  });

  test("where _id is the business key (a processor event id), its duplicate is one", () => {
    expect(isDuplicateKeyError(duplicate("_id_", { _id: 1 }), { idIsBusinessKey: true })).toBe(true);
  });

  test("other errors are not duplicates", () => {
    expect(isDuplicateKeyError(new MongoServerError({ message: "write conflict", code: 112 }))).toBe(false);
    expect(isDuplicateKeyError(new Error("E11000 in a message only"))).toBe(false);
    expect(isDuplicateKeyError(null)).toBe(false);
  });
});

describe("transactionsUnsupportedReason", () => {
  test("a replica set member (primary or not) and a mongos router support transactions", () => {
    expect(transactionsUnsupportedReason({ isWritablePrimary: true, setName: "rs0", hosts: ["mongo:27017"] })).toBeNull();
    expect(transactionsUnsupportedReason({ isWritablePrimary: false, secondary: true, setName: "rs0" })).toBeNull();
    expect(transactionsUnsupportedReason({ isWritablePrimary: true, msg: "isdbgrid" })).toBeNull();
  });

  test("a standalone mongod is refused, saying how to fix it", () => {
    const reason = transactionsUnsupportedReason({ isWritablePrimary: true, maxWireVersion: 21 });
    expect(reason).toMatch(/standalone mongod/);
    expect(reason).toMatch(/replica set/);
    expect(reason).toMatch(/replicaSet=rs0/);
  });
});
