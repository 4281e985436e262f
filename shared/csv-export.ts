/**
 * CSV exports of the lists (docs/dashboard-api.md, "Exports (CSV)"; docs/architecture.md, "Lists and pagination").
 *
 * An export is pulled, a batch at a time: the list's owner answers one batch per call (`{ columns, lines,
 * nextCursor }`, the rows as CSV text), read by keyset from its own repository like a page of the list with the
 * same filters, only longer; the gateway asks for the next batch only once the client has taken the previous one,
 * and writes the text as it comes (services/gateway/csv-export.ts). So every row of the
 * filters is exported while at most two batches are in memory, a client that stops reading stops the reads, and
 * it works the same in one process and across NATS (Moleculer's stream responses have no flow control across a
 * transporter: a fast producer floods the receiving node and can starve its heartbeats).
 */
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { CURSOR_MESSAGE, decodeCursor, type Page } from "./pagination";

/** One cell: text, an integer (money in minor units), a yes/no, or empty (null). Dates are ISO 8601 UTC text, as the lists give them. */
export type CsvCell = string | number | boolean | null;
export type CsvRow = CsvCell[];

/** One batch of an export: the column names, the rows as CSV text (each ending in CRLF), and where the next batch starts (null: done). */
export interface ExportBatch {
  columns: readonly string[];
  lines: string;
  nextCursor: string | null;
}

/**
 * Rows per batch. Each batch is one bus call and one keyset read; its rows travel as CSV text (an SQL repository
 * formats them in the query: shared/storage/csv-sql.ts), so a batch is one string in memory whatever its rows.
 */
export const EXPORT_BATCH_ROWS = 1000;

/**
 * A batch's text stays under this many bytes (NATS refuses a message above its max_payload, 1 MB by default); a
 * batch of long texts is read again with fewer rows.
 */
export const EXPORT_BATCH_BYTES = 512 * 1024;

/**
 * How every file is written (csv-stringify's options): a header row, UTF-8 byte order mark (spreadsheets then read
 * UTF-8), CRLF, yes/no as true/false, and a text cell starting with = + - @ tab or CR (or their full-width forms)
 * prefixed with ' so a spreadsheet shows it instead of running it (numbers are left alone). csv-sql.ts writes the
 * same cells in SQL.
 */
export const CSV_OPTIONS = {
  record_delimiter: "windows",
  escape_formulas: true,
  cast: { boolean: (value: boolean) => (value ? "true" : "false") },
} as const;

/** The file's first bytes: the byte order mark and the header row. */
export const csvHeader = (columns: readonly string[]): string => `\uFEFF${stringify([[...columns]], CSV_OPTIONS)}`;

/**
 * Where an export starts: like the list's cursor (the same positions), but optional and described for exports.
 * The gateway passes each batch's nextCursor to get the next one.
 */
export const ExportCursor = z
  .string()
  .transform((value, ctx) => {
    const position = decodeCursor(value);
    if (!position) {
      ctx.addIssue({ code: "custom", message: CURSOR_MESSAGE });
      return z.NEVER;
    }
    return position;
  })
  .optional()
  .meta({
    description: "Optional: only the rows after this position (a nextCursor of the list with the same filters). Omit it to export every row.",
    example: "MjAyNi0wMS0wMVQwMDowMDowMC4wMDBafDQy",
  });

/**
 * An export's input fields: its list's fields (every filter, so the export always filters as the list does) but
 * the page size, with the export's cursor. Spread into a strict object, with the list's refinements.
 */
export function exportFields<T extends { limit: unknown; cursor: unknown }>(listShape: T): Omit<T, "limit" | "cursor"> & { cursor: typeof ExportCursor } {
  const { limit: _limit, cursor: _cursor, ...filters } = listShape;
  return { ...filters, cursor: ExportCursor };
}

/**
 * A date cell: ISO 8601 UTC. Layouts take the owner's rows as read (dates as Date, no DTO copy of each row: the
 * export's hot path) and the lists' JSON rows (dates as text: the examples of the reference) alike.
 */
export const csvDate = (d: Date | string | null): string | null => (d === null ? null : typeof d === "string" ? d : d.toISOString());

/** An export's columns and how a row of the list becomes its cells, in one place (`csvLayout`). */
export interface CsvLayout<T> {
  columns: readonly string[];
  row(item: T): CsvRow;
}

/** A layout from a map of column name to cell (the map's order is the columns' order). */
export function csvLayout<T>(cells: Record<string, (item: T) => CsvCell>): CsvLayout<T> {
  const entries = Object.entries(cells);
  return { columns: entries.map(([column]) => column), row: (item) => entries.map(([, cell]) => cell(item)) };
}

/**
 * Reads one batch of text: `read(limit)` is a keyset page of the list (the same filters and cursor each time) as
 * CSV lines. Normally one read of `maxRows` rows; when the text would exceed EXPORT_BATCH_BYTES (long texts), the
 * same page is read again with proportionally fewer rows (at least one).
 */
export async function readExportLines(columns: readonly string[], read: (limit: number) => Promise<Page<string>>, maxRows = EXPORT_BATCH_ROWS): Promise<ExportBatch> {
  let limit = maxRows;
  for (;;) {
    const page = await read(limit);
    const lines = page.data.join("");
    const bytes = Buffer.byteLength(lines);
    if (bytes <= EXPORT_BATCH_BYTES || limit === 1) return { columns, lines, nextCursor: page.nextCursor };
    limit = Math.max(1, Math.floor((page.data.length * EXPORT_BATCH_BYTES) / bytes / 1.25));
  }
}

/** Each item's CSV line (CRLF ended) as the layout writes it, csv-stringify formatting them together. */
export function csvLines<T>(layout: CsvLayout<T>, items: readonly T[]): string[] {
  return items.map((item) => stringify([layout.row(item)], CSV_OPTIONS));
}

/** Reads one batch of a list's items, written by `layout` (readExportLines, the rows formatted here). */
export function readExportBatch<T>(layout: CsvLayout<T>, read: (limit: number) => Promise<Page<T>>, maxRows = EXPORT_BATCH_ROWS): Promise<ExportBatch> {
  return readExportLines(
    layout.columns,
    async (limit) => {
      const page = await read(limit);
      return { data: csvLines(layout, page.data), nextCursor: page.nextCursor };
    },
    maxRows,
  );
}

/** An example of an export's file for the API reference: the header and one row, as the gateway writes them (without the byte order mark). */
export function csvExample<T>(layout: CsvLayout<T>, item: T): string {
  return `${layout.columns.join(",")}\r\n${csvLines(layout, [item])[0]}`;
}

/** What every export's reference says (its own text first: what a row is). */
export function exportDescription(rows: string): string {
  return (
    `${rows} Every row the list shows with the same filters, not only one page, as a CSV file: UTF-8 with a byte order mark, comma separated, a header row, lines ending in CRLF. ` +
    "Money columns (named ..._cents) are integers in minor units of the currency column; dates are ISO 8601 in UTC; yes/no columns are true or false; an empty cell is no value. " +
    "A text cell that starts with =, +, -, @, a tab or a carriage return gets a leading apostrophe, so a spreadsheet shows it as text instead of running it as a formula (numbers are left as they are). " +
    "The file is sent while it is read, newest row first: a download that fails part of the way ends with a broken connection, never with a file that looks complete."
  );
}
