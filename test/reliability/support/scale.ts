/**
 * The reliability suite's size knob and its figures.
 *
 * RELIABILITY_SCALE (default 1: the CI size) multiplies the number of runs,
 * operations, clients and faults of every reliability test; `npm run
 * reliability` sets it for the long mode. Each test prints one line of
 * figures (operations run, faults injected, violations); with
 * RELIABILITY_REPORT=<file> the figures are also appended to that file as
 * JSON lines, which the long-mode script turns into its summary.
 */
import fs from "node:fs";

export const SCALE = Math.max(0.1, Number(process.env.RELIABILITY_SCALE ?? 1) || 1);

/** `n` at scale 1, multiplied by the scale, at least `min`. */
export const scaled = (n: number, min = 1): number => Math.max(min, Math.round(n * SCALE));

/** A deadline (ms) that grows with the scale, for loops bounded by time as well as by count. */
export const scaledMs = (ms: number): number => Math.round(ms * Math.max(1, SCALE));

export interface Figures {
  operations: number;
  faults: number;
  violations: number;
  [extra: string]: number | string | boolean;
}

/** Prints the test's figures on one line (and appends them to RELIABILITY_REPORT when set). */
export function reportFigures(name: string, figures: Figures): void {
  const { operations, faults, violations, ...extra } = figures;
  const more = Object.entries(extra)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  console.log(`RELIABILITY ${name}: operations run=${operations}, faults injected=${faults}, violations: ${violations}${more ? ` (${more})` : ""} [scale ${SCALE}]`);
  const file = process.env.RELIABILITY_REPORT;
  if (file) fs.appendFileSync(file, `${JSON.stringify({ name, scale: SCALE, at: new Date().toISOString(), ...figures })}\n`);
}

/** Fails with a readable list when a reconcile report has violations. */
export function expectNoViolations(report: { ok: boolean; violations: unknown[] }, context: string): void {
  if (!report.ok) throw new Error(`Ledger invariants violated ${context}:\n${JSON.stringify(report.violations, null, 2)}`);
}
