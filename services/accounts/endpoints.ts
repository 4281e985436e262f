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
