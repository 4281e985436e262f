/**
 * The CSV export routes (docs/dashboard-api.md, "Exports (CSV)"): an endpoint declared with `response.contentType:
 * "text/csv"` is answered here instead of as JSON. The gateway pulls the owner's export action a batch at a time
 * (shared/csv-export.ts says why a pull, not a Moleculer stream) and writes the rows with csv-stringify's stream
 * API into the response, with backpressure: the next batch is read while the current one is written, and only
 * once the client has taken the one before (so at most two batches are in memory, whatever the client's speed).
 *
 * Errors before the first byte (a bad filter, an unknown program, no instance) are the usual JSON errors. A
 * failure once the file has started (a batch that fails: database or node lost) breaks the connection: the
 * chunked response never gets its last chunk, so every HTTP client reports an incomplete download instead of
 * saving a file that looks complete. A client that goes away stops the reads.
 */
import path from "node:path";
import { pipeline } from "node:stream";
import { stringify, type Stringifier } from "csv-stringify";
import type { Context } from "moleculer";
import type { ExportBatch } from "../../shared/csv-export";
import type { Res } from "./auth";
import { ENDPOINTS } from "./declarations";

/** The export actions, with the name of their file (the last segment of their path without .csv: sales, commissions, ...). */
export const CSV_EXPORTS: ReadonlyMap<string, string> = new Map(
  ENDPOINTS.flatMap((e) => (e.action && e.http.response.contentType === "text/csv" ? [[e.action, path.basename(e.http.path, ".csv")] as const] : [])),
);

/** The file's name: program-<id>-<what>-<UTC date>.csv (the id passed validation: plain decimal). */
export function exportFileName(what: string, programId: unknown, now = new Date()): string {
  const id = String(programId).replace(/[^0-9]/g, "");
  return `program-${id}-${what}-${now.toISOString().slice(0, 10)}.csv`;
}

/** The writer: header row, UTF-8 byte order mark (spreadsheets then read UTF-8), CRLF, formulas neutralised. */
function csvWriter(columns: readonly string[]): Stringifier {
  return stringify({
    header: true,
    columns: [...columns],
    bom: true,
    record_delimiter: "windows",
    // A text cell starting with = + - @ tab or CR (or their full-width forms) gets a leading ' (numbers are left alone).
    escape_formulas: true,
    cast: { boolean: (value) => (value ? "true" : "false") },
  });
}

/** Resolves once the writer takes more (or is gone). */
const drained = (writer: Stringifier) =>
  new Promise<void>((resolve) => {
    if (writer.destroyed) return resolve();
    const done = () => {
      writer.off("drain", done);
      writer.off("close", done);
      resolve();
    };
    writer.once("drain", done);
    writer.once("close", done);
  });

type Logger = { error(...args: unknown[]): void; debug(...args: unknown[]): void };

/**
 * Answers an export route. `first` is how the first batch is called (the endpoint moleculer-web already picked);
 * the next batches are called by action name (any instance: a batch is a keyset read, no state between calls).
 */
export async function sendCsvExport(ctx: Context, first: unknown, action: string, params: Record<string, unknown>, res: Res, logger: Logger): Promise<void> {
  const what = CSV_EXPORTS.get(action) ?? "export";
  const fetchBatch = (cursor: string | null) =>
    cursor === null ? ctx.call<ExportBatch, Record<string, unknown>>(first as string, params) : ctx.call<ExportBatch, Record<string, unknown>>(action, { ...params, cursor });

  // Before anything is sent: an error here is the usual JSON answer.
  let batch = await fetchBatch(null);
  res.writeHead(200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${exportFileName(what, params.programId)}"`,
    "Cache-Control": "no-store",
  });
  const writer = csvWriter(batch.columns);
  const finished = new Promise<Error | null>((resolve) => pipeline(writer, res, (err) => resolve(err ?? null)));
  let rows = 0;
  try {
    for (;;) {
      // The next batch is read while this one is written.
      const next = batch.nextCursor === null ? null : fetchBatch(batch.nextCursor);
      next?.catch(() => undefined); // awaited below; not an unhandled rejection if the client left meanwhile
      for (const row of batch.rows) {
        if (writer.destroyed) return; // the client went away: stop reading
        if (!writer.write(row)) await drained(writer);
        rows++;
      }
      if (!next) break;
      batch = await next;
    }
    writer.end();
    const err = await finished;
    if (err) logger.debug(`${what} export: the client left after ${rows} rows.`);
  } catch (err) {
    // The file has started: break the connection so that the download is incomplete, never a file that looks whole.
    logger.error(`${what} export failed after ${rows} rows: the connection is broken off.`, err);
    writer.destroy();
    res.destroy();
  }
}
