import type { z } from "zod";
import type { Role } from "../../shared/domain/permissions";
import type { Jsonified } from "../../shared/dto";
import type { Membership, Workspace, WorkspaceMember } from "./repository";
import type * as S from "./schemas";

/** A user as other services see it (never the password hash). */
export interface PublicUser {
  id: number;
  email: string;
  name: string;
}

/** The signed-in dashboard user, as the gateway puts it in `ctx.meta.user`. */
export interface SessionUser extends PublicUser {
  sessionId: number;
}

/** The signed-in partner, as the gateway puts it in `ctx.meta.partner` on partner portal routes. */
export interface PartnerSessionUser {
  partnerId: number;
  sessionId: number;
  /** An embedded session's one program (docs/embedded-referrals.md); null for the portal's cookie session. */
  programId: number | null;
}

/** An invitation as its answers show it: never its token. `expired`: still open, past its expiry. */
export interface InvitationView {
  id: number;
  workspaceId: number;
  email: string;
  role: Role;
  status: "pending" | "expired" | "revoked";
  /** The member who invited; null for an operator. */
  invitedBy: number | null;
  createdAt: string;
  expiresAt: string;
}

/**
 * The accounts service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from services/bus.ts.
 */
export interface AccountsContract {
  "accounts.createWorkspace": { params: z.input<typeof S.CreateWorkspaceInput>; result: Jsonified<Workspace> };
  "accounts.getWorkspace": { params: z.input<typeof S.WorkspaceIdInput>; result: Jsonified<Workspace> };
  "accounts.createUser": { params: z.input<typeof S.CreateUserInput>; result: PublicUser };
  "accounts.grantRole": { params: z.input<typeof S.GrantRoleInput>; result: Jsonified<Membership> };
  /** The session token is in this answer only (the gateway moves it into a cookie). */
  "accounts.login": { params: z.input<typeof S.LoginRequest>; result: { user: PublicUser; session: { token: string; expiresAt: string; maxAgeSeconds: number } } };
  "accounts.logout": { params: z.input<typeof S.SessionTokenInput>; result: { success: true } };
  /** `validUntil`: the sooner of the session's expiry and its idle limit (a gateway remembers the answer no longer). */
  "accounts.authenticateSession": { params: z.input<typeof S.SessionTokenInput>; result: SessionUser & { validUntil: string } };
  /** The user comes from `ctx.meta.user` (set by the gateway), not from params. */
  "accounts.me": { params: Record<string, never>; result: { user: PublicUser; workspaces: { workspaceId: number; role: Role }[] } };
  /** Always the same answer, whether the email belongs to a partner or not. */
  "accounts.requestPartnerLink": { params: z.input<typeof S.PartnerLinkRequest>; result: { sent: true; message: string } };
  "accounts.createPartnerLink": { params: z.input<typeof S.CreatePartnerLinkInput>; result: { partnerId: number; url: string; expiresAt: string; sent: boolean } };
  /** The session token is in this answer only (the gateway moves it into the partner cookie). */
  "accounts.signInPartner": { params: z.input<typeof S.PartnerSignInRequest>; result: { partnerId: number; session: { token: string; expiresAt: string; maxAgeSeconds: number } } };
  /** The token is in this answer only (the merchant's server puts it in the embedded page's address). */
  "accounts.createEmbedToken": {
    params: z.input<typeof S.CreateEmbedTokenInput>;
    result: { token: string; expiresAt: string; programId: number; partnerId: number; enrolled: boolean; embedUrl: string };
  };
  /** The session token is in this answer only (the embedded page keeps it in memory and sends it as a Bearer header). */
  "accounts.exchangeEmbedToken": { params: z.input<typeof S.EmbedSessionRequest>; result: { session: string; expiresAt: string; programId: number; partnerId: number } };
  "accounts.signOutPartner": { params: z.input<typeof S.SessionTokenInput>; result: { success: true } };
  /** The partner's address of a portal visit, kept as its hash of the day (docs/fraud.md, partner_identity). */
  "accounts.notePartnerAddress": { params: z.input<typeof S.NotePartnerAddressInput>; result: null };
  /** The partner's address hashes of a UTC day. */
  "accounts.partnerAddressHashes": { params: z.input<typeof S.PartnerAddressHashesInput>; result: string[] };
  "accounts.authenticatePartnerSession": { params: z.input<typeof S.SessionTokenInput>; result: PartnerSessionUser & { validUntil: string } };
  "accounts.checkPermission": { params: z.input<typeof S.CheckPermissionInput>; result: { member: boolean; role: Role | null; allowed: boolean } };
  "accounts.listMembers": { params: z.input<typeof S.TeamListInput>; result: { data: Jsonified<WorkspaceMember>[] } };
  "accounts.changeRole": { params: z.input<typeof S.ChangeRoleInput>; result: Jsonified<Membership> };
  "accounts.removeMember": { params: z.input<typeof S.RemoveMemberInput>; result: { removed: true; workspaceId: number; userId: number; role: Role } };
  "accounts.listInvitations": { params: z.input<typeof S.TeamListInput>; result: { data: InvitationView[] } };
  /** The inviting member is `ctx.meta.user` on the dashboard's route (none for an operator). */
  "accounts.createInvitation": { params: z.input<typeof S.CreateInvitationInput>; result: InvitationView & { replaced: boolean } };
  "accounts.revokeInvitation": { params: z.input<typeof S.RevokeInvitationInput>; result: InvitationView };
  "accounts.acceptInvitation": {
    params: z.input<typeof S.AcceptInvitationInput>;
    result: { workspaceId: number; role: Role; user: PublicUser; accountCreated: boolean; alreadyMember: boolean };
  };
}

/**
 * What accounts broadcasts on the bus (docs/architecture.md, "Bus broadcasts"), for the caches of the gateways.
 * `sessionId: null` ends every session of the user (for a future password change or disabled user).
 */
export interface AccountsBroadcasts {
  "accounts.sessionEnded": { sessionId: number | null; userId: number };
  "accounts.partnerSessionEnded": { sessionId: number | null; partnerId: number };
  "accounts.membershipChanged": { workspaceId: number; userId: number };
}
