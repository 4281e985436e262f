import type { Role } from "../../shared/domain/permissions";

export interface Workspace {
  id: number;
  name: string;
  createdAt: Date;
}

export interface User {
  id: number;
  email: string;
  name: string;
  passwordHash: string;
  createdAt: Date;
}

export interface Membership {
  workspaceId: number;
  userId: number;
  role: Role;
  createdAt: Date;
}

export interface Session {
  id: number;
  userId: number;
  /** SHA-256 of the cookie's random token; the token itself is never stored. */
  tokenHash: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

/**
 * An invitation to join a workspace with a role, sent by email. Only the
 * SHA-256 of its 256-bit token is stored. Open while neither accepted nor
 * revoked; usable while open and before `expiresAt`. A workspace has at most
 * one open invitation per email: inviting the email again revokes the open one.
 */
export interface Invitation {
  id: number;
  workspaceId: number;
  /** Lower case, as the Email schema gives it. */
  email: string;
  role: Role;
  tokenHash: string;
  /** The member who invited; null for an operator. */
  invitedBy: number | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  /** The user who joined with it. */
  acceptedBy: number | null;
  /** Revoked by a member or an operator, or replaced by a newer invitation of the same email. */
  revokedAt: Date | null;
}

/** A member of a workspace with the user's name and email, for the team list. */
export interface WorkspaceMember {
  userId: number;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
}

/** Changing or removing a membership: "not_member" and "last_owner" changed nothing. */
export type TeamChange<T> = { outcome: "done"; value: T } | { outcome: "not_member" } | { outcome: "last_owner" };

/**
 * Accepting an invitation. Only "accepted" changed anything: "unusable" (unknown, used, revoked or expired at
 * `now`), "needs_account" (no user has the email and no new user was given), "email_taken" (a new user was given
 * but the email has a user) changed nothing.
 */
export type AcceptOutcome =
  | { outcome: "accepted"; invitation: Invitation; user: User; membership: Membership; userCreated: boolean; alreadyMember: boolean }
  | { outcome: "unusable" }
  | { outcome: "needs_account" }
  | { outcome: "email_taken" };

/** A one-time partner sign-in link (magic link or operator invite): only the hash of its 256-bit token is stored. */
export interface PartnerSignInLink {
  id: number;
  /** The partner's id in the programs service. */
  partnerId: number;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
  /** Set when the link is opened; a used link never signs in again. */
  usedAt: Date | null;
}

/** A signed-in partner (the partner portal's cookie), with the same expiry rules as a dashboard session. */
export interface PartnerSession {
  id: number;
  partnerId: number;
  tokenHash: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  /**
   * An embedded session (docs/embedded-referrals.md): bound to this one program, opened with an embed token, sent as a
   * Bearer header by the embedded page; null for a portal session (the cookie), which sees every program of the partner.
   */
  programId: number | null;
}

/**
 * An embed token (docs/embedded-referrals.md): asked for by the merchant's server with an API key, for one partner of
 * one program; exchanged by the embedded page for an embedded session. Reusable until it expires (a reload of the page
 * within its lifetime works); only the SHA-256 of its 256-bit token is stored.
 */
export interface EmbedToken {
  id: number;
  partnerId: number;
  programId: number;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Storage contract of the accounts service: workspaces, dashboard users, memberships, sessions, login failures, partner sign-in links and sessions. */
export interface AccountsRepository {
  createWorkspace(name: string): Promise<Workspace>;
  getWorkspace(id: number): Promise<Workspace | null>;
  /** Returns null when the email is taken. */
  createUser(u: { email: string; name: string; passwordHash: string }): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  getUser(id: number): Promise<User | null>;
  /** Creates or changes the user's role in the workspace. */
  setMembership(m: { workspaceId: number; userId: number; role: Role }): Promise<Membership>;
  findMembership(workspaceId: number, userId: number): Promise<Membership | null>;
  listMemberships(userId: number): Promise<Membership[]>;
  /** Adds the user with the role; null (and nothing changed) when the user is a member already. */
  addMembership(m: { workspaceId: number; userId: number; role: Role }): Promise<Membership | null>;
  /**
   * The workspace's members with their users' names and emails, oldest first.
   */
  listWorkspaceMembers(workspaceId: number): Promise<WorkspaceMember[]>;
  /**
   * Changes a member's role, refusing to demote the workspace's last owner. Atomic against every other team change
   * of the workspace (SQL: the workspace row locked; MongoDB: a write to the workspace document in the transaction),
   * so two owners demoting each other at once leave one owner, never none.
   */
  changeRole(m: { workspaceId: number; userId: number; role: Role }): Promise<TeamChange<Membership>>;
  /** Removes a member, refusing to remove the workspace's last owner; atomic like changeRole. */
  removeMembership(workspaceId: number, userId: number): Promise<TeamChange<Membership>>;

  /**
   * Stores a new invitation, revoking (at `now`) the open invitation of the same email in the workspace, if any,
   * in one transaction serialised with the workspace's other team changes. "no_workspace" and "already_member" (the
   * email's user is a member of the workspace) changed nothing.
   */
  createInvitation(i: {
    workspaceId: number;
    email: string;
    role: Role;
    tokenHash: string;
    invitedBy: number | null;
    expiresAt: Date;
    now: Date;
  }): Promise<{ outcome: "created"; invitation: Invitation; replaced: boolean } | { outcome: "no_workspace" } | { outcome: "already_member" }>;
  findInvitationByToken(tokenHash: string): Promise<Invitation | null>;
  /** The workspace's open invitations (neither accepted nor revoked; expired ones included), newest first. */
  listOpenInvitations(workspaceId: number): Promise<Invitation[]>;
  /** Revokes an open invitation of the workspace (expired or not) at `now`; null when none is open with that id. */
  revokeInvitation(workspaceId: number, invitationId: number, now: Date): Promise<Invitation | null>;
  /**
   * Uses an invitation once, in one transaction: with `newUser`, creates the user with the invitation's email;
   * without, the email's existing user joins. The user becomes a member with the invitation's role (a user who is
   * a member already keeps their role: an invitation never demotes). Of concurrent acceptances of one token, one
   * gets "accepted" and the others "unusable".
   */
  acceptInvitation(a: { tokenHash: string; now: Date; newUser?: { name: string; passwordHash: string } }): Promise<AcceptOutcome>;
  createSession(s: { userId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<Session>;
  findSession(tokenHash: string): Promise<Session | null>;
  touchSession(id: number, now: Date): Promise<void>;
  deleteSession(tokenHash: string): Promise<void>;
  /**
   * Records a failed sign-in under each key, before the password is checked,
   * so attempts checked at the same time count each other. Returns the new
   * rows' ids (to forget them when the attempt is refused or succeeds).
   */
  recordLoginFailures(keys: string[], at: Date): Promise<string[]>;
  /** Per key: the failures since `since` but the rows in `exclude`, and the latest of them. */
  loginFailureStats(keys: string[], since: Date, exclude: string[]): Promise<Map<string, { failures: number; latestAt: Date | null }>>;
  forgetLoginFailures(ids: string[]): Promise<void>;
  clearLoginFailures(key: string): Promise<void>;

  createPartnerSignInLink(l: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<PartnerSignInLink>;
  /**
   * Marks the link used and returns it, only when it exists, is unused and has
   * not expired at `now`; null otherwise. Atomic: of two concurrent calls with
   * the same token, one gets the link.
   */
  consumePartnerSignInLink(tokenHash: string, now: Date): Promise<PartnerSignInLink | null>;
  /** `programId`: an embedded session bound to that program (default null: a portal session). */
  createPartnerSession(s: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date; programId?: number | null }): Promise<PartnerSession>;
  findPartnerSession(tokenHash: string): Promise<PartnerSession | null>;
  touchPartnerSession(id: number, now: Date): Promise<void>;
  deletePartnerSession(tokenHash: string): Promise<void>;
  /** Stores an embed token (its hash unique); tokens expired more than a day before `now` are removed meanwhile. */
  createEmbedToken(t: { partnerId: number; programId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<EmbedToken>;
  /** The token with this hash, expired or not (the caller tells an expired token from an unknown one); kept a day past its expiry. */
  findEmbedToken(tokenHash: string): Promise<EmbedToken | null>;
  /**
   * Notes that the partner used the portal from an address, as its hash of the UTC day `day` (YYYY-MM-DD): the fraud
   * rule partner_identity compares a conversion's address with the partner's own of the same day. Kept a week.
   */
  notePartnerAddress(partnerId: number, day: string, addressHash: string, now: Date): Promise<void>;
  /** The partner's address hashes of a UTC day (YYYY-MM-DD). */
  partnerAddressHashes(partnerId: number, day: string): Promise<string[]>;
}
