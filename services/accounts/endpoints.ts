/** The accounts service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions, programApiRoute } from "../../shared/endpoint";
import * as S from "./schemas";

const memberExample = { userId: 5, name: "Dev", email: "dev@acme.test", role: "developer", joinedAt: "2026-01-01T00:00:00.000Z" };
const invitationExample = {
  id: 8,
  workspaceId: 1,
  email: "dev@acme.test",
  role: "viewer",
  status: "pending",
  invitedBy: 5,
  createdAt: "2026-01-01T00:00:00.000Z",
  expiresAt: "2026-01-08T00:00:00.000Z",
};
const INVITE_TEXT =
  "Mails a one-time link to the email: whoever opens it joins the workspace with the role once they accept, before it expires (7 days unless the operator set another lifetime). Inviting an email again replaces its open invitation (the earlier link stops working; replaced is true). 409 conflict when the email belongs to a member already.";

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
      description:
        "Roles: owner, admin, developer, viewer and billing. Granting a role to a member changes their role; the last owner of a workspace cannot be given another role (409 conflict). To bring in someone by email, invite them instead.",
      example: { workspaceId: 1, userId: 5, role: "developer" },
      errors: ["not_found", "conflict"],
      response: { description: "The membership.", example: { workspaceId: 1, userId: 5, role: "developer" } },
    },
  },
  // The team (docs/dashboard-api.md, "Team"): each operation on the dashboard's route (a session whose role grants
  // the permission in the workspace) and, where an operator needs it, on the operator's.
  listMembers: {
    input: S.TeamListInput,
    http: [
      {
        method: "GET",
        path: "/api/workspaces/:workspaceId/members",
        route: "workspace-notifications",
        tag: "Dashboard",
        summary: "The workspace's members",
        description: "Every member with their user id, name, email, role and when they joined, oldest first. For members of the workspace whose role grants programs:read (every role).",
        example: { workspaceId: 1 },
        errors: ["forbidden", "not_found"],
        response: { description: "The members.", example: { data: [memberExample] } },
      },
      {
        method: "GET",
        path: "/api/admin/workspaces/:workspaceId/members",
        route: "admin",
        tag: "Operator",
        summary: "A workspace's members",
        description: "Every member with their user id, name, email, role and when they joined, oldest first. 404 when the workspace does not exist.",
        example: { workspaceId: 1 },
        errors: ["not_found"],
        response: { description: "The members.", example: { data: [memberExample] } },
      },
    ],
  },
  changeRole: {
    input: S.ChangeRoleInput,
    http: {
      method: "PATCH",
      path: "/api/workspaces/:workspaceId/members/:userId",
      route: "workspace-notifications",
      permission: "members:write",
      tag: "Dashboard",
      summary: "Change a member's role",
      description:
        "Sets the member's role; it applies to their very next request. The last owner of a workspace cannot be given another role (409 conflict): make another member owner first. 404 when the user is not a member. For members whose role grants members:write (owners).",
      example: { workspaceId: 1, userId: 5, role: "admin" },
      errors: ["forbidden", "not_found", "conflict"],
      response: { description: "The membership.", example: { workspaceId: 1, userId: 5, role: "admin", createdAt: "2026-01-01T00:00:00.000Z" } },
    },
  },
  removeMember: {
    input: S.RemoveMemberInput,
    http: [
      {
        method: "DELETE",
        path: "/api/workspaces/:workspaceId/members/:userId",
        route: "workspace-notifications",
        permission: "members:write",
        tag: "Dashboard",
        summary: "Remove a member",
        description:
          "Takes the user out of the workspace: their signed-in sessions lose access to it on their very next request. The user account stays (and any other workspace of theirs). The last owner cannot be removed (409 conflict). 404 when the user is not a member. For members whose role grants members:write (owners).",
        example: { workspaceId: 1, userId: 5 },
        errors: ["forbidden", "not_found", "conflict"],
        response: { description: "The membership that was removed.", example: { removed: true, workspaceId: 1, userId: 5, role: "viewer" } },
      },
      {
        method: "DELETE",
        path: "/api/admin/workspaces/:workspaceId/members/:userId",
        route: "admin",
        tag: "Operator",
        summary: "Remove a member from a workspace",
        description:
          "Takes the user out of the workspace: their signed-in sessions lose access to it on their very next request. The user account stays. The last owner cannot be removed (409 conflict). 404 when the user is not a member.",
        example: { workspaceId: 1, userId: 5 },
        errors: ["not_found", "conflict"],
        response: { description: "The membership that was removed.", example: { removed: true, workspaceId: 1, userId: 5, role: "viewer" } },
      },
    ],
  },
  listInvitations: {
    input: S.TeamListInput,
    http: [
      {
        method: "GET",
        path: "/api/workspaces/:workspaceId/invitations",
        route: "workspace-notifications",
        permission: "members:write",
        tag: "Dashboard",
        summary: "The workspace's open invitations",
        description:
          "Invitations neither accepted nor withdrawn, newest first, with their status: pending, or expired (invite the email again to send a new one). Never the link. For members whose role grants members:write (owners).",
        example: { workspaceId: 1 },
        errors: ["forbidden", "not_found"],
        response: { description: "The open invitations.", example: { data: [invitationExample] } },
      },
      {
        method: "GET",
        path: "/api/admin/workspaces/:workspaceId/invitations",
        route: "admin",
        tag: "Operator",
        summary: "A workspace's open invitations",
        description: "Invitations neither accepted nor withdrawn, newest first, with their status: pending or expired. Never the link. 404 when the workspace does not exist.",
        example: { workspaceId: 1 },
        errors: ["not_found"],
        response: { description: "The open invitations.", example: { data: [invitationExample] } },
      },
    ],
  },
  createInvitation: {
    input: S.CreateInvitationInput,
    http: [
      {
        method: "POST",
        path: "/api/workspaces/:workspaceId/invitations",
        route: "workspace-notifications",
        permission: "members:write",
        tag: "Dashboard",
        summary: "Invite someone by email",
        description: `${INVITE_TEXT} For members whose role grants members:write (owners).`,
        example: { workspaceId: 1, email: "dev@acme.test", role: "viewer" },
        errors: ["forbidden", "not_found", "conflict"],
        response: { description: "The invitation (without its link), mailed.", example: { ...invitationExample, replaced: false } },
      },
      {
        method: "POST",
        path: "/api/admin/workspaces/:workspaceId/invitations",
        route: "admin",
        tag: "Operator",
        summary: "Invite someone to a workspace by email",
        description: `${INVITE_TEXT} 404 when the workspace does not exist. Use it to invite a new workspace's first owner.`,
        example: { workspaceId: 1, email: "owner@acme.test", role: "owner" },
        errors: ["not_found", "conflict"],
        response: { description: "The invitation (without its link), mailed.", example: { ...invitationExample, email: "owner@acme.test", role: "owner", invitedBy: null, replaced: false } },
      },
    ],
  },
  revokeInvitation: {
    input: S.RevokeInvitationInput,
    http: [
      {
        method: "DELETE",
        path: "/api/workspaces/:workspaceId/invitations/:invitationId",
        route: "workspace-notifications",
        permission: "members:write",
        tag: "Dashboard",
        summary: "Withdraw an invitation",
        description:
          "Its link stops working at once (410 invitation_invalid). 404 when no open invitation of the workspace has this id (accepted or withdrawn already). For members whose role grants members:write (owners).",
        example: { workspaceId: 1, invitationId: 8 },
        errors: ["forbidden", "not_found"],
        response: { description: "The withdrawn invitation.", example: { ...invitationExample, status: "revoked" } },
      },
      {
        method: "DELETE",
        path: "/api/admin/workspaces/:workspaceId/invitations/:invitationId",
        route: "admin",
        tag: "Operator",
        summary: "Withdraw a workspace invitation",
        description: "Its link stops working at once (410 invitation_invalid). 404 when no open invitation of the workspace has this id (accepted or withdrawn already).",
        example: { workspaceId: 1, invitationId: 8 },
        errors: ["not_found"],
        response: { description: "The withdrawn invitation.", example: { ...invitationExample, status: "revoked" } },
      },
    ],
  },
  acceptInvitation: {
    input: S.AcceptInvitationInput,
    http: {
      method: "POST",
      path: "/api/auth/invitations/accept",
      route: "auth",
      auth: "none",
      tag: "Dashboard",
      summary: "Accept an invitation",
      description:
        "With the token of an invitation link, once, before it expires, the invited email joins the workspace with the invitation's role. When no account has that email yet, send name and password too: the account is created. When one exists, send the token alone (name or password are then refused with 400, nothing changes): the existing password stays. Either way, sign in next. A used, withdrawn, replaced, expired or unknown token is 410 invitation_invalid and changes nothing. Someone already a member keeps their role.",
      example: { token: "q3T0...43 characters", name: "Dev", password: "correct horse battery staple" },
      errors: ["invalid_request", "invitation_invalid", "conflict"],
      response: {
        description: "Joined; sign in next.",
        example: { workspaceId: 1, role: "viewer", user: { id: 6, email: "dev@acme.test", name: "Dev" }, accountCreated: true, alreadyMember: false },
      },
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
  createEmbedToken: {
    input: S.CreateEmbedTokenInput,
    http: programApiRoute({
      method: "POST",
      path: "/embed-tokens",
      scope: "embed:write",
      summary: "Create an embed token for one of your users",
      description:
        "For the embedded referrals page (an iframe in your own app): your server asks for a token for the signed-in user of your app, and puts it in the iframe's address. The user is the program's partner with this tenantId, else the one with this email; a user who is neither is enrolled now, approved, in groupId (default: the program's default group), so calling again (or from two requests at once) never makes a second partner. The token lasts 10 minutes and may be used several times in that time (a reload of your page); it opens only this partner's figures in this program. 422 partner_not_approved when the partner is pending or declined in the program (approve them first); 404 for a groupId that is not a live group of the program.",
      example: { tenantId: "user_8731", email: "jane@example.com", name: "Jane Doe" },
      errors: ["partner_not_approved", "conflict"],
      response: {
        description: "The token (shown once), its expiry, the partner and whether they were enrolled by this call.",
        example: {
          token: "svc_et_q3T0...",
          expiresAt: "2026-01-01T00:10:00.000Z",
          programId: 1,
          partnerId: 3,
          enrolled: true,
          embedUrl: "https://track.example.com/embed/programs/1/referrals#token=svc_et_q3T0...",
        },
      },
    }),
  },
  exchangeEmbedToken: {
    input: S.EmbedSessionRequest,
    http: {
      method: "POST",
      path: "/api/partner/auth/embed-session",
      route: "partner",
      auth: "none",
      tag: "Partner portal",
      summary: "Open an embedded session with an embed token",
      description:
        "The embedded referrals page sends the embed token it was given; the answer is a session for that one partner in that one program, in the body (not a cookie: browsers block cookies in third-party iframes). Send it as Authorization: Bearer <session> to the partner portal's read endpoints of that program; other programs answer 404, the profile and every change 403. 401 embed_token_expired when the token's 10 minutes are over, 401 embed_token_invalid when it was never issued: either way, reload the merchant's page for a new one.",
      example: { token: "svc_et_q3T0...43 characters" },
      errors: ["embed_token_invalid", "embed_token_expired"],
      response: {
        description: "The embedded session.",
        example: { session: "q3T0...43 characters", expiresAt: "2026-01-01T02:00:00.000Z", programId: 1, partnerId: 3 },
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
  notePartnerAddress: {
    input: S.NotePartnerAddressInput,
  },
  partnerAddressHashes: {
    input: S.PartnerAddressHashesInput,
  },
});
