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
  createPartnerSession(s: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<PartnerSession>;
  findPartnerSession(tokenHash: string): Promise<PartnerSession | null>;
  touchPartnerSession(id: number, now: Date): Promise<void>;
  deletePartnerSession(tokenHash: string): Promise<void>;
}
