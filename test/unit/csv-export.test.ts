/**
 * The export batches (shared/csv-export.ts): a keyset page per batch, fewer rows when they would not fit a bus
 * message, and every export filters exactly as its list (its input is the list's fields but the page size).
 */
import { z } from "zod";
import { parse } from "csv-parse/sync";
import { csvExample, csvLayout, csvLines, EXPORT_BATCH_BYTES, EXPORT_BATCH_ROWS, readExportBatch } from "../../shared/csv-export";
import { encodeCursor, type Page } from "../../shared/pagination";
import * as Commissions from "../../services/commissions/schemas";
import * as Programs from "../../services/programs/schemas";
import * as Sales from "../../services/sales/schemas";

type Item = { id: number; text: string | null; ok: boolean };
const LAYOUT = csvLayout<Item>({ id: (i) => i.id, text: (i) => i.text, ok: (i) => i.ok });

/** A list of `total` items, newest (highest id) first, read by keyset like a repository. */
function fakeList(total: number, text: (id: number) => string) {
  const reads: number[] = [];
  const read =
    (after: number | null) =>
    async (limit: number): Promise<Page<Item>> => {
      reads.push(limit);
      const ids = Array.from({ length: total }, (_, i) => total - i).filter((id) => after === null || id < after);
      const data = ids.slice(0, limit).map((id) => ({ id, text: text(id), ok: id % 2 === 0 }));
      const more = ids.length > limit;
      return { data, nextCursor: more ? encodeCursor({ createdAt: "2026-01-01T00:00:00.000Z", id: data[data.length - 1].id }) : null };
    };
  return { reads, read };
}

/** A batch's rows, parsed back from its text. */
const rowsOf = (lines: string) => parse(lines, { record_delimiter: "\r\n" }) as string[][];

describe("readExportBatch", () => {
  test("reads one page of the batch size, with the layout's columns, its rows as CSV lines", async () => {
    const list = fakeList(EXPORT_BATCH_ROWS + 5, (id) => `row ${id}`);
    const batch = await readExportBatch(LAYOUT, list.read(null));
    expect(list.reads).toEqual([EXPORT_BATCH_ROWS]);
    expect(batch.columns).toEqual(["id", "text", "ok"]);
    expect(rowsOf(batch.lines)).toHaveLength(EXPORT_BATCH_ROWS);
    expect(batch.lines.startsWith(`${EXPORT_BATCH_ROWS + 5},row ${EXPORT_BATCH_ROWS + 5},false\r\n`)).toBe(true);
    expect(batch.nextCursor).not.toBeNull();
    const last = await readExportBatch(LAYOUT, list.read(6));
    expect(rowsOf(last.lines).map((r) => r[0])).toEqual(["5", "4", "3", "2", "1"]);
    expect(last.nextCursor).toBeNull();
  });

  test("long texts: the same page is read again with fewer rows, so a batch fits a bus message", async () => {
    const list = fakeList(3000, () => "x".repeat(4000));
    const batch = await readExportBatch(LAYOUT, list.read(null));
    expect(list.reads.length).toBe(2);
    expect(list.reads[1]).toBeLessThan(list.reads[0]);
    expect(Buffer.byteLength(batch.lines)).toBeLessThanOrEqual(EXPORT_BATCH_BYTES);
    expect(rowsOf(batch.lines).length).toBe(list.reads[1]);
    expect(batch.nextCursor).not.toBeNull();
  });

  test("a single row larger than the budget still goes, alone", async () => {
    const list = fakeList(3, () => "y".repeat(EXPORT_BATCH_BYTES + 10));
    const batch = await readExportBatch(LAYOUT, list.read(null), 3);
    expect(rowsOf(batch.lines)).toHaveLength(1);
    expect(list.reads[list.reads.length - 1]).toBe(1);
  });

  test("cells as the file has them: empty for null, true/false, quotes doubled, formulas prefixed", () => {
    const lines = csvLines(LAYOUT, [
      { id: 1, text: null, ok: true },
      { id: -2, text: '-a, "b"\r\nc', ok: false },
    ]);
    expect(lines).toEqual(["1,,true\r\n", `-2,"'-a, ""b""\r\nc",false\r\n`]);
  });
});

test("csvExample shows the header and one row as the file has them", () => {
  expect(csvExample(LAYOUT, { id: 7, text: null, ok: true })).toBe("id,text,ok\r\n7,,true\r\n");
});

describe("every export takes its list's filters, and no page size", () => {
  const fields = (schema: z.ZodObject) => Object.keys(schema.shape).sort();
  test.each([
    ["sales", Sales.ListSalesInput, Sales.ExportSalesInput],
    ["commissions", Commissions.ListCommissionsInput, Commissions.ExportCommissionsInput],
    ["withdrawals", Commissions.ListWithdrawalsInput, Commissions.ExportWithdrawalsInput],
    ["partners", Programs.ListPartnersInput, Programs.ExportPartnersInput],
  ] as Array<[string, z.ZodObject, z.ZodObject]>)("%s", (_name, list, exported) => {
    expect(fields(exported)).toEqual(fields(list).filter((f) => f !== "limit"));
    expect(exported.safeParse({ programId: "1", limit: "5" }).success).toBe(false);
    expect(exported.safeParse({ programId: "1" }).success).toBe(true);
  });

  test("the range check of the list applies to its export", () => {
    const parsed = Sales.ExportSalesInput.safeParse({ programId: 1, from: "2026-02-01", to: "2026-01-01" });
    expect(parsed.success).toBe(false);
  });
});
