import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { call, type BroadcastOf, broadcastConfirmed } from "./bus";
import { inputValidator, type Input } from "../shared/endpoint";
import { toDto } from "../shared/dto";
import { mapPage, MAX_PAGE_LIMIT } from "../shared/pagination";
import { readExportBatch } from "../shared/csv-export";
import { PARTNERS_CSV } from "./programs/export";
import { randomInt } from "node:crypto";
import { ApiKeyRetiredError, AppError, ConflictError, InvalidRequestError, NotFoundError, RateLimitError, UnauthorizedError } from "../shared/errors";
import { logFields } from "../shared/observability";
import { presetOf, requestedScopes } from "../shared/domain/api-key-scopes";
import { created, type CreatedMeta } from "../shared/meta";
import { RateLimiter } from "../shared/rate-limiter";
import { generateApiKey, hashesEqual, hashSecret, parseApiKey, randomToken } from "../shared/secrets";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { startServiceOutboxRelay, type ServiceOutboxRelay } from "./clients/outbox-relay";
import { connectedAtAfter } from "./programs/connection-date";
import { createProgramsRepository } from "./programs/storage";
import type { ApiKey, EnrolledPartner, EnrolledPartnerDetail, Enrollment, EnrollmentStatus, Program, ProgramsRepository } from "./programs/repository";
import { PROGRAMS } from "./programs/endpoints";
import * as S from "./programs/schemas";
import type { Page } from "../shared/pagination";
import type {
  ApiKeyView,
  ApplicationDecisionResult,
  EnrollmentDecision as EnrollmentDecisionResult,
  PartnerDetail,
  PartnerRow,
  PayoutRecipient,
  ProgramOverview,
  ProgramBreakdowns,
  ProgramSettings,
} from "./programs/contract";
import { ALLOWED_FROM, enrollmentTransition, targetOf, type EnrollmentDecision } from "./programs/enrollment-status";
import { joinDays, joinPartners, joinTotals } from "./programs/overview";
import {
  alreadyEnrolledMessage,
  answersOf,
  applicationExistsMessage,
  applicationForm,
  applicationProblem,
  applicationsClosedMessage,
  applicationTransition,
  decisionTarget,
  initialDecision,
  type ApplicationDecisionKind,
} from "./programs/applications";
import { currencyExponent } from "../shared/domain/money";
import { applyProfilePatch, profileProblem } from "./programs/partner-profile";

type Methods = {
  requireProgram(id: number): Promise<Program>;
  settingsOf(ctx: Context, program: Program): Promise<ProgramSettings>;
  hasMoney(ctx: Context, programId: number): Promise<boolean>;
  overviewOf(ctx: Context, input: Input<typeof S.OverviewInput>): Promise<ProgramOverview>;
  breakdownsOf(ctx: Context, input: Input<typeof S.BreakdownsInput>): Promise<ProgramBreakdowns>;
  partnersPage(ctx: Context, input: Input<typeof S.ListPartnersInput>): Promise<Page<PartnerRow>>;
  partnerRows(ctx: Context, programId: number, enrollments: readonly EnrolledPartner[]): Promise<PartnerRow[]>;
  partnerDetailOf(ctx: Context, enrolled: EnrolledPartnerDetail): Promise<PartnerDetail>;
  requireEnrolledPartner(programId: number, partnerId: number): Promise<EnrolledPartnerDetail>;
  decide(programId: number, partnerId: number, decision: EnrollmentDecision): Promise<EnrollmentDecisionResult>;
  setEnrollmentStatus(
    programId: number,
    partnerId: number,
    status: EnrollmentStatus,
    allowedFrom?: readonly EnrollmentStatus[],
  ): Promise<{ enrollment: Enrollment; enrolled: boolean; changed: boolean } | null>;
  announceEnrollment(enrollment: Enrollment): Promise<void>;
  isLiveGroup(ctx: Context, programId: number, groupId: number): Promise<boolean>;
  requireLiveGroup(ctx: Context, programId: number, groupId: number): Promise<void>;
  decideApplication(
    ctx: Context,
    input: { programId: number; applicationId: number; groupId?: number; message?: string },
    decision: ApplicationDecisionKind,
  ): Promise<ApplicationDecisionResult>;
  afterEnrollmentChange(result: { enrollment: Enrollment; enrolled: boolean; changed: boolean } | null): Promise<void>;
};

/** An API key as the list shows it: the beginning of the key as the merchant sees it, never the secret or its hash. */
const apiKeyView = (k: ApiKey): ApiKeyView => ({
  id: k.id,
  programId: k.programId,
  name: k.name,
  prefix: `svc_sk_${k.prefix}`,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  retiredAt: k.retiredAt?.toISOString() ?? null,
  scopes: k.scopes,
  preset: presetOf(k.scopes),
});

/** How long an Idempotency-Key's answer is kept for replays (Stripe's 24 hours). */
const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 3_600_000;

/** The overview's partner table stays one screenful of data: 100 partners at most. */
const OVERVIEW_PARTNERS = 100;

/** Where the merchant reads an application (its getApplication route). */
const applicationLocation = (programId: number, applicationId: number) => `/api/programs/${programId}/applications/${applicationId}`;

type Vars = StorageVars<ProgramsRepository> & {
  outboxRelay?: ServiceOutboxRelay;
  /** Deletes Idempotency-Key records past their lifetime, every hour. */
  idempotencySweep?: NodeJS.Timeout;
  /** Applications per client address and hour (APPLICATION_RATE_LIMIT), counted by this instance. */
  applicationLimiter: RateLimiter;
};

/** Owns programs, their API keys, partners and partner enrollments. */
const ProgramsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "programs",
  mixins: [storageMixin(createProgramsRepository)],

  // Params are validated against each action's declared input (programs/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(PROGRAMS) } },

  created() {
    this.applicationLimiter = new RateLimiter(Number(process.env.APPLICATION_RATE_LIMIT ?? 5), 3_600_000);
  },

  actions: {
    create: {
      async handler(ctx: Context<Input<typeof S.CreateProgramInput>>) {
        const input = ctx.params;
        if (input.workspaceId !== null) await call(ctx, "accounts.getWorkspace", { workspaceId: input.workspaceId });
        return toDto(await this.repo.createProgram(input));
      },
    },

    /** Operators: every program, or one workspace's. */
    list: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListProgramsInput>>) {
        return mapPage(await this.repo.listProgramsPage(ctx.params), toDto);
      },
    },
    /** Dashboard: the workspace's programs (the gateway checked the membership). */
    listForWorkspace: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListWorkspaceProgramsInput>>) {
        return mapPage(await this.repo.listProgramsPage(ctx.params), toDto);
      },
    },

    get: {
      // Safe to send again: if its node is lost mid-call, the caller retries it on another instance (shared/failover.ts).
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        return toDto(await this.requireProgram(programId));
      },
    },

    /**
     * Set by operators, and by the processor's account webhooks. A connected account belongs to one program.
     * The connection date is decided here for every caller (`connectedAtAfter`).
     */
    updateProcessorConnection: {
      async handler(ctx: Context<Input<typeof S.UpdateProcessorConnectionInput>>) {
        const { programId, ...update } = ctx.params;
        const program = await this.requireProgram(programId);
        if (update.accountId) {
          const owner = await this.repo.findProgramByProcessorAccount(update.accountId);
          if (owner && owner.id !== programId) throw new ConflictError(`Processor account '${update.accountId}' is already connected to program ${owner.id}.`);
        }
        const patch = { ...update, connectedAt: connectedAtAfter(program.processor, update, new Date()) };
        const updated = toDto(await this.repo.updateProcessorConnection(programId, patch));
        // Other services cache programs (services/clients/program-cache.ts): awaited, so this process's copies are gone before we answer.
        await ctx.broadcast("programs.changed", { programId });
        return updated;
      },
    },

    /** The program a processor connected account belongs to, or null. */
    findByProcessorAccount: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProcessorAccountInput>>) {
        const { accountId } = ctx.params;
        const program = await this.repo.findProgramByProcessorAccount(accountId);
        return program ? toDto(program) : null;
      },
    },

    /** The settings API (docs/dashboard-api.md, "Settings"). */
    settings: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        return this.settingsOf(ctx, await this.requireProgram(ctx.params.programId));
      },
    },

    /**
     * Every field is checked before anything is written (the input schema; the currency against the program's
     * sales and commissions), so a refused change changes nothing. Hold days are the default group's (rewards owns
     * them: the value commissions use), set through rewards first; the program's own copy follows.
     */
    updateSettings: {
      async handler(ctx: Context<Input<typeof S.UpdateSettingsInput>>) {
        const { programId, ...patch } = ctx.params;
        const program = await this.requireProgram(programId);
        if (patch.currency !== undefined && patch.currency !== program.currency && (await this.hasMoney(ctx, programId))) {
          throw new ConflictError(
            `The currency of program ${programId} is fixed: it has sales or commissions in ${program.currency.toUpperCase()}, and balances are kept in it. Create another program for another currency.`,
          );
        }
        const autoApproveGroupId = patch.applications?.autoApproveGroupId;
        if (autoApproveGroupId != null && !(await this.isLiveGroup(ctx, programId, autoApproveGroupId))) {
          throw new InvalidRequestError(
            `Invalid 'applications.autoApproveGroupId': program ${programId} has no live partner group ${autoApproveGroupId} (unknown or archived). Choose a group of the Rewards screen, or null for the default group.`,
          );
        }
        if (patch.holdDays !== undefined) {
          const group = await call(ctx, "rewards.defaultGroup", { programId });
          if (group.holdDays !== patch.holdDays) await call(ctx, "rewards.updateGroup", { programId, groupId: group.id, holdDays: patch.holdDays });
        }
        const updated = await this.repo.updateProgramSettings(programId, patch);
        if (!updated) throw new NotFoundError(`No program with id ${programId}.`);
        // Other services cache programs (origins, currency): awaited, so this process's copies are gone before we answer.
        await ctx.broadcast("programs.changed", { programId });
        return this.settingsOf(ctx, updated);
      },
    },

    fraudSettings: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        return { settings: (await this.requireProgram(ctx.params.programId)).fraudSettings };
      },
    },

    updateFraudSettings: {
      async handler(ctx: Context<Input<typeof S.UpdateFraudSettingsInput>>) {
        const { programId, ...fraudSettings } = ctx.params;
        await this.requireProgram(programId);
        const updated = await this.repo.updateProgramSettings(programId, { fraudSettings });
        if (!updated) throw new NotFoundError(`No program with id ${programId}.`);
        // Commissions read the rules from their program cache: awaited, so this process's copy is gone before we answer.
        await ctx.broadcast("programs.changed", { programId });
        return { settings: updated.fraudSettings };
      },
    },

    partnerFraudFacts: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.EnrollmentInput>>) {
        const { programId, partnerId } = ctx.params;
        const [partner, payoutDetailsSharedWith] = await Promise.all([this.repo.getPartner(partnerId), this.repo.partnersSharingPayoutDetails(programId, partnerId)]);
        return { email: partner?.email ?? null, payoutDetailsSharedWith };
      },
    },

    /** The secret is returned once, here; only its hash is stored. */
    createApiKey: {
      async handler(ctx: Context<Input<typeof S.CreateApiKeyInput>, { user?: unknown }>) {
        const { programId, name } = ctx.params;
        // The dashboard lists keys by name; the operator's and the CLI's may stay unnamed (they were before names).
        if (name === undefined && ctx.meta.user) throw new InvalidRequestError("Invalid 'name': is required: name the key so the list of keys tells it apart");
        await this.requireProgram(programId);
        const { key, prefix, secretHash } = generateApiKey();
        const stored = await this.repo.createApiKey({ programId, prefix, secretHash, name: name ?? null, scopes: requestedScopes(ctx.params) });
        return { ...apiKeyView(stored), apiKey: key };
      },
    },

    listApiKeys: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        await this.requireProgram(programId);
        return { programId, data: (await this.repo.listApiKeys(programId)).map(apiKeyView) };
      },
    },

    /** Reported by gateways, at most once per key per API_KEY_USE_INTERVAL_MS each (not a write per request). */
    recordKeyUse: {
      async handler(ctx: Context<Input<typeof S.RecordKeyUseInput>>) {
        await this.repo.recordApiKeyUse(ctx.params.keyId, ctx.params.at);
        return null;
      },
    },

    /** Internal (gateway): a write on the program that succeeded. A key's entry is named by the key's name (or prefix) then. */
    recordActivity: {
      async handler(ctx: Context<Input<typeof S.RecordActivityInput>>) {
        const entry = ctx.params;
        const key = entry.actorType === "api_key" ? (await this.repo.listApiKeys(entry.programId)).find((k) => k.id === entry.actorId) : undefined;
        await this.repo.recordActivity({ ...entry, actorLabel: key ? (key.name ?? key.prefix) : entry.actorLabel, createdAt: new Date() });
        return null;
      },
    },

    listActivity: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListActivityInput>>) {
        const { programId, actor, ...filter } = ctx.params;
        await this.requireProgram(programId);
        return this.repo.listActivity(programId, { ...filter, ...actor });
      },
    },

    /** An Idempotency-Key lives 24 hours from its first request (docs/api.md, "Idempotency"). */
    claimIdempotencyKey: {
      async handler(ctx: Context<Input<typeof S.ClaimIdempotencyKeyInput>>) {
        const { keyId, key, requestHash } = ctx.params;
        const now = new Date();
        return this.repo.claimIdempotencyKey({ apiKeyId: keyId, key, requestHash, now, expiresBefore: new Date(now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS) });
      },
    },

    completeIdempotencyKey: {
      async handler(ctx: Context<Input<typeof S.CompleteIdempotencyKeyInput>>) {
        const { keyId, key, status, body } = ctx.params;
        await this.repo.completeIdempotencyKey(keyId, key, { status, body });
        return null;
      },
    },

    releaseIdempotencyKey: {
      async handler(ctx: Context<Input<typeof S.ReleaseIdempotencyKeyInput>>) {
        await this.repo.releaseIdempotencyKey(ctx.params.keyId, ctx.params.key);
        return null;
      },
    },

    /** The dashboard's route names the program: a key of another program is not found there. */
    retireApiKey: {
      async handler(ctx: Context<Input<typeof S.RetireApiKeyInput>>) {
        const { keyId, programId } = ctx.params;
        const key = await this.repo.retireApiKey(keyId, new Date(), programId);
        if (!key) throw new NotFoundError(programId === undefined ? `No API key with id ${keyId}.` : `No API key with id ${keyId} in program ${programId}.`);
        // Gateways cache authenticated keys: awaited, so this process's gateway has forgotten it before we answer.
        await ctx.broadcast("programs.apiKeyRetired", { keyId: key.id, programId: key.programId });
        return { id: key.id, programId: key.programId, retiredAt: key.retiredAt!.toISOString() };
      },
    },

    /** Resolves a Bearer key to its program; unknown and retired keys are refused. */
    authenticateKey: {
      idempotent: true,
      async handler(ctx: Context) {
        // A malformed or over-long key is an invalid credential (401), not a bad request.
        const input = S.AuthenticateKeyInput.safeParse(ctx.params);
        const parsed = input.success ? parseApiKey(input.data.key) : null;
        if (!parsed) throw new UnauthorizedError();
        const stored = await this.repo.findApiKeyByPrefix(parsed.prefix);
        if (!stored || !hashesEqual(stored.secretHash, hashSecret(parsed.secret))) throw new UnauthorizedError();
        if (stored.retiredAt) throw new ApiKeyRetiredError();
        return { programId: stored.programId, keyId: stored.id, scopes: stored.scopes };
      },
    },

    /**
     * Creates a partner enrolled in the program (approved unless asked pending) with a referral code, optionally in a
     * group, with the merchant's tenant id and metadata (docs/api.md, "Partners").
     */
    createPartner: {
      async handler(ctx: Context<Input<typeof S.CreatePartnerInput>>) {
        const { groupId, tenantId, metadata, ...input } = ctx.params;
        await this.requireProgram(input.programId);
        const referralCode = input.referralCode ?? randomToken(6);
        if (await this.repo.findEnrollmentByReferralCode(input.programId, referralCode)) {
          throw new ConflictError(`Referral code '${referralCode}' is already used in program ${input.programId}.`);
        }
        if (tenantId !== undefined && (await this.repo.listEnrollments(input.programId, { tenantId, limit: 1 })).data.length) {
          throw new ConflictError(`Tenant id '${tenantId}' is already a partner's in program ${input.programId}.`);
        }
        if (groupId !== undefined) await this.requireLiveGroup(ctx, input.programId, groupId);
        const partner = await this.repo.createPartner({ name: input.name, email: input.email ?? null, customerKey: input.customerKey ?? null });
        const enrollment = await this.repo.createEnrollment({
          partnerId: partner.id,
          programId: input.programId,
          referralCode,
          status: input.status,
        });
        if (!enrollment) throw new ConflictError(`Referral code '${referralCode}' is already used in program ${input.programId}.`);
        this.outboxRelay?.nudge(); // its partner.enrolled event committed with it
        await this.announceEnrollment(enrollment);
        // A tenant id taken meanwhile (a concurrent enrollment) leaves the partner without it: the answer says so.
        const merchantFields = tenantId !== undefined || metadata !== undefined ? await this.repo.updateEnrollment(input.programId, partner.id, { tenantId, metadata }) : null;
        if (groupId !== undefined) await call(ctx, "rewards.assignGroups", { programId: input.programId, assignments: [{ partnerId: partner.id, groupId }] });
        const stored = merchantFields && merchantFields !== "duplicate" ? merchantFields : null;
        return toDto({ partner, enrollment: { ...enrollment, tenantId: stored?.tenantId ?? null, metadata: stored?.metadata ?? {} } });
      },
    },

    /** The approved partner behind a referral code, or null. */
    findReferral: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.FindReferralInput>>) {
        const { programId, referralCode } = ctx.params;
        const enrollment = await this.repo.findEnrollmentByReferralCode(programId, referralCode);
        return enrollment && enrollment.status === "approved" ? toDto(enrollment) : null;
      },
    },

    enrolledPartnerIds: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.EnrolledPartnerIdsInput>>) {
        const { programId, partnerIds } = ctx.params;
        return (await this.repo.findEnrolledPartners(programId, partnerIds)).map((e) => e.partnerId);
      },
    },

    payoutRecipients: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PayoutRecipientsInput>>) {
        const { programId, partnerIds } = ctx.params;
        const enrolled = [];
        // In slices, so a program with many partners does not open thousands of queries at once.
        for (let i = 0; i < partnerIds.length; i += 1000) enrolled.push(...(await this.repo.findEnrolledPartners(programId, partnerIds.slice(i, i + 1000))));
        const recipients: PayoutRecipient[] = [];
        for (let i = 0; i < enrolled.length; i += 50) {
          const slice = enrolled.slice(i, i + 50);
          const profiles = await Promise.all(slice.map((e) => this.repo.getPartnerProfile(e.partnerId)));
          slice.forEach((e, j) => {
            const p = profiles[j];
            if (!p) return;
            const { updatedAt: _updatedAt, locale: _locale, ...details } = p;
            recipients.push({ ...toDto(details), status: e.status });
          });
        }
        return recipients;
      },
    },

    getEnrollment: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.EnrollmentInput>>) {
        const { programId, partnerId } = ctx.params;
        const enrollment = await this.repo.findEnrollment(programId, partnerId);
        if (!enrollment) throw new NotFoundError(`Partner ${partnerId} is not enrolled in program ${programId}.`);
        return toDto(enrollment);
      },
    },

    /** Internal (commissions' account-credit payouts): who the merchant credits, by its own id of the user (tenantId). */
    creditRecipient: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.EnrollmentInput>>) {
        const { programId, partnerId } = ctx.params;
        const enrolled = await this.requireEnrolledPartner(programId, partnerId);
        // The Stripe customer a stripe_balance reward credits: the merchant's own metadata on the partner.
        const stripeCustomerId = /^cus_[A-Za-z0-9]+$/.test(enrolled.metadata.stripe_customer_id ?? "") ? enrolled.metadata.stripe_customer_id : null;
        return { partnerId, tenantId: enrolled.tenantId, email: enrolled.partner.email, name: enrolled.partner.name, stripeCustomerId };
      },
    },

    /** A partner's own identity (internal: the self-referral guard compares it with a lead's or sale's). */
    getPartner: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerIdInput>>) {
        const partner = await this.repo.getPartner(ctx.params.partnerId);
        if (!partner) throw new NotFoundError(`No partner ${ctx.params.partnerId}.`);
        return toDto(partner);
      },
    },

    /** An existing partner in one more program. */
    enrollPartner: {
      async handler(ctx: Context<Input<typeof S.EnrollPartnerInput>>) {
        const { programId, partnerId, status } = ctx.params;
        await this.requireProgram(programId);
        if (!(await this.repo.getPartner(partnerId))) throw new NotFoundError(`No partner ${partnerId}.`);
        if (await this.repo.findEnrollment(programId, partnerId)) throw new ConflictError(`Partner ${partnerId} is already enrolled in program ${programId}.`);
        const referralCode = ctx.params.referralCode ?? randomToken(6);
        const enrollment = await this.repo.createEnrollment({ partnerId, programId, referralCode, status });
        if (!enrollment) throw new ConflictError(`Referral code '${referralCode}' is already used in program ${programId}.`);
        await this.announceEnrollment(enrollment);
        return toDto(enrollment);
      },
    },

    /**
     * The partner portal's sign-in: of the partners with this email, the
     * oldest with an approved enrollment (a partner enrolled in several
     * programs is one partner: see enrollPartner); null when none.
     */
    findPartnerForSignIn: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerEmailInput>>) {
        for (const partner of await this.repo.findPartnersByEmail(ctx.params.email)) {
          const enrollments = await this.repo.listPartnerEnrollments(partner.id);
          if (enrollments.some((e) => e.status === "approved")) return toDto(partner);
        }
        return null;
      },
    },

    getPartnerEnrollments: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerIdInput>>) {
        const partner = await this.repo.getPartner(ctx.params.partnerId);
        if (!partner) throw new NotFoundError(`No partner ${ctx.params.partnerId}.`);
        return toDto({ partner, enrollments: await this.repo.listPartnerEnrollments(partner.id) });
      },
    },

    /** The partner's profile and payout details: the partner portal's, for the signed-in partner only. */
    getPartnerProfile: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerIdInput>>) {
        const profile = await this.repo.getPartnerProfile(ctx.params.partnerId);
        if (!profile) throw new NotFoundError(`No partner ${ctx.params.partnerId}.`);
        return toDto(profile);
      },
    },

    /** The partner's language, for the emails they get (the rest of the profile, bank details included, stays here). */
    getPartnerLocale: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerIdInput>>) {
        const profile = await this.repo.getPartnerProfile(ctx.params.partnerId);
        if (!profile) throw new NotFoundError(`No partner ${ctx.params.partnerId}.`);
        return { locale: profile.locale };
      },
    },

    /**
     * Sets the fields given and checks the resulting profile (partner-profile.ts) under the partner's lock, so two
     * concurrent changes cannot leave, say, PayPal payouts without a PayPal email. Error messages name fields, never
     * their values: bank details are not logged.
     */
    updatePartnerProfile: {
      async handler(ctx: Context<Input<typeof S.UpdatePartnerProfileInput>>) {
        const { partnerId, ...patch } = ctx.params;
        const profile = await this.repo.updatePartnerProfile(
          partnerId,
          (current) => {
            const next = applyProfilePatch(current, patch);
            const problem = profileProblem(next);
            if (problem) throw new InvalidRequestError(`Invalid '${problem.field}': ${problem.message}.`, { issues: [problem] });
            return next;
          },
          new Date(),
        );
        if (!profile) throw new NotFoundError(`No partner ${partnerId}.`);
        return toDto(profile);
      },
    },
    /** The program overview (docs/merchants.md): figures per day, per partner and in total. */
    overview: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.OverviewInput>>) {
        return this.overviewOf(ctx, ctx.params);
      },
    },

    /** Clicks, leads and sales by country, device, browser and referrer domain (docs/dashboard-api.md, "Traffic breakdowns"). */
    breakdowns: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.BreakdownsInput>>) {
        return this.breakdownsOf(ctx, ctx.params);
      },
    },

    /** The partners list: enrollments newest first, with each partner's all-time totals. */
    listPartners: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListPartnersInput>>) {
        return this.partnersPage(ctx, ctx.params);
      },
    },

    /** One partner of the program: the list's row (all-time totals, balance) with the team's notes. */
    partnerDetail: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerDetailInput>>) {
        const { programId, partnerId } = ctx.params;
        await this.requireProgram(programId);
        return this.partnerDetailOf(ctx, await this.requireEnrolledPartner(programId, partnerId));
      },
    },

    /** Sets the fields given (notes, referral code, group, tenant id, metadata) and answers the detail after the change. */
    updatePartner: {
      async handler(ctx: Context<Input<typeof S.UpdatePartnerInput>>) {
        const { programId, partnerId, groupId, ...patch } = ctx.params;
        await this.requireProgram(programId);
        const before = await this.requireEnrolledPartner(programId, partnerId);
        if (groupId !== undefined) await this.requireLiveGroup(ctx, programId, groupId);
        const updated = await this.repo.updateEnrollment(programId, partnerId, patch);
        if (updated === "duplicate") throw new ConflictError(`The referral code or tenant id is another partner's in program ${programId}; nothing was changed.`);
        if (!updated) throw new NotFoundError(`Partner ${partnerId} is not enrolled in program ${programId}.`);
        // Links with the old code stop counting at once (attribution drops its cached copy).
        if (updated.referralCode !== before.referralCode) await this.announceEnrollment(before);
        if (groupId !== undefined) await call(ctx, "rewards.assignGroups", { programId, assignments: [{ partnerId, groupId }] });
        return this.partnerDetailOf(ctx, updated);
      },
    },

    /**
     * One batch of the partners CSV export: pages of the partners list (shared/csv-export.ts; the gateway writes
     * the file), 100 rows each, as many partners as the other services total in one call.
     */
    /** Declined with a partner.banned event (the partner's email), then their uncredited commissions voided. */
    banPartner: {
      async handler(ctx: Context<Input<typeof S.BanPartnerInput>>) {
        const { programId, partnerId, reason } = ctx.params;
        await this.requireProgram(programId);
        await this.requireEnrolledPartner(programId, partnerId);
        const result = (await this.repo.setEnrollmentStatus(programId, partnerId, "declined", new Date(), ["approved", "pending"], { reason }))!;
        if (result.changed) {
          this.outboxRelay?.nudge(); // its partner.banned event committed with it
          await this.announceEnrollment(result.enrollment);
        }
        const { voided } = await call(ctx, "commissions.voidUncredited", { programId, partnerId, reason });
        const { status, referralCode } = result.enrollment;
        return { partnerId, programId, status, referralCode, changed: result.changed, voidedCommissions: voided };
      },
    },

    exportPartners: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ExportPartnersInput>>) {
        const { currency } = await this.requireProgram(ctx.params.programId);
        const read = async (limit: number) => mapPage(await this.partnersPage(ctx, { ...ctx.params, limit }), (row) => ({ ...row, currency }));
        return readExportBatch(PARTNERS_CSV, read, MAX_PAGE_LIMIT);
      },
    },

    approvePartner: {
      async handler(ctx: Context<Input<typeof S.EnrollmentDecisionInput>>) {
        return this.decide(ctx.params.programId, ctx.params.partnerId, "approve");
      },
    },

    declinePartner: {
      async handler(ctx: Context<Input<typeof S.EnrollmentDecisionInput>>) {
        return this.decide(ctx.params.programId, ctx.params.partnerId, "decline");
      },
    },

    setPartnerStatus: {
      async handler(ctx: Context<Input<typeof S.SetEnrollmentStatusInput>>) {
        const { programId, partnerId, status } = ctx.params;
        return this.decide(programId, partnerId, status === "approved" ? "approve" : "decline");
      },
    },

    hasApprovedPartners: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        const { programId } = ctx.params;
        return this.repo.hasApprovedEnrollment(programId);
      },
    },

    /** The public application form (docs/dashboard-api.md, "Applications"): a closed one too, so the page can say so. */
    applicationForm: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ApplicationFormInput>>) {
        return applicationForm(await this.requireProgram(ctx.params.programId));
      },
    },

    /**
     * An application from the public form: limited per client address; the honeypot field filled is answered as a
     * success and nothing is stored or sent; then the program's rules (applications.ts), and the partner, enrollment
     * and application in one transaction. Mail and the group move follow the commit: their failure is logged and
     * undoes nothing.
     */
    apply: {
      async handler(ctx: Context<Input<typeof S.ApplyInput>, CreatedMeta & { clientAddress?: string }>) {
        const { programId, company, acceptTerms, answers, ...applicant } = ctx.params;
        const retryAfter = this.applicationLimiter.hit(ctx.meta.clientAddress ?? "unknown");
        if (retryAfter) throw new RateLimitError(retryAfter, "Too many applications from this client address");
        const program = await this.requireProgram(programId);
        if (company) {
          // Filled by a bot (people do not see the field): the answer of a success, and nothing else.
          const applicationId = randomInt(1, 1_000_000);
          return created(ctx, applicationLocation(programId, applicationId), { applicationId, status: "received" as const });
        }
        const settings = program.applications;
        if (!settings.open) throw new AppError("applications_closed", applicationsClosedMessage(programId));
        const problem = applicationProblem(settings, { answers, acceptTerms });
        if (problem) throw new InvalidRequestError(`Invalid '${problem.field}': ${problem.message}.`, { issues: [problem] });
        const groupIsLive = settings.autoApprove && settings.autoApproveGroupId !== null ? await this.isLiveGroup(ctx, programId, settings.autoApproveGroupId) : true;
        const decision = initialDecision(settings, groupIsLive);
        if (!groupIsLive) this.logger.warn("auto-approval group is not live: application left pending", logFields({ programId, groupId: settings.autoApproveGroupId }));
        const result = await this.repo.createApplication({
          programId,
          name: applicant.name,
          email: applicant.email,
          website: applicant.website ?? null,
          promotion: applicant.promotion,
          answers: answersOf(settings.questions, answers),
          status: decision.status,
          groupId: decision.groupId,
          referralCode: randomToken(6),
          now: new Date(),
        });
        if (result.outcome === "no_program") throw new NotFoundError(`No program with id ${programId}.`);
        if (result.outcome === "application_exists") throw new AppError("application_exists", applicationExistsMessage(applicant.email));
        if (result.outcome === "already_enrolled") throw new AppError("already_enrolled", alreadyEnrolledMessage(applicant.email, result.status));
        const { application } = result;
        await this.afterEnrollmentChange({ enrollment: result.enrollment, enrolled: result.enrolled, changed: true });
        if (application.groupId !== null) {
          await call(ctx, "rewards.assignGroups", { programId, assignments: [{ partnerId: application.partnerId, groupId: application.groupId }] }).catch((err: unknown) =>
            this.logger.error(
              "auto-approved partner not moved to its group",
              logFields({ programId, applicationId: application.id, error: err instanceof Error ? err.message : String(err) }),
            ),
          );
        }
        this.outboxRelay?.nudge(); // its application.created event (notifications mails the applicant)
        return created(ctx, applicationLocation(programId, application.id), {
          applicationId: application.id,
          status: application.status === "approved" ? ("approved" as const) : ("received" as const),
        });
      },
    },

    /** The review list: the program's applications, newest first. */
    listApplications: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListApplicationsInput>>) {
        const { programId, ...filter } = ctx.params;
        await this.requireProgram(programId);
        return mapPage(await this.repo.listApplications(programId, filter), toDto);
      },
    },

    getApplication: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ApplicationIdInput>>) {
        const { programId, applicationId } = ctx.params;
        await this.requireProgram(programId);
        const application = await this.repo.getApplication(programId, applicationId);
        if (!application) throw new NotFoundError(`No application with id ${applicationId} in program ${programId}.`);
        return toDto(application);
      },
    },

    approveApplication: {
      async handler(ctx: Context<Input<typeof S.ApproveApplicationInput>>) {
        return this.decideApplication(ctx, ctx.params, "approve");
      },
    },

    declineApplication: {
      async handler(ctx: Context<Input<typeof S.DeclineApplicationInput>>) {
        return this.decideApplication(ctx, ctx.params, "decline");
      },
    },
  },

  methods: {
    async requireProgram(id: number): Promise<Program> {
      const program = await this.repo.getProgram(id);
      if (!program) throw new NotFoundError(`No program with id ${id}.`);
      return program;
    },

    async settingsOf(ctx: Context, program: Program): Promise<ProgramSettings> {
      const [group, currencyFixed] = await Promise.all([call(ctx, "rewards.defaultGroup", { programId: program.id }), this.hasMoney(ctx, program.id)]);
      return {
        programId: program.id,
        name: program.name,
        currency: program.currency,
        currencyFixed,
        cookieWindowDays: program.cookieWindowDays,
        holdDays: group.holdDays,
        defaultLandingUrl: program.defaultLandingUrl,
        brandColor: program.brandColor,
        logoUrl: program.logoUrl,
        allowedOrigins: program.allowedOrigins,
        applications: program.applications,
      };
    },

    /** Whether the program has a sale (test ones too) or a commission (a lead reward pays without a sale): its currency is then fixed. */
    async hasMoney(ctx: Context, programId: number): Promise<boolean> {
      const [sales, commissions] = await Promise.all([call(ctx, "sales.list", { programId, limit: 1 }), call(ctx, "commissions.list", { programId, limit: 1 })]);
      return sales.data.length > 0 || commissions.data.length > 0;
    },

    /**
     * Each service counts its own data (no service reads another's tables); joined here on day and partner. The
     * partner table: the partners with the most revenue in the range (ties: lower id first), then those without
     * revenue with the most clicks, 100 at most; their figures asked for by id once the two owners have named them.
     */
    async overviewOf(ctx: Context, input: Input<typeof S.OverviewInput>): Promise<ProgramOverview> {
      const program = await this.requireProgram(input.programId);
      // One partner's overview: every stats query filtered by the partner, so the days and totals are theirs alone.
      if (input.partnerId !== undefined) await this.requireEnrolledPartner(input.programId, input.partnerId);
      const range = { programId: input.programId, from: input.from, to: input.to, test: input.test };
      const stats = (query: { partnerIds?: number[]; partners?: boolean; days?: boolean }) =>
        Promise.all([call(ctx, "attribution.stats", { ...range, ...query }), call(ctx, "sales.stats", { ...range, ...query }), call(ctx, "commissions.stats", { ...range, ...query })]);
      const ranking =
        input.partnerId === undefined
          ? Promise.all([call(ctx, "sales.topPartners", { ...range, limit: OVERVIEW_PARTNERS }), call(ctx, "attribution.topPartners", { ...range, limit: 2 * OVERVIEW_PARTNERS })])
          : null;
      const [[activity, sales, commissions], ranked] = await Promise.all([stats(input.partnerId === undefined ? { partners: false } : { partnerIds: [input.partnerId] }), ranking]);
      // Filtered, the stats answer a row (of zeros) for the partner even without activity: listed only with some.
      const shownIds = ranked
        ? [...new Set([...ranked[0].partnerIds, ...ranked[1].partnerIds])].slice(0, OVERVIEW_PARTNERS)
        : joinPartners(activity, sales, commissions)
            .filter((p) => p.clicks + p.leads + p.sales + p.commissions > 0)
            .map((p) => p.partnerId);
      // The ranked partners' figures over the range (their totals only, no daily series), and their names.
      const [figures, enrollments] = await Promise.all([
        ranked ? (shownIds.length ? stats({ partnerIds: shownIds, days: false }).then((rows) => joinPartners(...rows, shownIds)) : []) : joinPartners(activity, sales, commissions, shownIds),
        this.repo.findEnrolledPartners(input.programId, shownIds),
      ]);
      const enrolled = new Map(enrollments.map((e) => [e.partnerId, e]));
      return {
        programId: program.id,
        workspaceId: program.workspaceId,
        currency: program.currency,
        currencyExponent: currencyExponent(program.currency),
        from: activity.from!,
        to: activity.to!,
        test: input.test,
        partnerId: input.partnerId ?? null,
        days: joinDays(activity, sales, commissions),
        totals: joinTotals(activity, sales, commissions),
        partners: figures.map((p) => {
          const e = enrolled.get(p.partnerId);
          return { ...p, name: e?.partner.name ?? `Partner ${p.partnerId}`, status: e?.status ?? "unknown", referralCode: e?.referralCode ?? "" };
        }),
        partnersWithRevenue: ranked ? ranked[0].partnersCounted : Number(sales.totals.revenueCents > 0),
        partnersWithClicks: ranked ? ranked[1].partnersCounted : Number(activity.totals.clicks > 0),
      };
    },

    /**
     * Each owner counts and ranks its own families (attribution: clicks and leads; sales: sales and amounts), asked in
     * parallel for the same range; one partner's when partnerId is given (enrolled in the program, else 404).
     */
    async breakdownsOf(ctx: Context, input: Input<typeof S.BreakdownsInput>): Promise<ProgramBreakdowns> {
      const program = await this.requireProgram(input.programId);
      if (input.partnerId !== undefined) await this.requireEnrolledPartner(input.programId, input.partnerId);
      const query = { programId: input.programId, from: input.from, to: input.to, test: input.test, ...(input.partnerId !== undefined ? { partnerIds: [input.partnerId] } : {}) };
      const [activity, sales] = await Promise.all([call(ctx, "attribution.breakdowns", query), call(ctx, "sales.breakdowns", query)]);
      return {
        programId: program.id,
        currency: program.currency,
        currencyExponent: currencyExponent(program.currency),
        from: activity.from,
        to: activity.to,
        test: input.test,
        partnerId: input.partnerId ?? null,
        clicks: activity.clicks,
        leads: activity.leads,
        sales: sales.sales,
      };
    },

    /** One page of enrollments, then the totals of exactly those partners from each service (all time, live data). */
    async partnersPage(ctx: Context, input: Input<typeof S.ListPartnersInput>): Promise<Page<PartnerRow>> {
      await this.requireProgram(input.programId);
      const { status, q, email, tenantId, limit, cursor } = input;
      const page = await this.repo.listEnrollments(input.programId, { status, q, email, tenantId, limit, cursor });
      return { data: await this.partnerRows(ctx, input.programId, page.data), nextCursor: page.nextCursor };
    },

    /** Rows of the partners list for these enrollments (in their order): the totals of exactly those partners from each service. */
    async partnerRows(ctx: Context, programId: number, enrollments: readonly EnrolledPartner[]): Promise<PartnerRow[]> {
      if (!enrollments.length) return [];
      const partnerIds = enrollments.map((e) => e.partnerId);
      const query = { programId, allTime: true, partnerIds };
      const [activity, sales, commissions] = await Promise.all([call(ctx, "attribution.stats", query), call(ctx, "sales.stats", query), call(ctx, "commissions.stats", query)]);
      const totals = joinPartners(activity, sales, commissions, partnerIds);
      return enrollments.map((e, i) => {
        const { partnerId: _id, ...figures } = totals[i];
        return {
          partnerId: e.partnerId,
          name: e.partner.name,
          email: e.partner.email,
          status: e.status,
          referralCode: e.referralCode,
          enrolledAt: e.createdAt.toISOString(),
          totals: figures,
        };
      });
    },

    /** The partner detail: the list's row of this enrollment, and the team's notes. */
    async partnerDetailOf(ctx: Context, enrolled: EnrolledPartnerDetail): Promise<PartnerDetail> {
      const [[row], profile, application, balance] = await Promise.all([
        this.partnerRows(ctx, enrolled.programId, [enrolled]),
        this.repo.getPartnerProfile(enrolled.partnerId),
        this.repo.findPartnerApplication(enrolled.programId, enrolled.partnerId),
        call(ctx, "commissions.balance", { programId: enrolled.programId, partnerId: enrolled.partnerId }),
      ]);
      // The merchant sees where the partner is and how they want to be paid, not their account details (payouts decide that).
      return {
        ...row,
        heldForReviewCents: balance.heldForReviewCents,
        notes: enrolled.notes,
        tenantId: enrolled.tenantId,
        metadata: enrolled.metadata,
        application: application && toDto(application),
        country: profile?.country ?? null,
        payoutMethod: profile?.payoutMethod ?? null,
      };
    },

    async requireEnrolledPartner(programId: number, partnerId: number): Promise<EnrolledPartnerDetail> {
      const enrolled = await this.repo.getEnrolledPartner(programId, partnerId);
      if (!enrolled) throw new NotFoundError(`Partner ${partnerId} is not enrolled in program ${programId}.`);
      return enrolled;
    },

    /** Approve or decline (enrollment-status.ts says which changes are allowed). */
    async decide(programId: number, partnerId: number, decision: EnrollmentDecision): Promise<EnrollmentDecisionResult> {
      await this.requireProgram(programId);
      const current = await this.repo.findEnrollment(programId, partnerId);
      if (!current) throw new NotFoundError(`Partner ${partnerId} is not enrolled in program ${programId}.`);
      const transition = enrollmentTransition(current.status, decision);
      if (transition.kind === "refused") throw new ConflictError(transition.message);
      // Conditional on the current status: a concurrent decision cannot be overwritten by a stale read.
      const result = await this.setEnrollmentStatus(programId, partnerId, targetOf(decision), ALLOWED_FROM[decision]);
      if (!result) throw new NotFoundError(`Partner ${partnerId} is not enrolled in program ${programId}.`);
      if (result.changed) {
        // The partner's pending application follows (with its mail), so the review list never shows a decided partner as waiting.
        const application = await this.repo.findPartnerApplication(programId, partnerId);
        if (application?.status === "pending") {
          const decided = await this.repo.decideApplication(
            programId,
            application.id,
            { status: decisionTarget(decision), groupId: null, declineMessage: null },
            new Date(),
            ALLOWED_FROM[decision],
          );
          await this.afterEnrollmentChange(decided?.enrollment ?? null);
          if (decided?.changed) this.outboxRelay?.nudge(); // its application.decided event
        }
      }
      const e = result.enrollment;
      return { partnerId: e.partnerId, programId: e.programId, status: e.status, referralCode: e.referralCode, changed: result.changed };
    },

    /** Whether the group is a live (not archived) partner group of the program: rewards owns groups. */
    async isLiveGroup(ctx: Context, programId: number, groupId: number): Promise<boolean> {
      const { groups } = await call(ctx, "rewards.list", { programId });
      return groups.some((g) => g.id === groupId);
    },
    async requireLiveGroup(ctx: Context, programId: number, groupId: number) {
      if (!(await this.isLiveGroup(ctx, programId, groupId))) throw new NotFoundError(`No live partner group ${groupId} in program ${programId}.`);
    },

    /**
     * Approve or decline an application (applications.ts says which changes are allowed). The partner moves into
     * the group first (rewards checks it is live: a bad group decides nothing); then the application and its
     * enrollment change in one transaction, conditional on the application still pending; the mail follows.
     */
    async decideApplication(
      ctx: Context,
      input: { programId: number; applicationId: number; groupId?: number; message?: string },
      decision: ApplicationDecisionKind,
    ): Promise<ApplicationDecisionResult> {
      const { programId, applicationId } = input;
      await this.requireProgram(programId);
      const current = await this.repo.getApplication(programId, applicationId);
      if (!current) throw new NotFoundError(`No application ${applicationId} in program ${programId}.`);
      const transition = applicationTransition(current, decision);
      if (transition.kind === "refused") throw new ConflictError(transition.message);
      if (transition.kind === "unchanged") return { application: toDto(current), changed: false };
      const groupId = decision === "approve" ? (input.groupId ?? null) : null;
      if (groupId !== null) await call(ctx, "rewards.assignGroups", { programId, assignments: [{ partnerId: current.partnerId, groupId }] });
      const declineMessage = decision === "decline" && input.message ? input.message : null;
      const target = decisionTarget(decision);
      // The enrollment changes as the Partners screen's decision would (a compare-and-set on its status).
      const result = await this.repo.decideApplication(programId, applicationId, { status: target, groupId, declineMessage }, new Date(), ALLOWED_FROM[decision]);
      if (!result) throw new NotFoundError(`No application ${applicationId} in program ${programId}.`);
      await this.afterEnrollmentChange(result.enrollment);
      if (!result.changed) {
        // Another decision came first: the same one is no change, the other is refused as above.
        const after = applicationTransition(result.application, decision);
        if (after.kind === "refused") throw new ConflictError(after.message);
        return { application: toDto(result.application), changed: false };
      }
      this.outboxRelay?.nudge(); // its application.decided event (notifications mails the applicant)
      return { application: toDto(result.application), changed: true };
    },

    /** After an enrollment was written: the relay nudged for its event, caches told of its status. */
    async afterEnrollmentChange(result: { enrollment: Enrollment; enrolled: boolean; changed: boolean } | null) {
      if (result?.enrolled) this.outboxRelay?.nudge();
      if (result?.changed) await this.announceEnrollment(result.enrollment);
    },

    /** attribution caches referral codes, status whether a program has an approved partner: every listener has dropped its copy before we answer. */
    async announceEnrollment(e: Enrollment) {
      const payload: BroadcastOf<"programs.enrollmentChanged"> = { programId: e.programId, partnerId: e.partnerId, referralCode: e.referralCode, status: e.status };
      await broadcastConfirmed(this.broker, "programs.enrollmentChanged", payload);
    },

    /**
     * Writes an enrollment's status (null when the partner is not enrolled). Becoming approved writes the
     * partner.enrolled event in the same transaction and sends it at once: the one call for an approval.
     */
    async setEnrollmentStatus(programId: number, partnerId: number, status: EnrollmentStatus, allowedFrom?: readonly EnrollmentStatus[]) {
      const result = await this.repo.setEnrollmentStatus(programId, partnerId, status, new Date(), allowedFrom);
      if (result?.enrolled) this.outboxRelay?.nudge();
      // attribution caches referral codes (a declined link stops counting), status whether the program has an approved partner.
      if (result?.changed) await this.announceEnrollment(result.enrollment);
      return result;
    },
  },

  started() {
    // partner.enrolled events, from the programs outbox to notifications.
    this.outboxRelay = startServiceOutboxRelay(this, "programs", this.repo.outbox);
    this.idempotencySweep = setInterval(() => {
      this.repo
        .deleteIdempotencyKeysBefore(new Date(Date.now() - IDEMPOTENCY_KEY_LIFETIME_MS))
        .catch((err: unknown) => this.logger.warn("Idempotency-Key sweep failed", logFields({ error: String(err) })));
    }, 3_600_000);
    this.idempotencySweep.unref();
  },

  async stopped() {
    clearInterval(this.idempotencySweep);
    await this.outboxRelay?.stop();
  },
};

export default ProgramsService;
