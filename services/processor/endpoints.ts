/** The processor service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions, programRoutes } from "../../shared/endpoint";
import * as S from "./schemas";

export const PROCESSOR = declareActions("processor", {
  listEvents: {
    input: S.ListEventsInput,
    http: {
      method: "GET",
      path: "/api/admin/processor/events",
      route: "admin",
      tag: "Operator",
      summary: "Processor webhook events, newest first",
      description:
        "Every event the processor sent for a connected account, with its status (processed, ignored, rejected, failed, processing) and outcome: why an event was ignored or rejected, which sale it touched.",
      example: { status: "rejected", limit: 20 },
      response: { description: "The events.", example: [{ eventId: "evt_1", type: "refund.created", status: "rejected", outcome: { reason: "rejected: Invalid 'amount'" } }] },
    },
  },
  getEvent: {
    input: S.GetEventInput,
    http: {
      method: "GET",
      path: "/api/admin/processor/events/:eventId",
      route: "admin",
      tag: "Operator",
      summary: "One processor webhook event and its outcome",
      description: "The event's state, attempts and outcome, or null when it was never received.",
      example: { eventId: "evt_1" },
      response: {
        description: "The event, or null when it was never received.",
        example: { eventId: "evt_1", type: "charge.refunded", status: "processed", attempts: 1, outcome: { transactionId: "cs_1" } },
      },
    },
  },
  getApiKey: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/processor/api-key",
      tag: "Processor",
      summary: "The program's restricted Stripe key",
      description:
        "Whether the program has a restricted Stripe key (used to read a checkout's line items for product rewards, and to check product and price ids), its last four characters, and the last time Stripe refused it.",
      example: { programId: 1 },
      response: {
        description: "The key's state; the key itself is never shown.",
        example: { programId: 1, configured: true, keyHint: "rk_live_…4f2A", setAt: "2026-01-01T10:00:00.000Z", failedAt: null, failure: null },
      },
    }),
  },
  setApiKey: {
    input: S.SetApiKeyInput,
    http: programRoutes({
      method: "PUT",
      path: "/:programId/processor/api-key",
      permission: "programs:write",
      tag: "Processor",
      summary: "Set the program's restricted Stripe key",
      description:
        "Stores a restricted key of the program's Stripe account after checking with Stripe that it can read Checkout Sessions, Products and Prices. A secret key (sk_) is refused. It replaces the previous key.",
      example: { programId: 1, restrictedKey: "rk_test_51Hx0aExampleKey" },
      errors: ["processor_key_refused"],
      response: { description: "The key's state.", example: { programId: 1, configured: true, keyHint: "rk_test_…eKey", setAt: "2026-01-01T10:00:00.000Z", failedAt: null, failure: null } },
    }),
  },
  removeApiKey: {
    input: S.ProgramIdInput,
    http: programRoutes({
      method: "DELETE",
      path: "/:programId/processor/api-key",
      permission: "programs:write",
      tag: "Processor",
      summary: "Remove the program's restricted Stripe key",
      description: "Forgets the key. Checkout sales are then recorded as one line of no product: only rewards for every product apply to them.",
      example: { programId: 1 },
      response: { description: "The key's state.", example: { programId: 1, configured: false, keyHint: null, setAt: null, failedAt: null, failure: null } },
    }),
  },
  checkProducts: { input: S.CheckProductsInput },
});
