/** The status service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
import * as S from "./schemas";

export const STATUS = declareActions("status", {
  forProgram: {
    input: S.ForProgramInput,
    http: {
      method: "GET",
      path: "/api/tracking/status/:programId",
      route: "tracking-status",
      tag: "Dashboard",
      summary: "Integration status of a program",
      description:
        "The integration checklist: page views (test clicks), referrals (test leads) and payments, each pending or complete, with counts and the latest test event. For a member of the program's workspace whose role grants tracking:read; API keys are refused.",
      example: { programId: 1 },
      errors: ["forbidden", "not_found"],
      response: {
        description: "The three integration steps with their state, test event counts and latest test event.",
        example: { programId: "1", steps: { pageview: { status: "complete" }, referrals: { status: "complete" }, payments: { status: "pending" } } },
      },
    },
  },
});
