/**
 * MongoDB's documented rules for a collection's indexes, checked before any index is created (prepareCollections)
 * and over every collection schema by test/unit/mongo-index-rules.test.ts: no MongoDB server runs on the machines
 * that test this project, so these rules are what stands between a schema and a server that refuses it.
 *
 * Sources (MongoDB 7 manual, the version docker-compose.mongo.yml runs):
 * - Partial indexes, "Restrictions": `_id` indexes cannot be partial; `partialFilterExpression` and `sparse` cannot be
 *   combined; the filter takes equality, `$exists: true`, `$gt`/`$gte`/`$lt`/`$lte`, `$type`, `$and`, `$or` and `$in`.
 * - Every collection has the `_id_` index on `{ _id: 1 }`: a second index with that key pattern is refused, and one
 *   on `{ _id: -1 }` only repeats it (a B-tree is walked both ways).
 * - Indexes of one collection with the same key pattern must differ in their partial filters (and then be named):
 *   otherwise the server answers IndexOptionsConflict or IndexKeySpecsConflict.
 * - Index names are unique per collection; the default name is the keys and directions joined by "_".
 * - A collection holds at most 64 indexes.
 */

/** One index as mongoose's `schema.indexes()` lists it: the key pattern and its options. */
export type IndexSpec = [keys: Record<string, unknown>, options: Record<string, unknown>];

const MAX_INDEXES = 64;
const COMPARISONS = new Set(["$eq", "$gt", "$gte", "$lt", "$lte", "$type", "$in"]);

/** The name MongoDB gives an index without one: `programId_1_createdAt_-1`. */
export function defaultIndexName(keys: Record<string, unknown>): string {
  return Object.entries(keys)
    .map(([field, direction]) => `${field}_${String(direction)}`)
    .join("_");
}

/** Why a partial filter expression is refused, or null when MongoDB accepts it. */
export function partialFilterProblem(filter: unknown): string | null {
  if (!isPlainObject(filter) || Object.keys(filter).length === 0) return "the partial filter must be a non-empty document";
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value) || value.length === 0) return `${key} takes a non-empty array`;
      for (const clause of value) {
        const problem = partialFilterProblem(clause);
        if (problem) return problem;
      }
    } else if (key.startsWith("$")) {
      return `${key} is not allowed at the top of a partial filter`;
    } else {
      const problem = fieldConditionProblem(key, value);
      if (problem) return problem;
    }
  }
  return null;
}

function fieldConditionProblem(field: string, condition: unknown): string | null {
  // `{ field: null }` matches missing fields too, which MongoDB's partial filters cannot express.
  if (condition === null || condition === undefined) return `${field}: null is not allowed (use $type or $exists: true)`;
  if (condition instanceof RegExp) return `${field}: a regular expression is not allowed`;
  if (!isPlainObject(condition) || !Object.keys(condition).some((k) => k.startsWith("$"))) return null;
  for (const [operator, operand] of Object.entries(condition)) {
    if (operator === "$exists") {
      if (operand !== true) return `${field}: only $exists: true is allowed`;
    } else if (!COMPARISONS.has(operator)) {
      return `${field}: ${operator} is not allowed (equality, $exists: true, $gt, $gte, $lt, $lte, $type, $in, $and, $or are)`;
    } else if (operand === null && operator !== "$type") {
      return `${field}: ${operator} null is not allowed`;
    }
  }
  return null;
}

/** Every rule `indexes` of `collection` break, as sentences naming the index; empty when MongoDB accepts them all. */
export function indexRuleViolations(collection: string, indexes: readonly IndexSpec[]): string[] {
  const problems: string[] = [];
  const byName = new Map<string, number>();
  const byPattern = new Map<string, IndexSpec[]>();
  if (indexes.length + 1 > MAX_INDEXES) problems.push(`${collection}: ${indexes.length + 1} indexes (with _id_), more than MongoDB's ${MAX_INDEXES}`);
  for (const spec of indexes) {
    const [keys, options] = spec;
    const name = typeof options.name === "string" ? options.name : defaultIndexName(keys);
    const label = `${collection}.${name}`;
    const fields = Object.keys(keys);
    const partial = options.partialFilterExpression;
    if (fields.length === 0) problems.push(`${label}: an index needs at least one key`);
    if (fields.length === 1 && fields[0] === "_id") {
      problems.push(`${label}: the built-in _id_ index already covers { _id }; a second, partial or sparse _id index is refused`);
    }
    if (name === "_id_") problems.push(`${label}: the name _id_ belongs to the built-in index`);
    if (partial !== undefined && options.sparse) problems.push(`${label}: partialFilterExpression and sparse cannot be combined`);
    if (partial !== undefined) {
      const problem = partialFilterProblem(partial);
      if (problem) problems.push(`${label}: ${problem}`);
    }
    byName.set(name, (byName.get(name) ?? 0) + 1);
    const pattern = JSON.stringify(Object.entries(keys));
    byPattern.set(pattern, [...(byPattern.get(pattern) ?? []), spec]);
  }
  for (const [name, count] of byName) if (count > 1) problems.push(`${collection}.${name}: ${count} indexes share this name`);
  for (const [pattern, specs] of byPattern) {
    if (specs.length < 2) continue;
    const filters = specs.map(([, options]) => options.partialFilterExpression);
    const distinctFilters = filters.every((f) => f !== undefined) && new Set(filters.map((f) => JSON.stringify(f))).size === filters.length;
    const named = specs.every(([, options]) => typeof options.name === "string");
    if (!distinctFilters || !named) {
      problems.push(`${collection}: ${specs.length} indexes on the key pattern ${pattern} must each be partial with a distinct filter and a name of their own`);
    }
  }
  return problems;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof RegExp);
}
