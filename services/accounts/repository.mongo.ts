import { Schema, Types, type Connection, type Model } from "mongoose";
import type { Role } from "../../shared/domain/permissions";
import { insertOrNull, modelOn, nextId, prepareCollections, schemaOptions } from "../../shared/storage/mongo";
import type { AccountsRepository, Membership, PartnerSession, PartnerSignInLink, Session, User, Workspace } from "./repository";

type WorkspaceDoc = Omit<Workspace, "id"> & { _id: number };
type UserDoc = Omit<User, "id"> & { _id: number };
type MembershipDoc = Membership;
type SessionDoc = Omit<Session, "id"> & { _id: number };
type PartnerSignInLinkDoc = Omit<PartnerSignInLink, "id"> & { _id: number };
type PartnerSessionDoc = Omit<PartnerSession, "id"> & { _id: number };
interface LoginFailureDoc {
  key: string;
  at: Date;
}

const workspaceSchema = new Schema<WorkspaceDoc>(
  { _id: { type: Number, required: true }, name: { type: String, required: true }, createdAt: { type: Date, required: true } },
  schemaOptions("workspaces"),
);

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: Number, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    passwordHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  schemaOptions("users"),
);
userSchema.index({ email: 1 }, { unique: true });

const membershipSchema = new Schema<MembershipDoc>(
  {
    workspaceId: { type: Number, required: true },
    userId: { type: Number, required: true },
    role: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  schemaOptions("memberships"),
);
membershipSchema.index({ workspaceId: 1, userId: 1 }, { unique: true });
membershipSchema.index({ userId: 1 });

const sessionSchema = new Schema<SessionDoc>(
  {
    _id: { type: Number, required: true },
    userId: { type: Number, required: true },
    tokenHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastSeenAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  schemaOptions("sessions"),
);
sessionSchema.index({ tokenHash: 1 }, { unique: true });
// MongoDB removes expired sessions by itself.
sessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const loginFailureSchema = new Schema<LoginFailureDoc>({ key: { type: String, required: true }, at: { type: Date, required: true } }, schemaOptions("login_failures"));
loginFailureSchema.index({ key: 1, at: 1 });
loginFailureSchema.index({ at: 1 }, { expireAfterSeconds: 86_400 });

const partnerSignInLinkSchema = new Schema<PartnerSignInLinkDoc>(
  {
    _id: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    tokenHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
    usedAt: { type: Date, default: null },
  },
  schemaOptions("partner_sign_in_links"),
);
partnerSignInLinkSchema.index({ tokenHash: 1 }, { unique: true });
// Expired links are useless: MongoDB removes them a day later.
partnerSignInLinkSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 86_400 });

const partnerSessionSchema = new Schema<PartnerSessionDoc>(
  {
    _id: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    tokenHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastSeenAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  schemaOptions("partner_sessions"),
);
partnerSessionSchema.index({ tokenHash: 1 }, { unique: true });
partnerSessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const withId = <T extends { _id: number }>({ _id, ...rest }: T) => ({ id: _id, ...rest });
const toMembership = (d: MembershipDoc): Membership => ({ workspaceId: d.workspaceId, userId: d.userId, role: d.role as Role, createdAt: d.createdAt });

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
    return doc ? withId(doc) : null;
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

  async createPartnerSession(s: { partnerId: number; tokenHash: string; expiresAt: Date; now: Date }): Promise<PartnerSession> {
    const doc = { _id: await nextId(this.connection, "partner_sessions"), partnerId: s.partnerId, tokenHash: s.tokenHash, createdAt: s.now, lastSeenAt: s.now, expiresAt: s.expiresAt };
    await this.partnerSessions.create(doc);
    return withId(doc);
  }

  async findPartnerSession(tokenHash: string): Promise<PartnerSession | null> {
    const doc = await this.partnerSessions.findOne({ tokenHash }).lean<PartnerSessionDoc>();
    return doc ? withId(doc) : null;
  }

  async touchPartnerSession(id: number, now: Date): Promise<void> {
    await this.partnerSessions.updateOne({ _id: id }, { $set: { lastSeenAt: now } });
  }

  async deletePartnerSession(tokenHash: string): Promise<void> {
    await this.partnerSessions.deleteOne({ tokenHash });
  }
}
