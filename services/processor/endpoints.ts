/** The processor service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
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
});
