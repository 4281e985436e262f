import { isUniqueViolation } from "../../shared/storage/errors";
import { camelRow, migrate, type SqlDatabase } from "../../shared/storage/sql";
import type { AccountsRepository, Membership, PartnerSession, PartnerSignInLink, Session, User, Workspace } from "./repository";

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
];

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

  async createPartnerSession(s: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<PartnerSession> {
    return (await this.one<PartnerSession>("INSERT INTO partner_sessions (partner_id, token_hash, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $3, $4) RETURNING *", [
      s.partnerId,
      s.tokenHash,
      s.now,
      s.expiresAt,
    ]))!;
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
}
