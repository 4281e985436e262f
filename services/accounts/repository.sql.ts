import { isUniqueViolation } from "../../shared/storage/errors";
import type { Role } from "../../shared/domain/permissions";
import { camelRow, migrate, type SqlDatabase, type SqlExecutor } from "../../shared/storage/sql";
import type {
  AcceptOutcome,
  AccountsRepository,
  EmbedToken,
  Invitation,
  Membership,
  PartnerSession,
  PartnerSignInLink,
  Session,
  TeamChange,
  User,
  Workspace,
  WorkspaceMember,
} from "./repository";

const MIGRATIONS = [
  `CREATE TABLE workspaces (
     id SERIAL PRIMARY KEY,
     name TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now());
   CREATE TABLE users (
     id SERIAL PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     password_hash TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now());
   CREATE TABLE memberships (
     workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
     user_id INTEGER NOT NULL REFERENCES users(id),
     role TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     PRIMARY KEY (workspace_id, user_id));
   CREATE TABLE sessions (
     id SERIAL PRIMARY KEY,
     user_id INTEGER NOT NULL REFERENCES users(id),
     token_hash TEXT NOT NULL UNIQUE,
     created_at TIMESTAMPTZ NOT NULL,
     last_seen_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL);
   CREATE TABLE login_failures (
     id SERIAL PRIMARY KEY,
     key TEXT NOT NULL,
     at TIMESTAMPTZ NOT NULL);
   CREATE INDEX login_failures_key ON login_failures (key, at);`,
  // The partner portal: one-time sign-in links and partner sessions (partner ids belong to the programs service).
  `CREATE TABLE partner_sign_in_links (
     id SERIAL PRIMARY KEY,
     partner_id INTEGER NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL,
     used_at TIMESTAMPTZ);
   CREATE TABLE partner_sessions (
     id SERIAL PRIMARY KEY,
     partner_id INTEGER NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TIMESTAMPTZ NOT NULL,
     last_seen_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL);`,
  // The team: invitations to join a workspace by email (docs/dashboard-api.md, "Team"). At most one open invitation per
  // email and workspace (also the list's index); the token is only hashed.
  `CREATE TABLE workspace_invitations (
     id SERIAL PRIMARY KEY,
     workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
     email TEXT NOT NULL,
     role TEXT NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     invited_by INTEGER REFERENCES users(id),
     created_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL,
     accepted_at TIMESTAMPTZ,
     accepted_by INTEGER REFERENCES users(id),
     revoked_at TIMESTAMPTZ);
   CREATE UNIQUE INDEX workspace_invitations_open ON workspace_invitations (workspace_id, email) WHERE accepted_at IS NULL AND revoked_at IS NULL;`,
  // The partners' own addresses, as hashes of their day (docs/fraud.md, partner_identity), kept a week.
  `CREATE TABLE partner_address_days (
     partner_id INTEGER NOT NULL,
     day DATE NOT NULL,
     address_hash TEXT NOT NULL,
     PRIMARY KEY (partner_id, day, address_hash));`,
  // Embedded referrals (docs/embedded-referrals.md): embed tokens (only hashed; reusable until they expire, removed a
  // day later), and partner sessions bound to one program (null: the portal's cookie sessions).
  `CREATE TABLE partner_embed_tokens (
     id SERIAL PRIMARY KEY,
     partner_id INTEGER NOT NULL,
     program_id INTEGER NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     created_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX partner_embed_tokens_expiry ON partner_embed_tokens (expires_at);
   ALTER TABLE partner_sessions ADD COLUMN program_id INTEGER;`,
];

type Row = Record<string, unknown>;
const rowsOf = <T>(rows: Row[]) => rows.map((r) => camelRow<T>(r));

/**
 * The workspace row is the lock of its team: every change of its memberships' roles and of its invitations takes it
 * first (FOR NO KEY UPDATE: it does not block the foreign-key checks of inserts that name the workspace), so the
 * owner count a change reads cannot change before it commits. False when the workspace does not exist.
 */
async function lockTeam(tx: SqlExecutor, workspaceId: number): Promise<boolean> {
  return (await tx.query("SELECT id FROM workspaces WHERE id = $1 FOR NO KEY UPDATE", [workspaceId])).length > 0;
}

/** The member and how many other owners the workspace has, read under the team's lock; null when not a member. */
async function memberForChange(tx: SqlExecutor, workspaceId: number, userId: number): Promise<{ membership: Membership; otherOwners: number } | null> {
  if (!(await lockTeam(tx, workspaceId))) return null;
  const [row] = await tx.query("SELECT * FROM memberships WHERE workspace_id = $1 AND user_id = $2", [workspaceId, userId]);
  if (!row) return null;
  const [{ n }] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1 AND role = 'owner' AND user_id <> $2", [workspaceId, userId]);
  return { membership: camelRow<Membership>(row), otherOwners: n };
}

export class SqlAccountsRepository implements AccountsRepository {
  private constructor(private readonly db: SqlDatabase) {}

  static async create(db: SqlDatabase): Promise<SqlAccountsRepository> {
    await migrate(db, "accounts", MIGRATIONS);
    return new SqlAccountsRepository(db);
  }

  private async one<T>(sql: string, params: unknown[]): Promise<T | null> {
    const [row] = await this.db.query(sql, params);
    return row ? camelRow<T>(row) : null;
  }

  async createWorkspace(name: string): Promise<Workspace> {
    return (await this.one<Workspace>("INSERT INTO workspaces (name) VALUES ($1) RETURNING *", [name]))!;
  }

  getWorkspace(id: number): Promise<Workspace | null> {
    return this.one("SELECT * FROM workspaces WHERE id = $1", [id]);
  }

  async createUser(u: { email: string; name: string; passwordHash: string }): Promise<User | null> {
    try {
      return await this.one<User>("INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3) RETURNING *", [u.email, u.name, u.passwordHash]);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  findUserByEmail(email: string): Promise<User | null> {
    return this.one("SELECT * FROM users WHERE email = $1", [email]);
  }

  getUser(id: number): Promise<User | null> {
    return this.one("SELECT * FROM users WHERE id = $1", [id]);
  }

  async setMembership(m: { workspaceId: number; userId: number; role: string }): Promise<Membership> {
    return (await this.one<Membership>(
      `INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role RETURNING *`,
      [m.workspaceId, m.userId, m.role],
    ))!;
  }

  findMembership(workspaceId: number, userId: number): Promise<Membership | null> {
    return this.one("SELECT * FROM memberships WHERE workspace_id = $1 AND user_id = $2", [workspaceId, userId]);
  }

  async listMemberships(userId: number): Promise<Membership[]> {
    return (await this.db.query("SELECT * FROM memberships WHERE user_id = $1 ORDER BY workspace_id", [userId])).map((r) => camelRow<Membership>(r));
  }

  addMembership(m: { workspaceId: number; userId: number; role: Role }): Promise<Membership | null> {
    return this.one("INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (workspace_id, user_id) DO NOTHING RETURNING *", [
      m.workspaceId,
      m.userId,
      m.role,
    ]);
  }

  async listWorkspaceMembers(workspaceId: number): Promise<WorkspaceMember[]> {
    const rows = await this.db.query(
      `SELECT m.user_id, u.email, u.name, m.role, m.created_at AS joined_at FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.workspace_id = $1 ORDER BY m.created_at, m.user_id`,
      [workspaceId],
    );
    return rowsOf<WorkspaceMember>(rows);
  }

  changeRole(m: { workspaceId: number; userId: number; role: Role }): Promise<TeamChange<Membership>> {
    return this.db.transaction(async (tx): Promise<TeamChange<Membership>> => {
      const current = await memberForChange(tx, m.workspaceId, m.userId);
      if (!current) return { outcome: "not_member" };
      if (current.membership.role === "owner" && m.role !== "owner" && current.otherOwners === 0) return { outcome: "last_owner" };
      const [row] = await tx.query("UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND user_id = $2 RETURNING *", [m.workspaceId, m.userId, m.role]);
      return { outcome: "done", value: camelRow<Membership>(row) };
    });
  }

  removeMembership(workspaceId: number, userId: number): Promise<TeamChange<Membership>> {
    return this.db.transaction(async (tx): Promise<TeamChange<Membership>> => {
      const current = await memberForChange(tx, workspaceId, userId);
      if (!current) return { outcome: "not_member" };
      if (current.membership.role === "owner" && current.otherOwners === 0) return { outcome: "last_owner" };
      await tx.query("DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2", [workspaceId, userId]);
      return { outcome: "done", value: current.membership };
    });
  }

  createInvitation(i: { workspaceId: number; email: string; role: Role; tokenHash: string; invitedBy: number | null; expiresAt: Date; now: Date }) {
    type Created = Awaited<ReturnType<AccountsRepository["createInvitation"]>>;
    return this.db.transaction(async (tx): Promise<Created> => {
      if (!(await lockTeam(tx, i.workspaceId))) return { outcome: "no_workspace" };
      const member = await tx.query("SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND u.email = $2", [i.workspaceId, i.email]);
      if (member.length) return { outcome: "already_member" };
      const replaced = await tx.query("UPDATE workspace_invitations SET revoked_at = $3 WHERE workspace_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id", [
        i.workspaceId,
        i.email,
        i.now,
      ]);
      const [row] = await tx.query(
        `INSERT INTO workspace_invitations (workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [i.workspaceId, i.email, i.role, i.tokenHash, i.invitedBy, i.now, i.expiresAt],
      );
      return { outcome: "created", invitation: camelRow<Invitation>(row), replaced: replaced.length > 0 };
    });
  }

  findInvitationByToken(tokenHash: string): Promise<Invitation | null> {
    return this.one("SELECT * FROM workspace_invitations WHERE token_hash = $1", [tokenHash]);
  }

  async listOpenInvitations(workspaceId: number): Promise<Invitation[]> {
    const rows = await this.db.query("SELECT * FROM workspace_invitations WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL ORDER BY created_at DESC, id DESC", [
      workspaceId,
    ]);
    return rowsOf<Invitation>(rows);
  }

  revokeInvitation(workspaceId: number, invitationId: number, now: Date): Promise<Invitation | null> {
    return this.one("UPDATE workspace_invitations SET revoked_at = $3 WHERE id = $2 AND workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING *", [
      workspaceId,
      invitationId,
      now,
    ]);
  }

  async acceptInvitation(a: { tokenHash: string; now: Date; newUser?: { name: string; passwordHash: string } }): Promise<AcceptOutcome> {
    try {
      return await this.db.transaction(async (tx): Promise<AcceptOutcome> => {
        // The row lock makes a concurrent use of the same token wait, then find it accepted.
        const [row] = await tx.query("SELECT * FROM workspace_invitations WHERE token_hash = $1 FOR UPDATE", [a.tokenHash]);
        const invitation = row ? camelRow<Invitation>(row) : null;
        if (!invitation || invitation.acceptedAt || invitation.revokedAt || new Date(invitation.expiresAt).getTime() <= a.now.getTime()) return { outcome: "unusable" };
        const [found] = await tx.query("SELECT * FROM users WHERE email = $1", [invitation.email]);
        let user: User;
        if (a.newUser) {
          if (found) return { outcome: "email_taken" };
          // A concurrent sign-up of the same email is a unique violation: the transaction rolls back (caught below).
          const [created] = await tx.query("INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3) RETURNING *", [invitation.email, a.newUser.name, a.newUser.passwordHash]);
          user = camelRow<User>(created);
        } else {
          if (!found) return { outcome: "needs_account" };
          user = camelRow<User>(found);
        }
        const [added] = await tx.query("INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (workspace_id, user_id) DO NOTHING RETURNING *", [
          invitation.workspaceId,
          user.id,
          invitation.role,
        ]);
        const membership = camelRow<Membership>(added ?? (await tx.query("SELECT * FROM memberships WHERE workspace_id = $1 AND user_id = $2", [invitation.workspaceId, user.id]))[0]);
        const [used] = await tx.query("UPDATE workspace_invitations SET accepted_at = $2, accepted_by = $3 WHERE id = $1 RETURNING *", [invitation.id, a.now, user.id]);
        return { outcome: "accepted", invitation: camelRow<Invitation>(used), user, membership, userCreated: Boolean(a.newUser), alreadyMember: !added };
      });
    } catch (err) {
      if (isUniqueViolation(err)) return { outcome: "email_taken" };
      throw err;
    }
  }

  async createSession(s: { userId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<Session> {
    return (await this.one<Session>("INSERT INTO sessions (user_id, token_hash, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $3, $4) RETURNING *", [
      s.userId,
      s.tokenHash,
      s.now,
      s.expiresAt,
    ]))!;
  }

  findSession(tokenHash: string): Promise<Session | null> {
    return this.one("SELECT * FROM sessions WHERE token_hash = $1", [tokenHash]);
  }

  async touchSession(id: number, now: Date): Promise<void> {
    await this.db.query("UPDATE sessions SET last_seen_at = $2 WHERE id = $1", [id, now]);
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.query("DELETE FROM sessions WHERE token_hash = $1", [tokenHash]);
  }

  async recordLoginFailures(keys: string[], at: Date): Promise<string[]> {
    const rows = await this.db.query<{ id: number }>("INSERT INTO login_failures (key, at) SELECT unnest($1::text[]), $2 RETURNING id", [keys, at]);
    return rows.map((r) => String(r.id));
  }

  async loginFailureStats(keys: string[], since: Date, exclude: string[]): Promise<Map<string, { failures: number; latestAt: Date | null }>> {
    const rows = await this.db.query<{ key: string; n: number; latest: Date | null }>(
      `SELECT key, count(*)::int AS n, max(at) AS latest FROM login_failures
       WHERE key = ANY($1::text[]) AND at >= $2 AND NOT (id = ANY($3::int[])) GROUP BY key`,
      [keys, since, exclude.map(Number)],
    );
    const stats = new Map(keys.map((k) => [k, { failures: 0, latestAt: null as Date | null }]));
    for (const r of rows) stats.set(r.key, { failures: r.n, latestAt: r.latest ? new Date(r.latest) : null });
    return stats;
  }

  async forgetLoginFailures(ids: string[]): Promise<void> {
    if (ids.length) await this.db.query("DELETE FROM login_failures WHERE id = ANY($1::int[])", [ids.map(Number)]);
  }

  async clearLoginFailures(key: string): Promise<void> {
    await this.db.query("DELETE FROM login_failures WHERE key = $1", [key]);
  }

  async createPartnerSignInLink(l: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<PartnerSignInLink> {
    return (await this.one<PartnerSignInLink>("INSERT INTO partner_sign_in_links (partner_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4) RETURNING *", [
      l.partnerId,
      l.tokenHash,
      l.now,
      l.expiresAt,
    ]))!;
  }

  consumePartnerSignInLink(tokenHash: string, now: Date): Promise<PartnerSignInLink | null> {
    // One statement: the row lock makes a second concurrent use find used_at set.
    return this.one("UPDATE partner_sign_in_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING *", [tokenHash, now]);
  }

  async createPartnerSession(s: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date; programId?: number | null }): Promise<PartnerSession> {
    return (await this.one<PartnerSession>(
      "INSERT INTO partner_sessions (partner_id, token_hash, created_at, last_seen_at, expires_at, program_id) VALUES ($1, $2, $3, $3, $4, $5) RETURNING *",
      [s.partnerId, s.tokenHash, s.now, s.expiresAt, s.programId ?? null],
    ))!;
  }

  findPartnerSession(tokenHash: string): Promise<PartnerSession | null> {
    return this.one("SELECT * FROM partner_sessions WHERE token_hash = $1", [tokenHash]);
  }

  async touchPartnerSession(id: number, now: Date): Promise<void> {
    await this.db.query("UPDATE partner_sessions SET last_seen_at = $2 WHERE id = $1", [id, now]);
  }

  async deletePartnerSession(tokenHash: string): Promise<void> {
    await this.db.query("DELETE FROM partner_sessions WHERE token_hash = $1", [tokenHash]);
  }

  async createEmbedToken(t: { partnerId: number; programId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<EmbedToken> {
    await this.db.query("DELETE FROM partner_embed_tokens WHERE expires_at < $1::timestamptz - interval '1 day'", [t.now]);
    return (await this.one<EmbedToken>("INSERT INTO partner_embed_tokens (partner_id, program_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING *", [
      t.partnerId,
      t.programId,
      t.tokenHash,
      t.now,
      t.expiresAt,
    ]))!;
  }

  findEmbedToken(tokenHash: string): Promise<EmbedToken | null> {
    return this.one("SELECT * FROM partner_embed_tokens WHERE token_hash = $1", [tokenHash]);
  }

  async notePartnerAddress(partnerId: number, day: string, addressHash: string, now: Date): Promise<void> {
    await this.db.query("INSERT INTO partner_address_days (partner_id, day, address_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [partnerId, day, addressHash]);
    // The partner's days older than a week go (along the primary key).
    await this.db.query("DELETE FROM partner_address_days WHERE partner_id = $1 AND day < ($2::timestamptz - interval '7 days')::date", [partnerId, now]);
  }

  async partnerAddressHashes(partnerId: number, day: string): Promise<string[]> {
    const rows = await this.db.query<{ address_hash: string }>("SELECT address_hash FROM partner_address_days WHERE partner_id = $1 AND day = $2 ORDER BY address_hash", [partnerId, day]);
    return rows.map((r) => r.address_hash);
  }
}
