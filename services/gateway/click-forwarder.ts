import type { ServiceBroker } from "moleculer";
import { typedCall } from "../../shared/typed-call";
import type { AttributionContract } from "../attribution/contract";
import { fromForwardedError } from "../../shared/errors";
import type { CallerMeta } from "../../shared/meta";
import { MicroBatcher, type MicroBatcherOptions } from "../../shared/micro-batcher";

const call = typedCall<AttributionContract>();
type Forwarded = AttributionContract["attribution.trackClicks"]["result"][number];
type TrackedClick = Extract<Forwarded, { ok: true }>["click"];
type ForwardedClick = { click: unknown; caller: { programId?: number; origin?: string; userAgent?: string; address?: string } };

/**
 * Clicks are the busiest call of a tracking service, and in a split
 * deployment each one used to cross the bus on its own: a request and an
 * answer per click, which is most of the gateway's and attribution's CPU at
 * a few thousand clicks a second (docs/performance.md). The gateway sends
 * them in `attribution.trackClicks` calls, one at a time
 * (CLICK_FORWARD_IN_FLIGHT, default 1): a click arriving while a call is out
 * waits for it to come back and goes with every click that gathered
 * meanwhile (at most CLICK_FORWARD_MAX, default 100); an idle path sends at
 * once. CLICK_FORWARD_IN_FLIGHT=0 uses a time window of
 * CLICK_FORWARD_WAIT_MS (default 2 ms) instead. Each request is answered
 * with its own click's outcome (the same answer, or the same error, as a
 * call of its own).
 * The answer still waits for the click's commit in attribution, so an
 * answered click is stored.
 *
 * Only where the bus crosses processes (CLICK_FORWARDING=auto, the
 * default): in one process a call costs nothing to batch away. `on` and
 * `off` force it either way (the tests use `on` in one process).
 */
export function forwardsClicks(crossesProcesses: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const setting = env.CLICK_FORWARDING || "auto";
  if (setting === "auto") return crossesProcesses;
  if (setting === "on" || setting === "off") return setting === "on";
  throw new Error(`CLICK_FORWARDING must be auto, on or off (it is '${setting}').`);
}

export function clickForwardOptions(env: NodeJS.ProcessEnv = process.env): MicroBatcherOptions {
  // One call in flight: the next batch is what gathered meanwhile (0: a time window of CLICK_FORWARD_WAIT_MS instead).
  const inFlight = Number(env.CLICK_FORWARD_IN_FLIGHT ?? 1);
  return { maxSize: Number(env.CLICK_FORWARD_MAX ?? 100), maxWaitMs: Number(env.CLICK_FORWARD_WAIT_MS ?? 2), maxInFlight: inFlight > 0 ? inFlight : undefined };
}

export type ClickForwarder = MicroBatcher<ForwardedClick, Forwarded>;

export function createClickForwarder(broker: ServiceBroker, options = clickForwardOptions()): ClickForwarder {
  return new MicroBatcher((clicks) => call(broker, "attribution.trackClicks", { clicks }), options);
}

/** Forwards one click request (its params and what authentication put in its meta) and answers as trackClick would. */
export async function forwardClick(forwarder: ClickForwarder, params: unknown, meta: CallerMeta): Promise<TrackedClick> {
  const outcome = await forwarder.add({ click: params, caller: { programId: meta.programId, origin: meta.origin, userAgent: meta.userAgent, address: meta.address } });
  if (!outcome.ok) throw fromForwardedError(outcome.error);
  return outcome.click;
}
