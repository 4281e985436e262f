import { addressHashOf } from "../shared/address-hash";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import { decideLoginAttempt, LOGIN_FAILURE_WINDOW_MS, loginThrottleKeys } from "./accounts/login-throttle";
import { roleAllows, type Permission, type Role } from "../shared/domain/permissions";
import { toDto } from "../shared/dto";
import { AppError, ConflictError, InvalidRequestError, NotFoundError, RateLimitError, ServiceUnavailableError, UnauthorizedError } from "../shared/errors";
import { hashPassword, verifyPassword } from "../shared/passwords";
import { hashSecret, randomToken } from "../shared/secrets";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { call, broadcastConfirmed } from "./bus";
import { mailerFromEnv, publicUrlFromEnv, type Mailer } from "../shared/mailer";
import { logFields } from "../shared/observability";
import { te, type EmailKey } from "../shared/i18n/email";
import { INVITE_LINK_DEFAULT_MINUTES, MAGIC_LINK_TTL_MS, PARTNER_LINK_THROTTLE_RULES, PARTNER_LINK_WINDOW_MS, partnerLinkThrottleKeys, signInUrl } from "./accounts/partner-sign-in";
import { createAccountsRepository } from "./accounts/storage";
import type { AccountsRepository, Invitation, User, Workspace } from "./accounts/repository";
import type { InvitationView } from "./accounts/contract";
import { invitationMail, invitationTtlMsFromEnv, invitationUrl, refusalOf } from "./accounts/invitations";
import { ACCOUNTS } from "./accounts/endpoints";
import * as S from "./accounts/schemas";
import { EMBED_TOKEN_PREFIX, embedReferralCode, embedSessionTtlMsFromEnv, embedTokenTtlMsFromEnv, embedUrl } from "./accounts/embed";

/** The signed-in dashboard user, as the gateway puts it in `ctx.meta.user`. */
export interface SessionUser {
  id: number;
  email: string;
  name: string;
  sessionId: number;
}

const seconds = (name: string, fallback: number) => Number(process.env[name] ?? fallback) * 1000;
// Verifying against a dummy hash keeps an unknown email as slow as a wrong password.
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = () => (dummyHash ??= hashPassword(randomToken(16)));

/** The sooner of a session's expiry and its idle limit, counted from when it was last seen. */
const sessionValidUntil = (session: { expiresAt: Date }, lastSeenAt: Date, idleMs: number) => new Date(Math.min(session.expiresAt.getTime(), lastSeenAt.getTime() + idleMs));

const publicUser = (u: User) => ({ id: u.id, email: u.email, name: u.name });

/** An invitation as answers show it (never the token hash). */
const invitationView = (i: Invitation, now: Date): InvitationView => ({
  id: i.id,
  workspaceId: i.workspaceId,
  email: i.email,
  role: i.role,
  status: i.revokedAt ? "revoked" : i.expiresAt.getTime() <= now.getTime() ? "expired" : "pending",
  invitedBy: i.invitedBy,
  createdAt: i.createdAt.toISOString(),
  expiresAt: i.expiresAt.toISOString(),
});

const lastOwner = (userId: number, workspaceId: number, change: "demote" | "remove") =>
  change === "demote"
    ? `User ${userId} is the last owner of workspace ${workspaceId}, and a workspace keeps at least one owner: make another member owner first, then change this role.`
    : `User ${userId} is the last owner of workspace ${workspaceId}, and a workspace keeps at least one owner: make another member owner first, then remove this one.`;
const notMember = (userId: number, workspaceId: number) => new NotFoundError(`User ${userId} is not a member of workspace ${workspaceId}.`);

/** Owns workspaces, dashboard users, their roles and sessions. */
type Vars = StorageVars<AccountsRepository> & {
  sessionMaxAgeMs: number;
  sessionIdleMs: number;
  invitationTtlMs: number;
  embedTokenTtlMs: number;
  embedSessionTtlMs: number;
  mailer: Mailer;
  publicUrl: string;
};
type EmbedUser = Input<typeof S.CreateEmbedTokenInput>;
type Methods = {
  issuePartnerLink(ctx: Context, partner: { id: number; name: string; email: string | null }, ttlMs: number, send: boolean): Promise<{ url: string; expiresAt: Date; sent: boolean }>;
  requireWorkspace(workspaceId: number): Promise<Workspace>;
  membershipChanged(workspaceId: number, userId: number): Promise<void>;
  embedPartner(ctx: Context, user: EmbedUser): Promise<{ partnerId: number; enrolled: boolean }>;
};

const LINK_REQUESTED = "If this email belongs to a partner, a sign-in link is on its way. It works once, within 15 minutes.";
const NO_PARTNER_SESSION = "Sign in to the partner portal first.";

const AccountsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "accounts",
  mixins: [storageMixin(createAccountsRepository)],

  created() {
    this.sessionMaxAgeMs = seconds("SESSION_MAX_AGE_SECONDS", 7 * 86_400);
    this.sessionIdleMs = seconds("SESSION_IDLE_TIMEOUT_SECONDS", 86_400);
    this.invitationTtlMs = invitationTtlMsFromEnv();
    this.embedTokenTtlMs = embedTokenTtlMsFromEnv();
    this.embedSessionTtlMs = embedSessionTtlMsFromEnv();
    this.mailer = mailerFromEnv((message, fields) => this.logger.info(message, logFields(fields)));
    this.publicUrl = publicUrlFromEnv();
  },

  async stopped() {
    await this.mailer?.close();
  },

  // Params are validated against each action's declared input (accounts/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(ACCOUNTS) } },

  actions: {
    createWorkspace: {
      async handler(ctx: Context<Input<typeof S.CreateWorkspaceInput>>) {
        const { name } = ctx.params;
        return toDto(await this.repo.createWorkspace(name));
      },
    },

    getWorkspace: {
      async handler(ctx: Context<Input<typeof S.WorkspaceIdInput>>) {
        const { workspaceId } = ctx.params;
        const workspace = await this.repo.getWorkspace(workspaceId);
        if (!workspace) throw new NotFoundError(`No workspace with id ${workspaceId}.`);
        return toDto(workspace);
      },
    },

    createUser: {
      async handler(ctx: Context<Input<typeof S.CreateUserInput>>) {
        const input = ctx.params;
        const user = await this.repo.createUser({ email: input.email, name: input.name, passwordHash: await hashPassword(input.password) });
        if (!user) throw new ConflictError(`A user with email '${input.email}' already exists.`);
        return toDto(publicUser(user));
      },
    },

    /** Operators: adds the user with the role, or changes a member's role (never the last owner's: 409). */
    grantRole: {
      async handler(ctx: Context<Input<typeof S.GrantRoleInput>>) {
        const input = ctx.params;
        const role = input.role as Role;
        await this.requireWorkspace(input.workspaceId);
        if (!(await this.repo.getUser(input.userId))) throw new NotFoundError(`No user with id ${input.userId}.`);
        let membership = await this.repo.addMembership({ ...input, role });
        if (!membership) {
          const change = await this.repo.changeRole({ ...input, role });
          if (change.outcome === "last_owner") throw new ConflictError(lastOwner(input.userId, input.workspaceId, "demote"));
          // Removed between the two steps: added now, or a conflict if it changed again.
          membership = change.outcome === "done" ? change.value : await this.repo.addMembership({ ...input, role });
          if (!membership) throw new ConflictError(`The membership of user ${input.userId} changed meanwhile. Try again.`);
        }
        await this.membershipChanged(membership.workspaceId, membership.userId);
        return toDto(membership);
      },
    },

    listMembers: {
      async handler(ctx: Context<Input<typeof S.TeamListInput>>) {
        const { workspaceId } = ctx.params;
        await this.requireWorkspace(workspaceId);
        return { data: toDto(await this.repo.listWorkspaceMembers(workspaceId)) };
      },
    },

    /** A member's new role; the last owner keeps theirs (409), atomically against concurrent changes (repository). */
    changeRole: {
      async handler(ctx: Context<Input<typeof S.ChangeRoleInput>>) {
        const { workspaceId, userId } = ctx.params;
        const change = await this.repo.changeRole({ workspaceId, userId, role: ctx.params.role as Role });
        if (change.outcome === "not_member") throw notMember(userId, workspaceId);
        if (change.outcome === "last_owner") throw new ConflictError(lastOwner(userId, workspaceId, "demote"));
        await this.membershipChanged(workspaceId, userId);
        return toDto(change.value);
      },
    },

    /** Removes a member (never the last owner: 409); every gateway forgets their access before the answer. */
    removeMember: {
      async handler(ctx: Context<Input<typeof S.RemoveMemberInput>>) {
        const { workspaceId, userId } = ctx.params;
        const change = await this.repo.removeMembership(workspaceId, userId);
        if (change.outcome === "not_member") throw notMember(userId, workspaceId);
        if (change.outcome === "last_owner") throw new ConflictError(lastOwner(userId, workspaceId, "remove"));
        await this.membershipChanged(workspaceId, userId);
        return { removed: true as const, workspaceId, userId, role: change.value.role };
      },
    },

    listInvitations: {
      async handler(ctx: Context<Input<typeof S.TeamListInput>>) {
        const { workspaceId } = ctx.params;
        await this.requireWorkspace(workspaceId);
        const now = new Date();
        return { data: (await this.repo.listOpenInvitations(workspaceId)).map((i) => invitationView(i, now)) };
      },
    },

    /**
     * Stores an invitation (its token only hashed; an open one of the same email is replaced) and mails its link.
     * A mail that cannot be sent withdraws the invitation (nobody could use it) and answers 503.
     */
    createInvitation: {
      async handler(ctx: Context<Input<typeof S.CreateInvitationInput>, { user?: SessionUser | null }>) {
        const { workspaceId, email } = ctx.params;
        const role = ctx.params.role as Role;
        const inviter = ctx.meta.user ?? null;
        const workspace = await this.requireWorkspace(workspaceId);
        const token = randomToken(32);
        const now = new Date();
        const created = await this.repo.createInvitation({
          workspaceId,
          email,
          role,
          tokenHash: hashSecret(token),
          invitedBy: inviter?.id ?? null,
          expiresAt: new Date(now.getTime() + this.invitationTtlMs),
          now,
        });
        if (created.outcome === "no_workspace") throw new NotFoundError(`No workspace with id ${workspaceId}.`);
        if (created.outcome === "already_member") throw new ConflictError(`${email} is a member of workspace ${workspaceId} already: change their role instead.`);
        const mail = invitationMail({
          email,
          workspaceName: workspace.name,
          role,
          inviterName: inviter?.name ?? null,
          url: invitationUrl(this.publicUrl, token),
          ttlMs: this.invitationTtlMs,
        });
        try {
          await this.mailer.send(mail);
        } catch (err) {
          this.logger.error("invitation mail not sent", logFields({ workspaceId, invitationId: created.invitation.id, error: err instanceof Error ? err.message : String(err) }));
          await this.repo.revokeInvitation(workspaceId, created.invitation.id, new Date());
          throw new ServiceUnavailableError("The invitation mail could not be sent, so the invitation was withdrawn. Try again in a moment.");
        }
        return { ...invitationView(created.invitation, now), replaced: created.replaced };
      },
    },

    revokeInvitation: {
      async handler(ctx: Context<Input<typeof S.RevokeInvitationInput>>) {
        const { workspaceId, invitationId } = ctx.params;
        const now = new Date();
        const revoked = await this.repo.revokeInvitation(workspaceId, invitationId, now);
        if (!revoked) throw new NotFoundError(`No open invitation ${invitationId} in workspace ${workspaceId}.`);
        return invitationView(revoked, now);
      },
    },

    /**
     * Public (no session): the token, once, before it expires. A new email creates its account with the name and
     * password given; an existing account's email takes the token alone (its password stays, nobody sets it here).
     * Every refusal changes nothing: the token stays usable after a 400. The password is hashed only for a valid
     * token, so unknown tokens cost no scrypt.
     */
    acceptInvitation: {
      async handler(ctx: Context<Input<typeof S.AcceptInvitationInput>>) {
        const { token, name, password } = ctx.params;
        if ((name === undefined) !== (password === undefined)) {
          throw new InvalidRequestError("Send both name and password to create your account, or neither when your email has an account already.");
        }
        const tokenHash = hashSecret(token);
        const invitation = await this.repo.findInvitationByToken(tokenHash);
        const now = new Date();
        if (!invitation || invitation.acceptedAt || invitation.revokedAt || invitation.expiresAt.getTime() <= now.getTime()) {
          throw new AppError("invitation_invalid", refusalOf(invitation, now));
        }
        const needsAccount = `No account has the email ${invitation.email} yet: send your name and a password (at least 12 characters) with the token to create it.`;
        const existing = await this.repo.findUserByEmail(invitation.email);
        if (existing && password !== undefined) {
          throw new InvalidRequestError(
            `An account with the email ${invitation.email} exists already: accept with the token alone (no name or password), then sign in with that account's password.`,
          );
        }
        if (!existing && password === undefined) throw new InvalidRequestError(needsAccount);
        const newUser = password !== undefined ? { name: name!, passwordHash: await hashPassword(password) } : undefined;
        const result = await this.repo.acceptInvitation({ tokenHash, now: new Date(), newUser });
        if (result.outcome === "unusable") throw new AppError("invitation_invalid", refusalOf(await this.repo.findInvitationByToken(tokenHash), new Date()));
        if (result.outcome === "email_taken") throw new ConflictError(`An account with the email ${invitation.email} was created meanwhile: accept with the token alone, then sign in.`);
        if (result.outcome === "needs_account") throw new InvalidRequestError(needsAccount);
        await this.membershipChanged(result.membership.workspaceId, result.user.id);
        return {
          workspaceId: result.membership.workspaceId,
          role: result.membership.role,
          user: publicUser(result.user),
          accountCreated: result.userCreated,
          alreadyMember: result.alreadyMember,
        };
      },
    },

    /**
     * Email and password to a new session. Returns the session token once
     * (the gateway puts it in an HttpOnly cookie). Failed attempts slow down
     * further ones per email and client address, per client address and per
     * email (services/accounts/login-throttle.ts). Each attempt is recorded as a
     * failure before its password is checked, so guesses sent in parallel
     * count each other; a refused or successful attempt is then forgotten.
     */
    login: {
      async handler(ctx: Context<Input<typeof S.LoginRequest>, { clientAddress?: string }>) {
        const { email, password } = ctx.params;
        const keys = loginThrottleKeys(email, ctx.meta.clientAddress ?? "unknown");
        const now = new Date();
        const attempt = await this.repo.recordLoginFailures(Object.values(keys), now);
        const stats = await this.repo.loginFailureStats(Object.values(keys), new Date(now.getTime() - LOGIN_FAILURE_WINDOW_MS), attempt);
        const decision = decideLoginAttempt({ email_address: stats.get(keys.email_address)!, address: stats.get(keys.address)!, email: stats.get(keys.email)! }, now);
        if (!decision.allowed) {
          // Refused attempts are not failures: they must not lengthen the owner's wait.
          await this.repo.forgetLoginFailures(attempt);
          throw new RateLimitError(decision.retryAfterSeconds, decision.limited);
        }

        const user = await this.repo.findUserByEmail(email);
        const valid = await verifyPassword(password, user?.passwordHash ?? (await dummyPasswordHash()));
        if (!user || !valid) throw new UnauthorizedError("Wrong email or password.");
        await this.repo.forgetLoginFailures(attempt);
        await this.repo.clearLoginFailures(keys.email_address);
        const token = randomToken(32);
        const maxAgeMs = this.sessionMaxAgeMs;
        const session = await this.repo.createSession({ userId: user.id, tokenHash: hashSecret(token), expiresAt: new Date(now.getTime() + maxAgeMs), now });
        return { user: publicUser(user), session: { token, expiresAt: session.expiresAt.toISOString(), maxAgeSeconds: maxAgeMs / 1000 } };
      },
    },

    logout: {
      async handler(ctx: Context<Input<typeof S.SessionTokenInput>>) {
        const tokenHash = hashSecret(ctx.params.token);
        const session = await this.repo.findSession(tokenHash);
        await this.repo.deleteSession(tokenHash);
        // Gateways cache sessions: every gateway has dropped it before the sign-out is answered (services/bus.ts, broadcastConfirmed).
        if (session) await broadcastConfirmed(this.broker, "accounts.sessionEnded", { sessionId: session.id, userId: session.userId });
        return { success: true };
      },
    },

    /**
     * Resolves a session cookie's token to its user; expired and idle sessions are refused (and removed).
     * `validUntil` (the sooner of the expiry and the idle limit) bounds how long a gateway may remember the answer.
     */
    authenticateSession: {
      visibility: "public",
      async handler(ctx: Context): Promise<SessionUser & { validUntil: string }> {
        // A malformed or over-long token is an unknown credential (401), not a bad request.
        const input = S.SessionTokenInput.safeParse(ctx.params);
        if (!input.success) throw new UnauthorizedError("Sign in to the dashboard first.");
        const { token } = input.data;
        const tokenHash = hashSecret(token);
        const session = await this.repo.findSession(tokenHash);
        const now = new Date();
        if (!session) throw new UnauthorizedError("Sign in to the dashboard first.");
        if (session.expiresAt <= now || now.getTime() - session.lastSeenAt.getTime() > this.sessionIdleMs) {
          await this.repo.deleteSession(tokenHash);
          await ctx.broadcast("accounts.sessionEnded", { sessionId: session.id, userId: session.userId });
          throw new UnauthorizedError("Your session has expired. Sign in again.");
        }
        // Writing on every request would make each read a write; a minute of slack is enough for the idle timeout.
        const touched = now.getTime() - session.lastSeenAt.getTime() > 60_000;
        if (touched) await this.repo.touchSession(session.id, now);
        const user = await this.repo.getUser(session.userId);
        if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
        const validUntil = sessionValidUntil(session, touched ? now : session.lastSeenAt, this.sessionIdleMs);
        return { ...publicUser(user), sessionId: session.id, validUntil: validUntil.toISOString() };
      },
    },

    me: {
      async handler(ctx: Context<unknown, { user?: SessionUser }>) {
        const user = ctx.meta.user;
        if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
        const memberships = await this.repo.listMemberships(user.id);
        return { user: { id: user.id, email: user.email, name: user.name }, workspaces: memberships.map((m) => ({ workspaceId: m.workspaceId, role: m.role })) };
      },
    },

    /**
     * A partner asks for a sign-in link by email. The answer is the same for
     * every email (known, unknown, without an approved enrollment), and the
     * mail is sent after answering, so neither the answer nor its timing says
     * whether the email is a partner's. Every request counts towards the
     * throttle (partner-sign-in.ts), known email or not.
     */
    requestPartnerLink: {
      async handler(ctx: Context<Input<typeof S.PartnerLinkRequest>, { clientAddress?: string }>) {
        const { email } = ctx.params;
        const keys = partnerLinkThrottleKeys(email, ctx.meta.clientAddress ?? "unknown");
        const now = new Date();
        const attempt = await this.repo.recordLoginFailures(Object.values(keys), now);
        const stats = await this.repo.loginFailureStats(Object.values(keys), new Date(now.getTime() - PARTNER_LINK_WINDOW_MS), attempt);
        const decision = decideLoginAttempt(
          { email_address: stats.get(keys.email_address)!, address: stats.get(keys.address)!, email: stats.get(keys.email)! },
          now,
          PARTNER_LINK_THROTTLE_RULES,
        );
        if (!decision.allowed) {
          await this.repo.forgetLoginFailures(attempt);
          throw new RateLimitError(decision.retryAfterSeconds, decision.limited);
        }
        const partner = await call(ctx, "programs.findPartnerForSignIn", { email });
        if (partner) {
          this.issuePartnerLink(ctx, partner, MAGIC_LINK_TTL_MS, true).catch((err: unknown) =>
            this.logger.error("partner sign-in link not sent", logFields({ partnerId: partner.id, error: err instanceof Error ? err.message : String(err) })),
          );
        }
        return { sent: true as const, message: LINK_REQUESTED };
      },
    },

    /** Operators: an invite link for a partner with an approved enrollment, returned (and mailed, with send). */
    createPartnerLink: {
      async handler(ctx: Context<Input<typeof S.CreatePartnerLinkInput>>) {
        const { partnerId, expiresInMinutes, send } = ctx.params;
        const { partner, enrollments } = await call(ctx, "programs.getPartnerEnrollments", { partnerId });
        if (!enrollments.some((e) => e.status === "approved")) throw new NotFoundError(`Partner ${partnerId} has no approved enrollment: approve one before inviting them.`);
        if (send && !partner.email) throw new NotFoundError(`Partner ${partnerId} has no email to send the link to.`);
        const link = await this.issuePartnerLink(ctx, partner, (expiresInMinutes ?? INVITE_LINK_DEFAULT_MINUTES) * 60_000, send);
        return { partnerId, url: link.url, expiresAt: link.expiresAt.toISOString(), sent: link.sent };
      },
    },

    /**
     * Opens a sign-in link: used once (atomically), before it expires, by a
     * partner who still has an approved enrollment. Every refusal is the same
     * 401, whatever the reason.
     */
    signInPartner: {
      async handler(ctx: Context<Input<typeof S.PartnerSignInRequest>>) {
        const now = new Date();
        const link = await this.repo.consumePartnerSignInLink(hashSecret(ctx.params.token), now);
        const refused = "This sign-in link is invalid, used or expired. Ask for a new one.";
        if (!link) throw new UnauthorizedError(refused);
        // A partner removed since the link was made is refused like an expired link; an outage stays an outage (503).
        const { enrollments } = await call(ctx, "programs.getPartnerEnrollments", { partnerId: link.partnerId }).catch((err: unknown) => {
          if ((err as { type?: string } | null)?.type === "not_found") return { enrollments: [] };
          throw err;
        });
        if (!enrollments.some((e) => e.status === "approved")) throw new UnauthorizedError(refused);
        const token = randomToken(32);
        const maxAgeMs = this.sessionMaxAgeMs;
        const session = await this.repo.createPartnerSession({ partnerId: link.partnerId, tokenHash: hashSecret(token), expiresAt: new Date(now.getTime() + maxAgeMs), now });
        return { partnerId: link.partnerId, session: { token, expiresAt: session.expiresAt.toISOString(), maxAgeSeconds: maxAgeMs / 1000 } };
      },
    },

    /**
     * The merchant's server (an API key with embed:write) asks for an embed token for one of its users: the user is
     * found among the program's partners (tenantId, else email) or enrolled, approved; the token is stored hashed.
     */
    createEmbedToken: {
      async handler(ctx: Context<EmbedUser>) {
        const { programId } = ctx.params;
        const { partnerId, enrolled } = await this.embedPartner(ctx, ctx.params);
        const token = EMBED_TOKEN_PREFIX + randomToken(32);
        const now = new Date();
        const expiresAt = new Date(now.getTime() + this.embedTokenTtlMs);
        await this.repo.createEmbedToken({ partnerId, programId, tokenHash: hashSecret(token), expiresAt, now });
        return { token, expiresAt: expiresAt.toISOString(), programId, partnerId, enrolled, embedUrl: embedUrl(this.publicUrl, programId, token) };
      },
    },

    /**
     * The embedded page exchanges its token for a session bound to the token's program and partner (in the answer, not
     * a cookie). The token stays usable until it expires. A partner no longer approved there is refused like an
     * unknown token.
     */
    exchangeEmbedToken: {
      async handler(ctx: Context<Input<typeof S.EmbedSessionRequest>>) {
        const now = new Date();
        const invalid = () => new AppError("embed_token_invalid", "This embed link is not valid. Reload the page in the app that showed it to get a new one.");
        const found = await this.repo.findEmbedToken(hashSecret(ctx.params.token));
        if (!found) throw invalid();
        if (found.expiresAt <= now) {
          const minutes = Math.round((found.expiresAt.getTime() - found.createdAt.getTime()) / 60_000);
          throw new AppError("embed_token_expired", `This embed link has expired (it lasts ${minutes} minutes). Reload the page in the app that showed it to get a new one.`);
        }
        const enrollment = await call(ctx, "programs.getEnrollment", { programId: found.programId, partnerId: found.partnerId }).catch((err: unknown) => {
          if ((err as { type?: string } | null)?.type === "not_found") return null;
          throw err;
        });
        if (enrollment?.status !== "approved") throw invalid();
        const session = randomToken(32);
        const expiresAt = new Date(now.getTime() + Math.min(this.embedSessionTtlMs, this.sessionMaxAgeMs));
        await this.repo.createPartnerSession({ partnerId: found.partnerId, programId: found.programId, tokenHash: hashSecret(session), expiresAt, now });
        return { session, expiresAt: expiresAt.toISOString(), programId: found.programId, partnerId: found.partnerId };
      },
    },

    signOutPartner: {
      async handler(ctx: Context<Input<typeof S.SessionTokenInput>>) {
        const tokenHash = hashSecret(ctx.params.token);
        const session = await this.repo.findPartnerSession(tokenHash);
        await this.repo.deletePartnerSession(tokenHash);
        if (session) await broadcastConfirmed(this.broker, "accounts.partnerSessionEnded", { sessionId: session.id, partnerId: session.partnerId });
        return { success: true };
      },
    },

    /** Resolves a partner cookie's token: the same expiry and idle rules as dashboard sessions. */
    authenticatePartnerSession: {
      visibility: "public",
      async handler(ctx: Context) {
        const input = S.SessionTokenInput.safeParse(ctx.params);
        if (!input.success) throw new UnauthorizedError(NO_PARTNER_SESSION);
        const tokenHash = hashSecret(input.data.token);
        const session = await this.repo.findPartnerSession(tokenHash);
        const now = new Date();
        if (!session) throw new UnauthorizedError(NO_PARTNER_SESSION);
        if (session.expiresAt <= now || now.getTime() - session.lastSeenAt.getTime() > this.sessionIdleMs) {
          await this.repo.deletePartnerSession(tokenHash);
          await ctx.broadcast("accounts.partnerSessionEnded", { sessionId: session.id, partnerId: session.partnerId });
          throw new UnauthorizedError(
            session.programId === null
              ? "Your partner portal session has expired. Ask for a new sign-in link."
              : "This embedded page's session has expired. Reload the page to open it again.",
          );
        }
        const touched = now.getTime() - session.lastSeenAt.getTime() > 60_000;
        if (touched) await this.repo.touchPartnerSession(session.id, now);
        const validUntil = sessionValidUntil(session, touched ? now : session.lastSeenAt, this.sessionIdleMs);
        return { partnerId: session.partnerId, sessionId: session.id, programId: session.programId, validUntil: validUntil.toISOString() };
      },
    },

    notePartnerAddress: {
      async handler(ctx: Context<Input<typeof S.NotePartnerAddressInput>>) {
        const now = new Date();
        await this.repo.notePartnerAddress(ctx.params.partnerId, now.toISOString().slice(0, 10), addressHashOf(ctx.params.address, now), now);
        return null;
      },
    },

    partnerAddressHashes: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.PartnerAddressHashesInput>>) {
        return this.repo.partnerAddressHashes(ctx.params.partnerId, ctx.params.day);
      },
    },

    /** Whether the user's role in the workspace grants the permission. */
    checkPermission: {
      visibility: "public",
      async handler(ctx: Context<Input<typeof S.CheckPermissionInput>>) {
        const { userId, workspaceId, permission } = ctx.params;
        const membership = await this.repo.findMembership(workspaceId, userId);
        return { member: membership !== null, role: membership?.role ?? null, allowed: membership ? roleAllows(membership.role, permission as Permission) : false };
      },
    },
  },

  methods: {
    async requireWorkspace(workspaceId) {
      const workspace = await this.repo.getWorkspace(workspaceId);
      if (!workspace) throw new NotFoundError(`No workspace with id ${workspaceId}.`);
      return workspace;
    },

    /** Gateways cache permission answers: every gateway has dropped the user's in the workspace before we answer. */
    async membershipChanged(workspaceId, userId) {
      await broadcastConfirmed(this.broker, "accounts.membershipChanged", { workspaceId, userId });
    },

    /**
     * The program's partner for a user of the merchant: the one with the tenantId, else the one with the email (given the
     * tenantId when they had none), else a new one, approved, in the group asked for. Two requests at once for a new
     * user: the second one's derived referral code is taken (conflict), so it finds the first one's partner.
     */
    async embedPartner(ctx, { programId, tenantId, email, name, groupId }) {
      const find = async () => {
        const [byTenant] = (await call(ctx, "programs.listPartners", { programId, tenantId, limit: 1 })).data;
        if (byTenant) return { ...byTenant, hasTenant: true };
        const [byEmail] = (await call(ctx, "programs.listPartners", { programId, email, limit: 1 })).data;
        return byEmail ? { ...byEmail, hasTenant: false } : null;
      };
      let found = await find();
      if (!found) {
        try {
          const { partner } = await call(ctx, "programs.createPartner", {
            programId,
            name,
            email,
            tenantId,
            groupId,
            referralCode: embedReferralCode(programId, tenantId),
            status: "approved",
          });
          return { partnerId: partner.id, enrolled: true };
        } catch (err) {
          if ((err as { type?: string } | null)?.type !== "conflict") throw err;
          found = await find();
          if (!found) throw err;
        }
      }
      if (found.status !== "approved") {
        throw new AppError(
          "partner_not_approved",
          `The user with tenantId '${tenantId}' is partner ${found.partnerId} of program ${programId}, ${found.status} there: approve the partner first (Partners in the console), then ask for a token again.`,
        );
      }
      if (!found.hasTenant) {
        // The partner found by email gets the tenantId, so the next token finds them by it (unless another took it meanwhile).
        const detail = await call(ctx, "programs.partnerDetail", { programId, partnerId: found.partnerId });
        if (detail.tenantId === null) {
          await call(ctx, "programs.updatePartner", { programId, partnerId: found.partnerId, tenantId }).catch((err: unknown) => {
            if ((err as { type?: string } | null)?.type !== "conflict") throw err;
          });
        }
      }
      return { partnerId: found.partnerId, enrolled: false };
    },

    /** Stores a new link (its token only hashed) and, with `send`, mails it; the URL is returned for operators. */
    async issuePartnerLink(ctx, partner, ttlMs, send) {
      const token = randomToken(32);
      const now = new Date();
      const expiresAt = new Date(now.getTime() + ttlMs);
      await this.repo.createPartnerSignInLink({ partnerId: partner.id, tokenHash: hashSecret(token), expiresAt, now });
      const url = signInUrl(this.publicUrl, token);
      if (send && partner.email) {
        const minutes = Math.round(ttlMs / 60_000);
        // In the partner's language (docs/partners.md, "Languages"); English when they chose none, or it cannot be read
        // (a sign-in link is never held back for its language).
        const chosen = await call(ctx, "programs.getPartnerLocale", { partnerId: partner.id }).catch(() => ({ locale: null }));
        const locale = chosen.locale ?? "en";
        const say = (key: EmailKey, params?: Record<string, string | number>) => te(locale, key, params);
        await this.mailer.send({
          to: partner.email,
          subject: say("email.signIn.subject"),
          text: `${say("email.hello", { name: partner.name })}\n\n${say("email.signIn.open")}\n\n${url}\n\n${say("email.signIn.once", { minutes })}\n`,
        });
      }
      return { url, expiresAt, sent: send && partner.email !== null };
    },
  },
};

export default AccountsService;
