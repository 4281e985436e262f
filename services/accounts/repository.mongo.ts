import { Types, type ClientSession, type Connection, type Model } from "mongoose";
import type { Role } from "../../shared/domain/permissions";
import { insertOrNull, isDuplicateKeyError, modelOn, nextId, prepareCollections, collectionSchema, withTransaction } from "../../shared/storage/mongo";
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

/** `teamVersion`: written by every team change in its transaction, so concurrent changes of one workspace conflict. */
type WorkspaceDoc = Omit<Workspace, "id"> & { _id: number; teamVersion?: number };
/** `open`: neither accepted nor revoked (what the unique index on workspace and email covers). */
type InvitationDoc = Omit<Invitation, "id"> & { _id: number; open: boolean };
type UserDoc = Omit<User, "id"> & { _id: number };
type MembershipDoc = Membership;
type SessionDoc = Omit<Session, "id"> & { _id: number };
type PartnerSignInLinkDoc = Omit<PartnerSignInLink, "id"> & { _id: number };
type PartnerSessionDoc = Omit<PartnerSession, "id"> & { _id: number };
type EmbedTokenDoc = Omit<EmbedToken, "id"> & { _id: number };
interface LoginFailureDoc {
  key: string;
  at: Date;
}

const workspaceSchema = collectionSchema<WorkspaceDoc>("workspaces", {
  _id: { type: Number, required: true },
  name: { type: String, required: true },
  createdAt: { type: Date, required: true },
  teamVersion: { type: Number, default: 0 },
});

const invitationSchema = collectionSchema<InvitationDoc>("workspace_invitations", {
  _id: { type: Number, required: true },
  workspaceId: { type: Number, required: true },
  email: { type: String, required: true },
  role: { type: String, required: true },
  tokenHash: { type: String, required: true },
  invitedBy: { type: Number, default: null },
  createdAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
  acceptedAt: { type: Date, default: null },
  acceptedBy: { type: Number, default: null },
  revokedAt: { type: Date, default: null },
  open: { type: Boolean, required: true },
});
invitationSchema.index({ tokenHash: 1 }, { unique: true });
// At most one open invitation per email and workspace (SQL's partial unique index); also the list's index.
invitationSchema.index({ workspaceId: 1, email: 1 }, { unique: true, partialFilterExpression: { open: true } });
invitationSchema.index({ workspaceId: 1, open: 1, createdAt: -1 });

const userSchema = collectionSchema<UserDoc>("users", {
  _id: { type: Number, required: true },
  email: { type: String, required: true },
  name: { type: String, required: true },
  passwordHash: { type: String, required: true },
  createdAt: { type: Date, required: true },
});
userSchema.index({ email: 1 }, { unique: true });

const membershipSchema = collectionSchema<MembershipDoc>("memberships", {
  workspaceId: { type: Number, required: true },
  userId: { type: Number, required: true },
  role: { type: String, required: true },
  createdAt: { type: Date, required: true },
});
membershipSchema.index({ workspaceId: 1, userId: 1 }, { unique: true });
membershipSchema.index({ userId: 1 });

const sessionSchema = collectionSchema<SessionDoc>("sessions", {
  _id: { type: Number, required: true },
  userId: { type: Number, required: true },
  tokenHash: { type: String, required: true },
  createdAt: { type: Date, required: true },
  lastSeenAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
});
sessionSchema.index({ tokenHash: 1 }, { unique: true });
// MongoDB removes expired sessions by itself.
sessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const loginFailureSchema = collectionSchema<LoginFailureDoc>("login_failures", { key: { type: String, required: true }, at: { type: Date, required: true } });
loginFailureSchema.index({ key: 1, at: 1 });
loginFailureSchema.index({ at: 1 }, { expireAfterSeconds: 86_400 });

const partnerSignInLinkSchema = collectionSchema<PartnerSignInLinkDoc>("partner_sign_in_links", {
  _id: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  tokenHash: { type: String, required: true },
  createdAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
  usedAt: { type: Date, default: null },
});
partnerSignInLinkSchema.index({ tokenHash: 1 }, { unique: true });
// Expired links are useless: MongoDB removes them a day later.
partnerSignInLinkSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 86_400 });

const partnerSessionSchema = collectionSchema<PartnerSessionDoc>("partner_sessions", {
  _id: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  tokenHash: { type: String, required: true },
  createdAt: { type: Date, required: true },
  lastSeenAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
  // An embedded session's program (docs/embedded-referrals.md); null for the portal's cookie sessions.
  programId: { type: Number, default: null },
});
partnerSessionSchema.index({ tokenHash: 1 }, { unique: true });
partnerSessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const embedTokenSchema = collectionSchema<EmbedTokenDoc>("partner_embed_tokens", {
  _id: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  programId: { type: Number, required: true },
  tokenHash: { type: String, required: true },
  createdAt: { type: Date, required: true },
  expiresAt: { type: Date, required: true },
});
embedTokenSchema.index({ tokenHash: 1 }, { unique: true });
// Kept a day past expiry (an expired token is told from an unknown one), then MongoDB removes it.
embedTokenSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 86_400 });

/** SQL's partner_address_days: a partner's address hash of a UTC day (docs/fraud.md), removed by MongoDB a week later. */
interface PartnerAddressDayDoc {
  _id: string;
  partnerId: number;
  day: string;
  addressHash: string;
  expiresAt: Date;
}
const partnerAddressDaySchema = collectionSchema<PartnerAddressDayDoc>("partner_address_days", {
  // partnerId|day|addressHash: noting the same one again changes nothing.
  _id: { type: String, required: true },
  partnerId: { type: Number, required: true },
  day: { type: String, required: true },
  addressHash: { type: String, required: true },
  expiresAt: { type: Date, required: true },
});
partnerAddressDaySchema.index({ partnerId: 1, day: 1 });
partnerAddressDaySchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const withId = <T extends { _id: number }>({ _id, ...rest }: T) => ({ id: _id, ...rest });
const toMembership = (d: MembershipDoc): Membership => ({ workspaceId: d.workspaceId, userId: d.userId, role: d.role as Role, createdAt: d.createdAt });
const toWorkspace = (d: WorkspaceDoc): Workspace => ({ id: d._id, name: d.name, createdAt: d.createdAt });
const toInvitation = (d: InvitationDoc): Invitation => ({
  id: d._id,
  workspaceId: d.workspaceId,
  email: d.email,
  role: d.role as Role,
  tokenHash: d.tokenHash,
  invitedBy: d.invitedBy ?? null,
  createdAt: d.createdAt,
  expiresAt: d.expiresAt,
  acceptedAt: d.acceptedAt ?? null,
  acceptedBy: d.acceptedBy ?? null,
  revokedAt: d.revokedAt ?? null,
});

/** The fields of the unique index a duplicate key error is about. */
const keyFields = (err: unknown) => Object.keys((err as { keyPattern?: Record<string, unknown> } | null)?.keyPattern ?? {});

/** Thrown inside a transaction to roll it back with an outcome (a callback's return commits). */
class Outcome extends Error {
  constructor(readonly outcome: AcceptOutcome) {
    super(outcome.outcome);
  }
}

export class MongoAccountsRepository implements AccountsRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly workspaces: Model<WorkspaceDoc>,
    private readonly users: Model<UserDoc>,
    private readonly memberships: Model<MembershipDoc>,
    private readonly sessions: Model<SessionDoc>,
    private readonly loginFailures: Model<LoginFailureDoc>,
    private readonly partnerSignInLinks: Model<PartnerSignInLinkDoc>,
    private readonly partnerSessions: Model<PartnerSessionDoc>,
    private readonly invitations: Model<InvitationDoc>,
    private readonly partnerAddressDays: Model<PartnerAddressDayDoc>,
    private readonly embedTokens: Model<EmbedTokenDoc>,
  ) {}

  static async create(connection: Connection): Promise<MongoAccountsRepository> {
    const models = [
      modelOn(connection, "Workspace", workspaceSchema),
      modelOn(connection, "User", userSchema),
      modelOn(connection, "Membership", membershipSchema),
      modelOn(connection, "Session", sessionSchema),
      modelOn(connection, "LoginFailure", loginFailureSchema),
      modelOn(connection, "PartnerSignInLink", partnerSignInLinkSchema),
      modelOn(connection, "PartnerSession", partnerSessionSchema),
      modelOn(connection, "WorkspaceInvitation", invitationSchema),
      modelOn(connection, "PartnerAddressDay", partnerAddressDaySchema),
      modelOn(connection, "PartnerEmbedToken", embedTokenSchema),
    ] as const;
    await prepareCollections(models);
    return new MongoAccountsRepository(connection, ...models);
  }

  async createWorkspace(name: string): Promise<Workspace> {
    const doc = { _id: await nextId(this.connection, "workspaces"), name, createdAt: new Date() };
    await this.workspaces.create(doc);
    return withId(doc);
  }

  async getWorkspace(id: number): Promise<Workspace | null> {
    const doc = await this.workspaces.findById(id).lean<WorkspaceDoc>();
    return doc ? toWorkspace(doc) : null;
  }

  async createUser(u: { email: string; name: string; passwordHash: string }): Promise<User | null> {
    const doc = { _id: await nextId(this.connection, "users"), ...u, createdAt: new Date() };
    return insertOrNull(async () => {
      await this.users.create(doc);
      return withId(doc);
    });
  }

  async findUserByEmail(email: string): Promise<User | null> {
    const doc = await this.users.findOne({ email }).lean<UserDoc>();
    return doc ? withId(doc) : null;
  }

  async getUser(id: number): Promise<User | null> {
    const doc = await this.users.findById(id).lean<UserDoc>();
    return doc ? withId(doc) : null;
  }

  async setMembership(m: { workspaceId: number; userId: number; role: Role }): Promise<Membership> {
    const doc = await this.memberships
      .findOneAndUpdate({ workspaceId: m.workspaceId, userId: m.userId }, { $set: { role: m.role }, $setOnInsert: { createdAt: new Date() } }, { upsert: true, returnDocument: "after" })
      .lean<MembershipDoc>();
    return toMembership(doc!);
  }

  async findMembership(workspaceId: number, userId: number): Promise<Membership | null> {
    const doc = await this.memberships.findOne({ workspaceId, userId }).lean<MembershipDoc>();
    return doc ? toMembership(doc) : null;
  }

  async listMemberships(userId: number): Promise<Membership[]> {
    const docs = await this.memberships.find({ userId }).sort({ workspaceId: 1 }).lean<MembershipDoc[]>();
    return docs.map(toMembership);
  }

  async addMembership(m: { workspaceId: number; userId: number; role: Role }): Promise<Membership | null> {
    const doc = { workspaceId: m.workspaceId, userId: m.userId, role: m.role, createdAt: new Date() };
    return insertOrNull(async () => {
      await this.memberships.create(doc);
      return toMembership(doc);
    });
  }

  async listWorkspaceMembers(workspaceId: number): Promise<WorkspaceMember[]> {
    const members = await this.memberships.find({ workspaceId }).sort({ createdAt: 1, userId: 1 }).lean<MembershipDoc[]>();
    const users = await this.users.find({ _id: { $in: members.map((m) => m.userId) } }).lean<UserDoc[]>();
    const byId = new Map(users.map((u) => [u._id, u]));
    return members.flatMap((m) => {
      const user = byId.get(m.userId);
      return user ? [{ userId: m.userId, email: user.email, name: user.name, role: m.role as Role, joinedAt: m.createdAt }] : [];
    });
  }

  /**
   * The team's lock in a transaction: a write to the workspace document, so two transactions changing one
   * workspace's team conflict and the driver retries one, which then reads the other's result (SQL locks the row).
   * False when the workspace does not exist.
   */
  private async lockTeam(session: ClientSession, workspaceId: number): Promise<boolean> {
    const res = await this.workspaces.updateOne({ _id: workspaceId }, { $inc: { teamVersion: 1 } }, { session });
    return res.matchedCount > 0;
  }

  /** The member and how many other owners the workspace has, read under the team's lock; null when not a member. */
  private async memberForChange(session: ClientSession, workspaceId: number, userId: number): Promise<{ membership: Membership; otherOwners: number } | null> {
    if (!(await this.lockTeam(session, workspaceId))) return null;
    const doc = await this.memberships.findOne({ workspaceId, userId }, null, { session }).lean<MembershipDoc>();
    if (!doc) return null;
    const otherOwners = await this.memberships.countDocuments({ workspaceId, role: "owner", userId: { $ne: userId } }, { session });
    return { membership: toMembership(doc), otherOwners };
  }

  changeRole(m: { workspaceId: number; userId: number; role: Role }): Promise<TeamChange<Membership>> {
    return withTransaction(this.connection, async (session): Promise<TeamChange<Membership>> => {
      const current = await this.memberForChange(session, m.workspaceId, m.userId);
      if (!current) return { outcome: "not_member" };
      if (current.membership.role === "owner" && m.role !== "owner" && current.otherOwners === 0) return { outcome: "last_owner" };
      await this.memberships.updateOne({ workspaceId: m.workspaceId, userId: m.userId }, { $set: { role: m.role } }, { session });
      return { outcome: "done", value: { ...current.membership, role: m.role } };
    });
  }

  removeMembership(workspaceId: number, userId: number): Promise<TeamChange<Membership>> {
    return withTransaction(this.connection, async (session): Promise<TeamChange<Membership>> => {
      const current = await this.memberForChange(session, workspaceId, userId);
      if (!current) return { outcome: "not_member" };
      if (current.membership.role === "owner" && current.otherOwners === 0) return { outcome: "last_owner" };
      await this.memberships.deleteOne({ workspaceId, userId }, { session });
      return { outcome: "done", value: current.membership };
    });
  }

  async createInvitation(i: { workspaceId: number; email: string; role: Role; tokenHash: string; invitedBy: number | null; expiresAt: Date; now: Date }) {
    type Created = Awaited<ReturnType<AccountsRepository["createInvitation"]>>;
    // The id once, outside the transaction: a retried transaction inserts the same invitation.
    const id = await nextId(this.connection, "workspace_invitations");
    return withTransaction(this.connection, async (session): Promise<Created> => {
      if (!(await this.lockTeam(session, i.workspaceId))) return { outcome: "no_workspace" };
      const user = await this.users.findOne({ email: i.email }, { _id: 1 }, { session }).lean<Pick<UserDoc, "_id">>();
      if (user && (await this.memberships.countDocuments({ workspaceId: i.workspaceId, userId: user._id }, { session })) > 0) return { outcome: "already_member" };
      const replaced = await this.invitations.updateMany({ workspaceId: i.workspaceId, email: i.email, open: true }, { $set: { revokedAt: i.now, open: false } }, { session });
      const doc: InvitationDoc = {
        _id: id,
        workspaceId: i.workspaceId,
        email: i.email,
        role: i.role,
        tokenHash: i.tokenHash,
        invitedBy: i.invitedBy,
        createdAt: i.now,
        expiresAt: i.expiresAt,
        acceptedAt: null,
        acceptedBy: null,
        revokedAt: null,
        open: true,
      };
      await this.invitations.create([doc], { session });
      return { outcome: "created", invitation: toInvitation(doc), replaced: replaced.modifiedCount > 0 };
    });
  }

  async findInvitationByToken(tokenHash: string): Promise<Invitation | null> {
    const doc = await this.invitations.findOne({ tokenHash }).lean<InvitationDoc>();
    return doc ? toInvitation(doc) : null;
  }

  async listOpenInvitations(workspaceId: number): Promise<Invitation[]> {
    const docs = await this.invitations.find({ workspaceId, open: true }).sort({ createdAt: -1, _id: -1 }).lean<InvitationDoc[]>();
    return docs.map(toInvitation);
  }

  async revokeInvitation(workspaceId: number, invitationId: number, now: Date): Promise<Invitation | null> {
    const doc = await this.invitations
      .findOneAndUpdate({ _id: invitationId, workspaceId, open: true }, { $set: { revokedAt: now, open: false } }, { returnDocument: "after" })
      .lean<InvitationDoc>();
    return doc ? toInvitation(doc) : null;
  }

  async acceptInvitation(a: { tokenHash: string; now: Date; newUser?: { name: string; passwordHash: string } }, attempt = 1): Promise<AcceptOutcome> {
    // The new user's id once, outside the transaction: a retried transaction inserts the same user.
    const newUserId = a.newUser ? await nextId(this.connection, "users") : null;
    try {
      return await withTransaction(this.connection, async (session): Promise<AcceptOutcome> => {
        // A conditional write first: of concurrent uses of the token, one writes, the others conflict and are
        // retried, then find it used. Rolled back (by throwing) when the acceptance stops further on.
        const doc = await this.invitations
          .findOneAndUpdate({ tokenHash: a.tokenHash, open: true, expiresAt: { $gt: a.now } }, { $set: { acceptedAt: a.now, open: false } }, { session, returnDocument: "after" })
          .lean<InvitationDoc>();
        if (!doc) return { outcome: "unusable" };
        const found = await this.users.findOne({ email: doc.email }, null, { session }).lean<UserDoc>();
        let user: User;
        if (a.newUser) {
          if (found) throw new Outcome({ outcome: "email_taken" });
          const userDoc: UserDoc = { _id: newUserId!, email: doc.email, name: a.newUser.name, passwordHash: a.newUser.passwordHash, createdAt: a.now };
          await this.users.create([userDoc], { session });
          user = withId(userDoc);
        } else {
          if (!found) throw new Outcome({ outcome: "needs_account" });
          user = withId(found);
        }
        const existing = await this.memberships.findOne({ workspaceId: doc.workspaceId, userId: user.id }, null, { session }).lean<MembershipDoc>();
        let membership: Membership;
        if (existing) membership = toMembership(existing);
        else {
          membership = { workspaceId: doc.workspaceId, userId: user.id, role: doc.role as Role, createdAt: a.now };
          await this.memberships.create([{ ...membership }], { session });
        }
        await this.invitations.updateOne({ _id: doc._id }, { $set: { acceptedBy: user.id } }, { session });
        const invitation = toInvitation({ ...doc, acceptedBy: user.id });
        return { outcome: "accepted", invitation, user, membership, userCreated: a.newUser !== undefined, alreadyMember: existing !== null };
      });
    } catch (err) {
      if (err instanceof Outcome) return err.outcome;
      // A membership added meanwhile (an operator's grant): the transaction rolled back; once more, it is found.
      if (isDuplicateKeyError(err) && keyFields(err).includes("workspaceId") && attempt < 3) return this.acceptInvitation(a, attempt + 1);
      // A concurrent sign-up of the same email (users' unique index): the transaction rolled back.
      if (isDuplicateKeyError(err)) return { outcome: "email_taken" };
      throw err;
    }
  }

  async createSession(s: { userId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<Session> {
    const doc = { _id: await nextId(this.connection, "sessions"), userId: s.userId, tokenHash: s.tokenHash, createdAt: s.now, lastSeenAt: s.now, expiresAt: s.expiresAt };
    await this.sessions.create(doc);
    return withId(doc);
  }

  async findSession(tokenHash: string): Promise<Session | null> {
    const doc = await this.sessions.findOne({ tokenHash }).lean<SessionDoc>();
    return doc ? withId(doc) : null;
  }

  async touchSession(id: number, now: Date): Promise<void> {
    await this.sessions.updateOne({ _id: id }, { $set: { lastSeenAt: now } });
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.sessions.deleteOne({ tokenHash });
  }

  async recordLoginFailures(keys: string[], at: Date): Promise<string[]> {
    const docs = await this.loginFailures.insertMany(keys.map((key) => ({ key, at })));
    return docs.map((d) => String(d._id));
  }

  async loginFailureStats(keys: string[], since: Date, exclude: string[]): Promise<Map<string, { failures: number; latestAt: Date | null }>> {
    const rows = await this.loginFailures.aggregate<{ _id: string; n: number; latest: Date }>([
      { $match: { key: { $in: keys }, at: { $gte: since }, _id: { $nin: exclude.map((id) => new Types.ObjectId(id)) } } },
      { $group: { _id: "$key", n: { $sum: 1 }, latest: { $max: "$at" } } },
    ]);
    const stats = new Map(keys.map((k) => [k, { failures: 0, latestAt: null as Date | null }]));
    for (const r of rows) stats.set(r._id, { failures: r.n, latestAt: r.latest });
    return stats;
  }

  async forgetLoginFailures(ids: string[]): Promise<void> {
    if (ids.length) await this.loginFailures.deleteMany({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) } });
  }

  async clearLoginFailures(key: string): Promise<void> {
    await this.loginFailures.deleteMany({ key });
  }

  async createPartnerSignInLink(l: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<PartnerSignInLink> {
    const doc = { _id: await nextId(this.connection, "partner_sign_in_links"), partnerId: l.partnerId, tokenHash: l.tokenHash, createdAt: l.now, expiresAt: l.expiresAt, usedAt: null };
    await this.partnerSignInLinks.create(doc);
    return withId(doc);
  }

  async consumePartnerSignInLink(tokenHash: string, now: Date): Promise<PartnerSignInLink | null> {
    // A conditional single-document update: of two concurrent uses, one matches.
    const doc = await this.partnerSignInLinks
      .findOneAndUpdate({ tokenHash, usedAt: null, expiresAt: { $gt: now } }, { $set: { usedAt: now } }, { returnDocument: "after" })
      .lean<PartnerSignInLinkDoc>();
    return doc ? withId(doc) : null;
  }

  async createPartnerSession(s: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date; programId?: number | null }): Promise<PartnerSession> {
    const doc = {
      _id: await nextId(this.connection, "partner_sessions"),
      partnerId: s.partnerId,
      tokenHash: s.tokenHash,
      createdAt: s.now,
      lastSeenAt: s.now,
      expiresAt: s.expiresAt,
      programId: s.programId ?? null,
    };
    await this.partnerSessions.create(doc);
    return withId(doc);
  }

  async findPartnerSession(tokenHash: string): Promise<PartnerSession | null> {
    const doc = await this.partnerSessions.findOne({ tokenHash }).lean<PartnerSessionDoc>();
    // Sessions stored before embedded sessions existed have no programId: portal sessions.
    return doc ? withId({ ...doc, programId: doc.programId ?? null }) : null;
  }

  async touchPartnerSession(id: number, now: Date): Promise<void> {
    await this.partnerSessions.updateOne({ _id: id }, { $set: { lastSeenAt: now } });
  }

  async deletePartnerSession(tokenHash: string): Promise<void> {
    await this.partnerSessions.deleteOne({ tokenHash });
  }

  async createEmbedToken(t: { partnerId: number; programId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<EmbedToken> {
    // The TTL index removes expired tokens a day later; no sweep needed here.
    const doc = {
      _id: await nextId(this.connection, "partner_embed_tokens"),
      partnerId: t.partnerId,
      programId: t.programId,
      tokenHash: t.tokenHash,
      createdAt: t.now,
      expiresAt: t.expiresAt,
    };
    await this.embedTokens.create(doc);
    return withId(doc);
  }

  async findEmbedToken(tokenHash: string): Promise<EmbedToken | null> {
    const doc = await this.embedTokens.findOne({ tokenHash }).lean<EmbedTokenDoc>();
    return doc ? withId(doc) : null;
  }

  async notePartnerAddress(partnerId: number, day: string, addressHash: string, now: Date): Promise<void> {
    const _id = `${partnerId}|${day}|${addressHash}`;
    await this.partnerAddressDays.updateOne({ _id }, { $setOnInsert: { partnerId, day, addressHash, expiresAt: new Date(now.getTime() + 7 * 86_400_000) } }, { upsert: true });
  }

  async partnerAddressHashes(partnerId: number, day: string): Promise<string[]> {
    const docs = await this.partnerAddressDays.find({ partnerId, day }, { addressHash: 1 }).sort({ addressHash: 1 }).lean();
    return docs.map((d) => d.addressHash);
  }
}
