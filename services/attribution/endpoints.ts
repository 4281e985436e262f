/** The attribution service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
import * as S from "./schemas";

export const ATTRIBUTION = declareActions("attribution", {
  trackClick: {
    input: S.TrackClickRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/click",
      route: "track-browser",
      auth: "none",
      tag: "Tracking",
      summary: "Track a referral click",
      description:
        "Called from the browser snippet (no secret, CORS open). When the program lists allowed origins, the request's Origin header must be one of them. Keep the returned click_id: the snippet stores it in the svc_click_id cookie.",
      example: { program_id: 1, referral_code: "jane", url: "https://shop.example/?via=jane", referrer: "https://blog.example/" },
      errors: ["forbidden", "not_found"],
      response: { description: "The click.", example: { success: true, click_id: "clk_3f9a6c1e2b7d4a50", id: 1, test: false } },
    },
  },
  trackLead: {
    input: S.TrackLeadRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/lead",
      route: "track-browser",
      tag: "Tracking",
      summary: "Track a signup (lead)",
      description:
        "From a merchant server with the program's API key, or from the browser without a key when program_id and a valid click_id of the program are sent. Leads are first-touch per customer key: the first lead of a customer keeps its partner.",
      example: { customer_key: "user-42", email: "jane@example.com", click_id: "clk_3f9a6c1e2b7d4a50" },
      errors: ["forbidden", "not_found"],
      response: {
        description:
          "The lead; created is false when the customer key was already known. reason is self_referral when the click's partner is the customer (same email or customer key, with the program's self-referral guard on): the lead is then recorded with attributed false. Otherwise null.",
        example: { success: true, lead_id: 1, customer_key: "user-42", created: true, attributed: true, partner_id: 3, reason: null, test: false },
      },
    },
  },
  resolve: {
    input: S.ResolveInput,
  },
  testEventStats: {
    input: S.TestEventStatsInput,
  },
  stats: {
    input: S.StatsInput,
  },
});
