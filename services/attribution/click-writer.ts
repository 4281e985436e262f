import { MicroBatcher } from "../../shared/micro-batcher";
import type { AttributionRepository, Click, NewClick } from "./repository";

/**
 * The click path's batching (docs/architecture.md, "Click batching"): clicks
 * arriving within CLICK_BATCH_WAIT_MS (default 2 ms) of the first waiting one,
 * up to CLICK_BATCH_MAX (default 100), are stored by one multi-row INSERT;
 * each request is answered when its batch has committed. Shared by the
 * attribution service and the benchmark's floor (bench/bare.ts), so both do
 * the same database work.
 */
export function clickBatchOptions(env: NodeJS.ProcessEnv = process.env) {
  return { maxSize: Number(env.CLICK_BATCH_MAX ?? 100), maxWaitMs: Number(env.CLICK_BATCH_WAIT_MS ?? 2) };
}

export type ClickWriter = MicroBatcher<NewClick, Click>;

export function createClickWriter(repo: AttributionRepository, options = clickBatchOptions()): ClickWriter {
  return new MicroBatcher((clicks) => repo.createClicks(clicks), options);
}
