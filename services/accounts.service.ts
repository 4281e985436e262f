import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import { decideLoginAttempt, LOGIN_FAILURE_WINDOW_MS, loginThrottleKeys } from "./accounts/login-throttle";
import { roleAllows, type Permission, type Role } from "../shared/domain/permissions";
import { toDto } from "../shared/dto";
import { ConflictError, NotFoundError, RateLimitError, UnauthorizedError } from "../shared/errors";
import { hashPassword, verifyPassword } from "../shared/passwords";
import { hashSecret, randomToken } from "../shared/secrets";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { createAccountsRepository } from "./accounts/storage";
import type { AccountsRepository, User } from "./accounts/repository";
import { ACCOUNTS } from "./accounts/endpoints";
import * as S from "./accounts/schemas";

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

const publicUser = (u: User) => ({ id: u.id, email: u.email, name: u.name });

/** Owns workspaces, dashboard users, their roles and sessions. */
type Vars = StorageVars<AccountsRepository> & { sessionMaxAgeMs: number; sessionIdleMs: number };

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- moleculer's own default for "no methods"
const AccountsService: ServiceSchema<ServiceSettingSchema, {}, Vars> = {
  name: "accounts",
  mixins: [storageMixin(createAccountsRepository)],

  created() {
    this.sessionMaxAgeMs = seconds("SESSION_MAX_AGE_SECONDS", 7 * 86_400);
    this.sessionIdleMs = seconds("SESSION_IDLE_TIMEOUT_SECONDS", 86_400);
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

    grantRole: {
      async handler(ctx: Context<Input<typeof S.GrantRoleInput>>) {
        const input = ctx.params;
        if (!(await this.repo.getWorkspace(input.workspaceId))) throw new NotFoundError(`No workspace with id ${input.workspaceId}.`);
        if (!(await this.repo.getUser(input.userId))) throw new NotFoundError(`No user with id ${input.userId}.`);
        return toDto(await this.repo.setMembership({ ...input, role: input.role as Role }));
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
        const { token } = ctx.params;
        await this.repo.deleteSession(hashSecret(token));
        return { success: true };
      },
    },

    /** Resolves a session cookie's token to its user; expired and idle sessions are refused (and removed). */
    authenticateSession: {
      visibility: "public",
      async handler(ctx: Context): Promise<SessionUser> {
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
          throw new UnauthorizedError("Your session has expired. Sign in again.");
        }
        // Writing on every request would make each read a write; a minute of slack is enough for the idle timeout.
        if (now.getTime() - session.lastSeenAt.getTime() > 60_000) await this.repo.touchSession(session.id, now);
        const user = await this.repo.getUser(session.userId);
        if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
        return { ...publicUser(user), sessionId: session.id };
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
};

export default AccountsService;
