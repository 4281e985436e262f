/** The accounts service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions } from "../../shared/endpoint";
import * as S from "./schemas";

export const ACCOUNTS = declareActions("accounts", {
  me: {
    http: {
      method: "GET",
      path: "/api/auth/me",
      route: "auth",
      tag: "Dashboard",
      summary: "The signed-in user and their workspaces",
      description: "The user of the session cookie, with each workspace they belong to and their role in it.",
      response: { description: "The user.", example: { user: { id: 5, email: "owner@example.com", name: "Owner" }, workspaces: [{ workspaceId: 1, role: "owner" }] } },
    },
  },
  createWorkspace: {
    input: S.CreateWorkspaceInput,
    http: {
      method: "POST",
      path: "/api/admin/workspaces",
      route: "admin",
      tag: "Operator",
      summary: "Create a workspace",
      description: "A workspace groups programs, dashboard users and webhook endpoints.",
      example: { name: "Acme Inc" },
      response: { description: "The workspace.", example: { id: 1, name: "Acme Inc" } },
    },
  },
  createUser: {
    input: S.CreateUserInput,
    http: {
      method: "POST",
      path: "/api/admin/users",
      route: "admin",
      tag: "Operator",
      summary: "Create a dashboard user",
      description: "The email must be unused (409 otherwise). Grant the user a role in a workspace next.",
      example: { email: "dev@acme.test", name: "Dev", password: "at least 12 chars" },
      errors: ["conflict"],
      response: { description: "The user.", example: { id: 5, email: "dev@acme.test", name: "Dev" } },
    },
  },
  grantRole: {
    input: S.GrantRoleInput,
    http: {
      method: "POST",
      path: "/api/admin/workspaces/:workspaceId/members",
      route: "admin",
      tag: "Operator",
      summary: "Grant a role in a workspace",
      description: "Roles: owner, admin, developer, viewer and billing. Granting a role to a member changes their role.",
      example: { workspaceId: 1, userId: 5, role: "developer" },
      errors: ["not_found"],
      response: { description: "The membership.", example: { workspaceId: 1, userId: 5, role: "developer" } },
    },
  },
  requestPartnerLink: {
    input: S.PartnerLinkRequest,
    http: {
      method: "POST",
      path: "/api/partner/auth/link",
      route: "partner",
      auth: "none",
      tag: "Partner portal",
      summary: "Ask for a sign-in link",
      description:
        "Mails a one-time sign-in link (valid 15 minutes) to the email when it belongs to a partner with an approved enrollment. The answer is the same whether or not it does, so it reveals no account. Throttled per email and per client address (429 with Retry-After), counting every request.",
      example: { email: "jane@example.com" },
      errors: ["rate_limit_exceeded"],
      response: { description: "Always the same.", example: { sent: true, message: "If this email belongs to a partner, a sign-in link is on its way. It works once, within 15 minutes." } },
    },
  },
  createPartnerLink: {
    input: S.CreatePartnerLinkInput,
    http: {
      method: "POST",
      path: "/api/admin/partners/:partnerId/sign-in-links",
      route: "admin",
      tag: "Operator",
      summary: "Create a partner sign-in link (invite)",
      description:
        "A one-time link that signs the partner in to the partner portal, for an invite: valid one day unless expiresInMinutes says otherwise (at most 7 days). With send, it is also mailed to the partner. 404 when the partner does not exist or has no approved enrollment.",
      example: { partnerId: 3, expiresInMinutes: 1440, send: false },
      errors: ["not_found"],
      response: {
        description: "The link (shown once).",
        example: { partnerId: 3, url: "https://track.example.com/portal/sign-in#token=...", expiresAt: "2026-01-02T00:00:00.000Z", sent: false },
      },
    },
  },
  signInPartner: {
    input: S.PartnerSignInRequest,
  },
  signOutPartner: {
    input: S.SessionTokenInput,
  },
  getWorkspace: {
    input: S.WorkspaceIdInput,
  },
  login: {
    input: S.LoginRequest,
  },
  logout: {
    input: S.SessionTokenInput,
  },
  checkPermission: {
    input: S.CheckPermissionInput,
  },
});
