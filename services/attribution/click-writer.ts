import { MicroBatcher, type MicroBatcherOptions } from "../../shared/micro-batcher";
import type { AttributionRepository, Click, NewClick } from "./repository";

/**
 * The click path's batching (docs/architecture.md, "Click batching"), a group
 * commit: at most CLICK_BATCH_IN_FLIGHT (default 2) multi-row INSERTs run at
 * once; a click arriving while they do waits for one to finish and goes in
 * the next, with every click that gathered meanwhile (up to CLICK_BATCH_MAX,
 * default 100); on an idle path a click is inserted at once.
 * CLICK_BATCH_IN_FLIGHT=0 uses a time window instead: the clicks within
 * CLICK_BATCH_WAIT_MS (default 2 ms) of the first waiting one. Each request
 * is answered when its batch has committed. Shared by the
 * attribution service and the benchmark's floor (bench/bare.ts), so both do
 * the same database work.
 */
export function clickBatchOptions(env: NodeJS.ProcessEnv = process.env): MicroBatcherOptions {
  // Two inserts in flight: the next batch is what gathered meanwhile (0: a time window of CLICK_BATCH_WAIT_MS instead).
  const inFlight = Number(env.CLICK_BATCH_IN_FLIGHT ?? 2);
  return { maxSize: Number(env.CLICK_BATCH_MAX ?? 100), maxWaitMs: Number(env.CLICK_BATCH_WAIT_MS ?? 2), maxInFlight: inFlight > 0 ? inFlight : undefined };
}

export type ClickWriter = MicroBatcher<NewClick, Click>;

export function createClickWriter(repo: AttributionRepository, options = clickBatchOptions()): ClickWriter {
  return new MicroBatcher((clicks) => repo.createClicks(clicks), options);
}
