/**
 * CSV lines written by PostgreSQL (the exports of an SQL repository: docs/performance.md, "Exports"): the query of
 * an export batch selects each row as one CSV line, so the process moves text instead of parsing every column,
 * building a row and formatting its cells. The cells are exactly those csv-stringify writes with CSV_OPTIONS
 * (shared/csv-export.ts; test/http/exports.test.ts compares the files with the lists cell by cell): empty for
 * null, integers as they are, true/false, dates as ISO 8601 UTC with milliseconds, and text prefixed with ' when it
 * starts like a formula, quoted (quotes doubled) when it holds a quote, a comma or a line break.
 */
import type { CsvLayout } from "../csv-export";

/** How one column of the layout is written from the row: the SQL expression and its kind. */
export type SqlCsvCell = { text: string } | { integer: string } | { yesNo: string } | { date: string };

/** First characters csv-stringify's escape_formulas prefixes with ' (=, +, -, @, tab, CR and the full-width =, +, -, @). */
const FORMULA_STARTS = ["'='", "'+'", "'-'", "'@'", "chr(9)", "chr(13)", "chr(65309)", "chr(65291)", "chr(65293)", "chr(65312)"];

function textCell(expr: string): string {
  const v = `(${expr})`;
  const unformula = `CASE WHEN left(${v}, 1) IN (${FORMULA_STARTS.join(", ")}) THEN '''' || ${v} ELSE ${v} END`;
  const quoted = `strpos(${v}, '"') > 0 OR strpos(${v}, ',') > 0 OR strpos(${v}, chr(10)) > 0 OR strpos(${v}, chr(13)) > 0`;
  return `CASE WHEN ${v} IS NULL THEN '' WHEN ${quoted} THEN '"' || replace(${unformula}, '"', '""') || '"' ELSE ${unformula} END`;
}

function cell(c: SqlCsvCell): string {
  if ("text" in c) return textCell(c.text);
  if ("integer" in c) return `COALESCE((${c.integer})::text, '')`;
  if ("yesNo" in c) return `CASE WHEN (${c.yesNo}) IS NULL THEN '' WHEN (${c.yesNo}) THEN 'true' ELSE 'false' END`;
  return `COALESCE(to_char((${c.date}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '')`;
}

/**
 * The SQL expression of a row's CSV line (ending in CRLF) for `layout`: `cells` names each of its columns, in its
 * order (checked here, so the SQL cannot drift from the layout the other adapter writes with).
 */
export function csvLineSql<T>(layout: CsvLayout<T>, cells: Record<string, SqlCsvCell>): string {
  const columns = Object.keys(cells);
  if (columns.join(",") !== layout.columns.join(",")) throw new Error(`CSV columns in SQL (${columns.join(", ")}) differ from the layout's (${layout.columns.join(", ")}).`);
  return `${columns.map((c) => cell(cells[c])).join(" || ',' || ")} || chr(13) || chr(10)`;
}
