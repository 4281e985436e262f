/**
 * Cursor pagination for every list of the API (docs/architecture.md, "Lists and pagination").
 *
 * Lists are newest first, sorted by (createdAt desc, id desc): ids break ties between rows written in the same
 * instant, so the order is total and stable. A page is `{ data, nextCursor }`; `nextCursor` is the position of the
 * page's last row, opaque to callers (base64url of "<createdAt ISO>|<id>"), and the next page is every row strictly
 * after it (keyset pagination: no OFFSET, so a page costs the same at any depth, and rows inserted meanwhile,
 * always newer, never shift a later page). The helpers here build the keyset condition for SQL and for MongoDB,
 * so every adapter pages the same way.
 */
import { z } from "zod";
import { InvalidRequestError } from "./errors";
import { fromDecimalText } from "./validation";

export const DEFAULT_PAGE_LIMIT = 25;
export const MAX_PAGE_LIMIT = 100;

/** Where a page ends: the last row's creation time (ISO 8601 UTC, up to microseconds: PostgreSQL keeps them) and id. */
export interface CursorPosition {
  createdAt: string;
  id: number;
}

/** One page of a list. `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_ID = 2_147_483_647;

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(`${position.createdAt}|${position.id}`, "utf8").toString("base64url");
}

/**
 * The position a cursor names, or null when it is not one we made: wrong alphabet, not our layout, an impossible
 * date or id, or a non-canonical encoding (so one position has exactly one cursor).
 */
export function decodeCursor(cursor: string): CursorPosition | null {
  if (cursor.length > 200 || !BASE64URL.test(cursor)) return null;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^([^|]+)\|([1-9][0-9]{0,9})$/.exec(text);
  if (!match) return null;
  const [, createdAt, idText] = match;
  const id = Number(idText);
  if (!ISO_UTC.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || id > MAX_ID) return null;
  // Date.parse accepts 2026-02-31; a real timestamp round-trips to the same calendar day and time.
  if (new Date(createdAt).toISOString().slice(0, 19) !== createdAt.slice(0, 19)) return null;
  const position = { createdAt, id };
  return encodeCursor(position) === cursor ? position : null;
}

export const CURSOR_MESSAGE = "is not a cursor of this list: pass the nextCursor of the previous page unchanged";

/** The `cursor` query parameter: decoded to its position, or 400 invalid_request naming `cursor`. */
export const Cursor = z
  .string()
  .transform((value, ctx) => {
    const position = decodeCursor(value);
    if (!position) {
      ctx.addIssue({ code: "custom", message: CURSOR_MESSAGE });
      return z.NEVER;
    }
    return position;
  })
  .meta({ description: "Where the page starts: the nextCursor of the previous page; omit it for the first page.", example: "MjAyNi0wMS0wMVQwMDowMDowMC4wMDBafDQy" });

/** The `limit` query parameter: 1 to 100 rows, 25 by default (JSON integer or canonical decimal text). */
export const Limit = z
  .preprocess(fromDecimalText, z.number({ error: "must be an integer from 1 to 100" }).int().min(1).max(MAX_PAGE_LIMIT))
  .default(DEFAULT_PAGE_LIMIT)
  .meta({ description: "At most this many rows (1 to 100; default 25).", example: 25 });

/** `from` and `to`: an ISO 8601 date or date-time (with an offset, or UTC); `from` is inclusive, `to` exclusive. */
export const DateBound = (description: string, example: string) =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: "must be an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z)" })
    .transform((v) => new Date(v))
    .meta({ description, example });

/** A yes/no filter of a list: a JSON boolean, or (query strings carry text) true, false, 1 or 0. */
export const BooleanFilter = z.union([z.boolean(), z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1")], {
  error: "must be true or false (or 1 or 0)",
});

/** The fields every list takes: spread into its strict object schema. */
export const PAGE_FIELDS = {
  limit: Limit,
  cursor: Cursor.optional(),
};

/** The fields of a creation-time range: spread into a list's schema, then check it with `checkRange`. */
export const RANGE_FIELDS = {
  from: DateBound("Only rows created at or after this time (ISO 8601 date or date-time).", "2026-01-01").optional(),
  to: DateBound("Only rows created before this time (ISO 8601 date or date-time; a date means its midnight UTC).", "2026-02-01").optional(),
};

/** A schema refinement: `from` must come before `to`. */
export function checkRange(value: { from?: Date; to?: Date }, ctx: z.RefinementCtx): void {
  if (value.from && value.to && value.from.getTime() >= value.to.getTime()) ctx.addIssue({ code: "custom", path: ["to"], message: "must be later than 'from'" });
}

/** What a list's repository method takes besides its own filters. */
export interface PageRequest {
  limit: number;
  cursor?: CursorPosition;
  from?: Date;
  to?: Date;
}

/**
 * Builds the page from rows read with `LIMIT limit + 1` in list order: the extra row only says whether a next page
 * exists (so the last page has a null cursor, never an empty page after it).
 */
export function pageOf<R, T>(rows: R[], limit: number, positionOf: (row: R) => CursorPosition, toItem: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return { data: kept.map(toItem), nextCursor: more ? encodeCursor(positionOf(kept[kept.length - 1])) : null };
}

/** Maps a page's items (for the DTOs of an action). */
export function mapPage<T, U>(page: Page<T>, f: (item: T) => U): Page<U> {
  return { data: page.data.map(f), nextCursor: page.nextCursor };
}

// ---- SQL (PostgreSQL and PGlite) ----

/** The select expression of a row's cursor time at full precision (PostgreSQL keeps microseconds; a JS Date does not). */
export const sqlCursorAt = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A list's SQL: a WHERE built from the conditions given, then the keyset order and limit. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * Collects a list query's conditions and parameters. Only the filters given become conditions (no "$1 IS NULL OR"),
 * so the planner sees plain equalities and ranges and picks the list's index.
 */
export class SqlConditions {
  readonly where: string[] = [];
  readonly values: unknown[] = [];

  /** Adds a condition; `?` placeholders are numbered in order. */
  add(condition: string, ...values: unknown[]): this {
    let sql = condition;
    for (const v of values) {
      this.values.push(v);
      sql = sql.replace("?", `$${this.values.length}`);
    }
    this.where.push(sql);
    return this;
  }

  /** Adds the range and keyset conditions of a page on (createdAtColumn desc, idColumn desc). */
  page(req: PageRequest, createdAtColumn = "created_at", idColumn = "id"): this {
    if (req.from) this.add(`${createdAtColumn} >= ?`, req.from);
    if (req.to) this.add(`${createdAtColumn} < ?`, req.to);
    // A row comparison: one range on the index (created_at, id), read backwards from the cursor.
    if (req.cursor) this.add(`(${createdAtColumn}, ${idColumn}) < (?::timestamptz, ?)`, req.cursor.createdAt, req.cursor.id);
    return this;
  }

  /** The full query: `select` and `from` as given, these conditions, newest first, one row more than the page. */
  query(select: string, from: string, limit: number, createdAtColumn = "created_at", idColumn = "id"): SqlQuery {
    this.values.push(limit + 1);
    const where = this.where.length ? ` WHERE ${this.where.join(" AND ")}` : "";
    return {
      text: `SELECT ${select}, ${sqlCursorAt(createdAtColumn)} AS cursor_at FROM ${from}${where} ORDER BY ${createdAtColumn} DESC, ${idColumn} DESC LIMIT $${this.values.length}`,
      values: this.values,
    };
  }
}

/** The columns `SqlConditions.query` adds to a list's row: name the row `SqlListed<XRow>` in the query. */
export interface SqlListedColumns {
  id: number;
  cursor_at: string;
}
export type SqlListed<Row> = Row & SqlListedColumns;

/** The position of a row read by `SqlConditions.query` (its `cursor_at` and id). */
export const sqlPosition = (row: SqlListedColumns): CursorPosition => ({ createdAt: String(row.cursor_at), id: Number(row.id) });

// ---- MongoDB ----

/**
 * The range and keyset conditions of a page on (createdAt desc, _id desc), to combine with a list's filters in
 * `$and`. MongoDB dates have millisecond precision, as its cursors do.
 */
export function mongoPageFilter(req: PageRequest): Record<string, unknown>[] {
  const conditions: Record<string, unknown>[] = [];
  if (req.from || req.to) conditions.push({ createdAt: { ...(req.from ? { $gte: req.from } : {}), ...(req.to ? { $lt: req.to } : {}) } });
  if (req.cursor) {
    const at = new Date(req.cursor.createdAt);
    conditions.push({ $or: [{ createdAt: { $lt: at } }, { createdAt: at, _id: { $lt: req.cursor.id } }] });
  }
  return conditions;
}

/** The sort every MongoDB list uses. */
export const MONGO_LIST_SORT = { createdAt: -1, _id: -1 } as const;

/** The position of a MongoDB document. */
export const mongoPosition = (doc: { createdAt: Date; _id: number }): CursorPosition => ({ createdAt: doc.createdAt.toISOString(), id: doc._id });

/** Throws the 400 a bad cursor gets where a cursor is decoded outside a schema (the CLI, the REPL). */
export function parseCursor(cursor: string): CursorPosition {
  const position = decodeCursor(cursor);
  if (!position) throw new InvalidRequestError(`Invalid 'cursor': ${CURSOR_MESSAGE}`);
  return position;
}
