/**
 * The CSV export routes (docs/dashboard-api.md, "Exports (CSV)"): an endpoint declared with `response.contentType:
 * "text/csv"` is answered here instead of as JSON. The gateway pulls the owner's export action a batch at a time
 * (shared/csv-export.ts says why a pull, not a Moleculer stream; the owner writes the rows as CSV text) and writes
 * each batch's text into the response, with backpressure: the next batch is read while the current one is written,
 * and only once the client has taken the one before (so at most two batches are in memory, whatever the client's
 * speed).
 *
 * Errors before the first byte (a bad filter, an unknown program, no instance) are the usual JSON errors. A
 * failure once the file has started (a batch that fails: database or node lost) breaks the connection: the
 * chunked response never gets its last chunk, so every HTTP client reports an incomplete download instead of
 * saving a file that looks complete. A client that goes away stops the reads.
 */
import path from "node:path";
import type { Context } from "moleculer";
import { csvHeader, type ExportBatch } from "../../shared/csv-export";
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

/** Resolves once the response takes more (or is gone). */
const drained = (res: Res) =>
  new Promise<void>((resolve) => {
    if (res.destroyed) return resolve();
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
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
  let batches = 0;
  try {
    if (!res.write(csvHeader(batch.columns))) await drained(res);
    for (;;) {
      // The next batch is read while this one is written.
      const next = batch.nextCursor === null ? null : fetchBatch(batch.nextCursor);
      next?.catch(() => undefined); // awaited below; not an unhandled rejection if the client left meanwhile
      if (res.destroyed) return; // the client went away: stop reading
      if (!res.write(batch.lines)) await drained(res);
      batches++;
      if (!next) break;
      batch = await next;
    }
    res.end();
  } catch (err) {
    // The file has started: break the connection so that the download is incomplete, never a file that looks whole.
    logger.error(`${what} export failed after ${batches} batches: the connection is broken off.`, err);
    res.destroy();
  }
}
