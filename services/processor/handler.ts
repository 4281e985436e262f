import type { Context, Service } from "moleculer";
import type Stripe from "stripe";
import type { ProgramsContract } from "../programs/contract";
import type { ProcessorRepository } from "./repository";

/**
 * What every billing platform's handlers get (Stripe's events, Paddle's notifications): the verified notification's
 * program, and the way to act. The processor-agnostic parts (payments.ts, record-sale.ts) need only this.
 */
export interface CoreHandlerContext {
  ctx: Context;
  repo: ProcessorRepository;
  /** The event's program: of the endpoint's path, or whose linked account the event names (JSON: dates are ISO strings). */
  program: NonNullable<ProgramsContract["programs.findByProcessorAccount"]["result"]>;
  /** When the platform created the notification (Unix seconds): a movement whose sale is unknown is retried for a while after. */
  eventCreatedSeconds: number;
  /** Sales from test-mode events are test sales (spec 2.3: no commission). */
  testMode: boolean;
  logger: Service["logger"];
  /** How long after its creation an event whose sale is unknown answers 503 (see payments.recordMovements). */
  unlinkedRetrySeconds: number;
}

/** What Stripe's event handlers get: the verified event besides. */
export interface HandlerContext extends CoreHandlerContext {
  event: Stripe.Event;
  /** The processor's API, for the calls made with the program's restricted key (processor/stripe-api.ts). */
  stripeApiUrl: string;
}

export interface HandlerResult {
  status: "processed" | "ignored";
  outcome: Record<string, unknown>;
}

export type EventHandler = (h: HandlerContext) => Promise<HandlerResult>;

export const processed = (outcome: Record<string, unknown> = {}): HandlerResult => ({ status: "processed", outcome });
export const ignored = (reason: string): HandlerResult => ({ status: "ignored", outcome: { reason } });

/** Thrown when an event cannot be processed yet (for example a refund before its sale): the processor retries it. */
export class RetryLaterError extends Error {}

/** Event times are Unix seconds. */
export const eventTime = (event: Stripe.Event) => new Date(event.created * 1000);
