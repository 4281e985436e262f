import type { z } from "zod";
import type { Jsonified } from "../../shared/dto";
import type { ProcessorEvent } from "./repository";
import type * as S from "./schemas";

/**
 * The processor service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from services/bus.ts.
 */
export interface ProcessorContract {
  /** From the gateway: the raw body and its signature header. The answer is the webhook's JSON (received, handled, outcome). */
  "processor.handleWebhook": { params: z.input<typeof S.WebhookInput>; result: { received: true } & Record<string, unknown> };
  // Operators reach these through the gateway (JSON). The handlers return the stored records as they are,
  // so an in-process caller would see Date objects: convert with toDto before adding a bus caller.
  "processor.getEvent": { params: z.input<typeof S.GetEventInput>; result: Jsonified<ProcessorEvent> | null };
  "processor.listEvents": { params: z.input<typeof S.ListEventsInput>; result: Jsonified<ProcessorEvent>[] };
  /** The program's restricted Stripe key as the dashboard shows it: never the key, only its kind and last four characters. */
  "processor.getApiKey": { params: z.input<typeof S.ProgramIdInput>; result: ApiKeyState };
  "processor.setApiKey": { params: z.input<typeof S.SetApiKeyInput>; result: ApiKeyState };
  "processor.removeApiKey": { params: z.input<typeof S.ProgramIdInput>; result: ApiKeyState };
  /** From rewards: which of these product and price ids the program's Stripe account does not have. */
  "processor.checkProducts": { params: z.input<typeof S.CheckProductsInput>; result: { unknown: string[] } };
}

export interface ApiKeyState {
  programId: number;
  configured: boolean;
  /** e.g. `rk_live_…4f2A`. */
  keyHint: string | null;
  setAt: string | null;
  /** When a call with the key last failed because of the key (revoked, a permission missing), and what Stripe said. */
  failedAt: string | null;
  failure: string | null;
}
