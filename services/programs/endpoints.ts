/** The programs service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
import * as S from "./schemas";

const programExample = {
  id: 1,
  workspaceId: 1,
  name: "Acme",
  currency: "usd",
  commissionRule: { type: "percentage", basisPoints: 2000 },
  holdDays: 30,
  paymentTrackingMode: "s2s",
  testMode: false,
};

export const PROGRAMS = declareActions("programs", {
  create: {
    input: S.CreateProgramInput,
    http: {
      method: "POST",
      path: "/api/admin/programs",
      route: "admin",
      tag: "Operator",
      summary: "Create a program",
      description: "A program has a currency, a commission rule, a hold period and a way sales arrive (the processor's webhooks or your server). Create an API key and partners for it next.",
      example: { workspaceId: 1, name: "Acme", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30, paymentTrackingMode: "s2s" },
      errors: ["not_found"],
      response: { description: "The program.", example: programExample },
    },
  },
  get: {
    input: S.ProgramIdInput,
    http: {
      method: "GET",
      path: "/api/admin/programs/:programId",
      route: "admin",
      tag: "Operator",
      summary: "A program",
      description: "The program's settings and its processor connection.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: { description: "The program.", example: programExample },
    },
  },
  list: {
    input: S.ListProgramsInput,
    http: {
      method: "GET",
      path: "/api/admin/programs",
      route: "admin",
      tag: "Operator",
      summary: "Programs",
      description: "Every program, or one workspace's, with their settings. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.",
      example: { workspaceId: 1, limit: 50 },
      response: { description: "A page of programs.", example: { data: [programExample], nextCursor: null } },
    },
  },
  listForWorkspace: {
    input: S.ListWorkspaceProgramsInput,
    http: {
      method: "GET",
      path: "/api/workspaces/:workspaceId/programs",
      route: "workspace-notifications",
      tag: "Dashboard",
      summary: "The workspace's programs",
      description:
        "The programs of the workspace, with their settings. Newest first. Pass nextCursor as cursor for the next page; it is null on the last page. For members of the workspace whose role grants programs:read.",
      example: { workspaceId: 1 },
      response: { description: "A page of programs.", example: { data: [programExample], nextCursor: null } },
    },
  },
  createApiKey: {
    input: S.ProgramIdInput,
    http: {
      method: "POST",
      path: "/api/admin/programs/:programId/api-keys",
      route: "admin",
      tag: "Operator",
      summary: "Create an API key",
      description: "The key authenticates your server's tracking calls for the program. The whole key is in this answer only: it is stored as a hash.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: { description: "The key with its secret.", example: { id: 2, programId: 1, prefix: "svc_sk_0123456789abcdef", apiKey: "svc_sk_0123456789abcdef_..." } },
    },
  },
  retireApiKey: {
    input: S.KeyIdInput,
    http: {
      method: "POST",
      path: "/api/admin/api-keys/:keyId/retire",
      route: "admin",
      tag: "Operator",
      summary: "Retire an API key",
      description: "From now on the key is refused with 401 api_key_retired. Retiring it again changes nothing.",
      example: { keyId: 2 },
      errors: ["not_found"],
      response: { description: "The retired key.", example: { id: 2, programId: 1, retiredAt: "2026-01-01T00:00:00.000Z" } },
    },
  },
  createPartner: {
    input: S.CreatePartnerInput,
    http: {
      method: "POST",
      path: "/api/admin/programs/:programId/partners",
      route: "admin",
      tag: "Operator",
      summary: "Create a partner",
      description: "The partner is enrolled in the program, approved, with a referral code that is unique in the program (409 when taken).",
      example: { programId: 1, name: "Jane", email: "jane@example.com", referralCode: "jane" },
      errors: ["not_found", "conflict"],
      response: {
        description: "The partner and its enrollment.",
        example: { partner: { id: 3, name: "Jane" }, enrollment: { partnerId: 3, programId: 1, status: "approved", referralCode: "jane" } },
      },
    },
  },
  updateProcessorConnection: {
    input: S.UpdateProcessorConnectionInput,
    http: {
      method: "PUT",
      path: "/api/admin/programs/:programId/processor",
      route: "admin",
      tag: "Operator",
      summary: "Set a program's processor connection",
      description:
        "Changes the fields given. The connection date (connectedAt, the status endpoint's connectionDate) is set by the first update that leaves the connection connected: to connectedAt when given, else now. Later updates keep it, also across a disconnect and reconnect of the same account; linking another accountId starts a new connection and a new date. The processor's account.updated events follow the same rule.",
      example: { programId: 1, connectionStatus: "connected", accountId: "acct_123", chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true },
      errors: ["not_found", "conflict"],
      response: { description: "The program.", example: programExample },
    },
  },
  findByProcessorAccount: {
    input: S.ProcessorAccountInput,
  },
  findReferral: {
    input: S.FindReferralInput,
  },
  getEnrollment: {
    input: S.EnrollmentInput,
  },
  getPartner: {
    input: S.PartnerIdInput,
  },
  hasApprovedPartners: {
    input: S.ProgramIdInput,
  },
  enrollPartner: {
    input: S.EnrollPartnerInput,
    http: {
      method: "POST",
      path: "/api/admin/programs/:programId/enrollments",
      route: "admin",
      tag: "Operator",
      summary: "Enroll an existing partner in a program",
      description:
        "The same partner (one partner portal sign-in) in one more program, with a referral code unique in that program (generated when omitted). 404 when the program or partner does not exist, 409 when the partner is already enrolled or the code is taken.",
      example: { programId: 2, partnerId: 3, referralCode: "jane-2" },
      errors: ["not_found", "conflict"],
      response: { description: "The enrollment.", example: { id: 4, partnerId: 3, programId: 2, status: "approved", referralCode: "jane-2" } },
    },
  },
  findPartnerForSignIn: {
    input: S.PartnerEmailInput,
  },
  getPartnerEnrollments: {
    input: S.PartnerIdInput,
  },
});
