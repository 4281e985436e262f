/** The attribution service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
import * as S from "./schemas";

const PAGING = "Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.";
const customerExample = {
  id: 5,
  programId: 1,
  customerKey: "user_42",
  email: "buyer@example.com",
  clickId: "clk_8Yq2",
  partnerId: 3,
  unattributedReason: null,
  isTest: false,
  timestamp: "2026-01-01T09:00:00.000Z",
  createdAt: "2026-01-01T09:00:00.000Z",
};

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
  // Bus only: the gateway's batch of clicks; each click is validated on its own in the handler.
  trackClicks: { input: S.TrackClicksInput },
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
          "The lead; created is false when the customer key was already known. reason is self_referral when the click's partner is the customer (same email or customer key, with the program's self-referral guard on): the lead is then recorded with attributed false. Otherwise null. commission_id is the lead reward's commission when the partner's group has a lead reward (leads from your server only, once per customer), else null.",
        example: { success: true, lead_id: 1, customer_key: "user-42", created: true, attributed: true, partner_id: 3, reason: null, test: false, commission_id: null },
      },
    },
  },
  listCustomers: {
    input: S.ListCustomersInput,
    http: [
      {
        method: "GET",
        path: "/api/programs/:programId/customers",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "The program's customers (leads)",
        description: `The customers recorded as leads for the program, with the partner who referred each (null when none), filtered by partner, test or live, and creation date. ${PAGING} For members of the program's workspace whose role grants programs:read.`,
        example: { programId: 1, partnerId: 3, limit: 25 },
        response: { description: "A page of customers.", example: { data: [customerExample], nextCursor: null } },
      },
      {
        method: "GET",
        path: "/api/admin/customers",
        route: "admin",
        tag: "Operator",
        summary: "A program's customers (leads)",
        description: `The customers recorded as leads for one program (programId is required), filtered by partner, test or live, and creation date. ${PAGING}`,
        example: { programId: 1 },
        errors: ["not_found"],
        response: { description: "A page of customers.", example: { data: [customerExample], nextCursor: null } },
      },
    ],
  },
  resolve: {
    input: S.ResolveInput,
  },
  testEvents: {
    input: S.TestEventsInput,
  },
  testEventStats: {
    input: S.TestEventStatsInput,
  },
  countPartnerClicks: {
    input: S.PartnerClicksInput,
  },
  stats: {
    input: S.StatsInput,
  },
});
