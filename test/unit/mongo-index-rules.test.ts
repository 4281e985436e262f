/**
 * Every MongoDB collection schema's indexes against MongoDB's documented index rules (shared/storage/mongo-index-rules.ts).
 * No MongoDB server runs where these tests run, so this is what keeps a schema that a server would refuse from
 * reaching one: it loads every module that defines a collection schema and checks what each declares.
 */
import fs from "node:fs";
import path from "node:path";
import { Schema } from "mongoose";
import { definedCollectionSchemas, prepareCollections, schemaIndexViolations } from "../../shared/storage/mongo";
import { indexRuleViolations, partialFilterProblem, type IndexSpec } from "../../shared/storage/mongo-index-rules";
import { outboxSchema } from "../../shared/outbox/mongo";

const ROOT = path.resolve(__dirname, "../..");

/** The TypeScript files under services/ and shared/. */
function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) files.push(full);
    }
  };
  walk(path.join(ROOT, "services"));
  walk(path.join(ROOT, "shared"));
  return files;
}

/** The ones that define collection schemas (or outboxes, whose schemas are built at start). */
const schemaModules = () => sourceFiles().filter((file) => /collectionSchema|monthlySchema|MongoOutbox\.create/.test(fs.readFileSync(file, "utf8")));

describe("every collection schema", () => {
  const outboxNames = new Set<string>();

  beforeAll(async () => {
    for (const file of schemaModules()) {
      await import(file);
      // Outboxes get their schema when their repository starts: build the same ones here.
      for (const [, name] of fs.readFileSync(file, "utf8").matchAll(/MongoOutbox\.create\(\w+, "(\w+)"\)/g)) outboxNames.add(name);
    }
    for (const name of outboxNames) outboxSchema(name);
  });

  test("is found: the collections of every service and their outboxes", () => {
    const collections = [...definedCollectionSchemas().keys()];
    expect(collections.length).toBeGreaterThan(50);
    expect(collections).toEqual(
      expect.arrayContaining(["commissions", "payout_runs", "sales", "clicks", "programs", "notifications", "users", "outbox", "exchange_rate_tables", ...outboxNames]),
    );
  });

  test("declares only indexes MongoDB accepts", () => {
    const violations = [...definedCollectionSchemas().values()].flatMap((schema) => schemaIndexViolations(schema));
    expect(violations).toEqual([]);
  });

  test("declares every collection through collectionSchema (so none escapes this check)", () => {
    const definer = path.join(ROOT, "shared/storage/mongo.ts");
    const escaped = sourceFiles().filter((file) => file !== definer && /new Schema\b[^;]*\bcollection\s*:/.test(fs.readFileSync(file, "utf8")));
    expect(escaped).toEqual([]);
  });
});

describe("the index rules", () => {
  const check = (indexes: IndexSpec[]) => indexRuleViolations("runs", indexes);

  test("refuse the payout runs' old partial index on _id, and any second index on _id alone", () => {
    const old = check([[{ _id: 1 }, { name: "payout_runs_processing", partialFilterExpression: { status: "processing" } }]]);
    expect(old).toEqual([expect.stringContaining("runs.payout_runs_processing: the built-in _id_ index already covers { _id }")]);
    expect(check([[{ _id: -1 }, {}]])).toHaveLength(1);
    expect(
      check([
        [
          { status: 1, _id: 1 },
          { name: "payout_runs_processing", partialFilterExpression: { status: "processing" } },
        ],
      ]),
    ).toEqual([]);
  });

  test("refuse a partial filter combined with sparse, unique or not", () => {
    expect(check([[{ code: 1 }, { unique: true, sparse: true, partialFilterExpression: { code: { $type: "string" } } }]])).toEqual([
      "runs.code_1: partialFilterExpression and sparse cannot be combined",
    ]);
    expect(check([[{ code: 1 }, { unique: true, sparse: true }]])).toEqual([]);
  });

  test("accept in a partial filter only what MongoDB does", () => {
    for (const ok of [
      { status: "processing" },
      { status: { $eq: "open" } },
      { refundId: { $type: "string" } },
      { paidAt: { $exists: true } },
      { amount: { $gt: 0, $lte: 100 } },
      { status: { $in: ["open", "processing"] } },
      { $and: [{ a: 1 }, { $or: [{ b: 2 }, { c: { $gte: 3 } }] }] },
      { "processor.accountId": { $type: "string" } },
    ]) {
      expect({ ok, problem: partialFilterProblem(ok) }).toEqual({ ok, problem: null });
    }
    for (const refused of [
      {},
      { status: { $ne: "open" } },
      { status: { $nin: ["open"] } },
      { paidAt: { $exists: false } },
      { dispatchedAt: null },
      { name: /x/ },
      { status: { $not: { $eq: "open" } } },
      { $nor: [{ a: 1 }] },
      { $or: [] },
      { $and: [{ status: { $regex: "x" } }] },
    ]) {
      expect({ refused, problem: partialFilterProblem(refused) }).toEqual({ refused, problem: expect.any(String) });
    }
  });

  test("refuse two indexes on one key pattern unless each is partial, with its own filter and name", () => {
    expect(
      check([
        [{ p: 1 }, { unique: true }],
        [{ p: 1 }, {}],
      ]),
    ).toEqual(["runs.p_1: 2 indexes share this name", expect.stringContaining('2 indexes on the key pattern [["p",1]]')]);
    expect(
      check([
        [{ p: 1 }, { partialFilterExpression: { s: "a" } }],
        [{ p: 1 }, { partialFilterExpression: { s: "b" } }],
      ]),
    ).toHaveLength(2);
    expect(
      check([
        [{ p: 1 }, { name: "p_a", partialFilterExpression: { s: "a" } }],
        [{ p: 1 }, { name: "p_b", partialFilterExpression: { s: "b" } }],
      ]),
    ).toEqual([]);
    expect(
      check([
        [{ p: 1 }, { name: "p_a", partialFilterExpression: { s: "a" } }],
        [{ p: 1 }, { name: "p_b", partialFilterExpression: { s: "a" } }],
      ]),
    ).toHaveLength(1);
  });

  test("refuse two indexes with one name, the name _id_, and more than 64 indexes", () => {
    expect(
      check([
        [{ a: 1 }, { name: "x" }],
        [{ b: 1 }, { name: "x" }],
      ]),
    ).toEqual(["runs.x: 2 indexes share this name"]);
    expect(check([[{ a: 1 }, { name: "_id_" }]])).toEqual(["runs._id_: the name _id_ belongs to the built-in index"]);
    expect(check(Array.from({ length: 64 }, (_, i): IndexSpec => [{ [`f${i}`]: 1 }, {}]))).toEqual([expect.stringContaining("more than MongoDB's 64")]);
  });

  test("stop a service's start before any index is created", async () => {
    const schema = new Schema({ status: String }, { collection: "runs" });
    schema.index({ _id: 1 }, { partialFilterExpression: { status: "processing" } });
    let touched = false;
    const model = { schema, createCollection: async () => (touched = true), createIndexes: async () => (touched = true) };
    await expect(prepareCollections([model])).rejects.toThrow(/indexes MongoDB refuses:\nruns\._id_1: the built-in _id_ index/);
    expect(touched).toBe(false);
  });
});
