/** shared/pagination.ts: the cursor format, the list parameters, and the keyset conditions of both adapters. */
import { z } from "zod";
import { checkRange, decodeCursor, encodeCursor, mongoPageFilter, PAGE_FIELDS, pageOf, parseCursor, RANGE_FIELDS, SqlConditions } from "../../shared/pagination";
import { parseInput } from "../../shared/validation";

const ListInput = z.strictObject({ ...RANGE_FIELDS, ...PAGE_FIELDS }).superRefine(checkRange);

describe("cursors", () => {
  it("round-trip a position, microseconds included", () => {
    for (const position of [
      { createdAt: "2026-01-01T10:00:00.000Z", id: 7 },
      { createdAt: "2026-03-04T05:06:07.123456Z", id: 2_147_483_647 },
      { createdAt: "2026-03-04T05:06:07Z", id: 1 },
    ]) {
      const cursor = encodeCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor)).toEqual(position);
    }
  });

  it("refuse what we did not make: other alphabets, layouts, dates, ids, non-canonical encodings", () => {
    const enc = (text: string) => Buffer.from(text).toString("base64url");
    const good = encodeCursor({ createdAt: "2026-01-01T10:00:00.000Z", id: 7 });
    for (const bad of [
      "",
      "not a cursor",
      good + "=",
      good.slice(0, -1),
      `${good}A`,
      Buffer.from("2026-01-01T10:00:00.000Z|7").toString("base64"),
      enc("2026-01-01T10:00:00.000Z|0"),
      enc("2026-01-01T10:00:00.000Z|07"),
      enc("2026-01-01T10:00:00.000Z|2147483648"),
      enc("2026-01-01T10:00:00.000Z|-1"),
      enc("2026-01-01T10:00:00.000Z|7|8"),
      enc("2026-02-31T10:00:00.000Z|7"),
      enc("2026-01-01T25:00:00.000Z|7"),
      enc("2026-01-01 10:00:00|7"),
      enc("2026-01-01T10:00:00.000+01:00|7"),
      enc("2026-01-01T10:00:00.0000000Z|7"),
      enc("yesterday|7"),
      enc('{"createdAt":"2026-01-01T10:00:00.000Z","id":7}'),
      "A".repeat(400),
    ]) {
      expect({ bad, position: decodeCursor(bad) }).toEqual({ bad, position: null });
    }
    expect(() => parseCursor("nope!")).toThrow(expect.objectContaining({ type: "invalid_request", message: expect.stringMatching(/^Invalid 'cursor': /) }));
  });
});

describe("the list parameters", () => {
  it("default the limit to 25 and accept 1 to 100, as a number or canonical decimal text", () => {
    expect(parseInput(ListInput, {})).toEqual({ limit: 25 });
    expect(parseInput(ListInput, { limit: "100" }).limit).toBe(100);
    expect(parseInput(ListInput, { limit: 1 }).limit).toBe(1);
    for (const limit of [0, 101, "0", "101", "01", "1.5", 2.5, "ten", -1, "1e2"]) {
      expect(() => parseInput(ListInput, { limit })).toThrow(expect.objectContaining({ type: "invalid_request", message: expect.stringMatching(/^Invalid 'limit': /) }));
    }
  });

  it("decode the cursor, or refuse it naming the field", () => {
    const cursor = encodeCursor({ createdAt: "2026-01-01T10:00:00.000Z", id: 7 });
    expect(parseInput(ListInput, { cursor }).cursor).toEqual({ createdAt: "2026-01-01T10:00:00.000Z", id: 7 });
    expect(() => parseInput(ListInput, { cursor: "x" + cursor })).toThrow(
      expect.objectContaining({ message: "Invalid 'cursor': is not a cursor of this list: pass the nextCursor of the previous page unchanged" }),
    );
  });

  it("read from and to as ISO dates or date-times, from before to", () => {
    expect(parseInput(ListInput, { from: "2026-01-01", to: "2026-01-02T12:00:00+02:00" })).toMatchObject({
      from: new Date("2026-01-01T00:00:00Z"),
      to: new Date("2026-01-02T10:00:00Z"),
    });
    for (const from of ["yesterday", "2026-13-01", "01/02/2026", "2026-01-01T10:00:00", 1767225600000]) {
      expect(() => parseInput(ListInput, { from })).toThrow(expect.objectContaining({ message: expect.stringMatching(/^Invalid 'from': must be an ISO 8601 date/) }));
    }
    expect(() => parseInput(ListInput, { from: "2026-01-02", to: "2026-01-01" })).toThrow(expect.objectContaining({ message: "Invalid 'to': must be later than 'from'" }));
    expect(() => parseInput(ListInput, { after: "2026-01-01" })).toThrow(expect.objectContaining({ message: "Invalid 'after': is not a field of this request" }));
  });
});

describe("pageOf", () => {
  const rows = [5, 4, 3].map((id) => ({ id, at: `2026-01-01T00:00:0${id}.000Z` }));
  const position = (r: { id: number; at: string }) => ({ createdAt: r.at, id: r.id });

  it("keeps limit rows and points the cursor at the last kept row when one more was read", () => {
    const page = pageOf(rows, 2, position, (r) => r.id);
    expect(page.data).toEqual([5, 4]);
    expect(decodeCursor(page.nextCursor!)).toEqual({ createdAt: "2026-01-01T00:00:04.000Z", id: 4 });
  });

  it("ends with a null cursor when no row is left", () => {
    expect(pageOf(rows, 3, position, (r) => r.id)).toEqual({ data: [5, 4, 3], nextCursor: null });
    expect(pageOf([], 3, position, (r) => r)).toEqual({ data: [], nextCursor: null });
  });
});

describe("keyset conditions", () => {
  const cursor = { createdAt: "2026-01-01T10:00:00.123456Z", id: 7 };

  it("SQL: only the filters given, numbered in order, then the row comparison, the order and limit + 1", () => {
    const q = new SqlConditions()
      .add("program_id = ?", 1)
      .add("partner_id = ?", 3)
      .page({ limit: 25, cursor, from: new Date("2026-01-01T00:00:00Z") })
      .query("*", "commissions", 25);
    expect(q.text).toBe(
      "SELECT *, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') AS cursor_at FROM commissions" +
        " WHERE program_id = $1 AND partner_id = $2 AND created_at >= $3 AND (created_at, id) < ($4::timestamptz, $5) ORDER BY created_at DESC, id DESC LIMIT $6",
    );
    expect(q.values).toEqual([1, 3, new Date("2026-01-01T00:00:00Z"), cursor.createdAt, 7, 26]);
  });

  it("MongoDB: the range, then 'older, or as old with a lower id'", () => {
    const from = new Date("2026-01-01T00:00:00Z");
    const to = new Date("2026-02-01T00:00:00Z");
    expect(mongoPageFilter({ limit: 25 })).toEqual([]);
    expect(mongoPageFilter({ limit: 25, from, to, cursor })).toEqual([
      { createdAt: { $gte: from, $lt: to } },
      { $or: [{ createdAt: { $lt: new Date(cursor.createdAt) } }, { createdAt: new Date(cursor.createdAt), _id: { $lt: 7 } }] },
    ]);
  });
});
