import os from "node:os";
import { inputValidator, type Input } from "../shared/endpoint";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { call, type ResultOf, broadcastConfirmed } from "./bus";
import { toMajorUnits } from "../shared/domain/money";
import { toDto } from "../shared/dto";
import { mapPage } from "../shared/pagination";
import { AppError, ConflictError, NotFoundError } from "../shared/errors";
import { attemptLabel, countMetric, METRICS } from "../shared/metrics";
import { randomToken } from "../shared/secrets";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { parseInput } from "../shared/validation";
import { generateWebhookSecret } from "../shared/webhook-signature";
import { createNotificationsRepository } from "./notifications/storage";
import { currentPayload, isWebhookEventType, publicEventId, TEST_EVENT_MESSAGE, TEST_EVENT_TYPE, testEventId, WEBHOOK_EVENTS } from "../shared/events";
import { mailerFromEnv, publicUrlFromEnv, type Mailer } from "../shared/mailer";
import { logFields } from "../shared/observability";
import { InvalidRequestError, toForwardedError } from "../shared/errors";
import {
  UNSUBSCRIBED_REASON,
  type ClaimedPartnerEmail,
  type NewPartnerEmail,
  type Notification,
  type NotificationsRepository,
  type PartnerEmail,
  type PartnerKey,
  type Unsubscription,
  type UnreadCounts,
  type WebhookEndpoint,
  type WebhookEventType,
} from "./notifications/repository";
import { NOTIFICATIONS } from "./notifications/endpoints";
import * as S from "./notifications/schemas";
import { NoSubscriberCache } from "./notifications/subscription-cache";
import { isPostbackEventType, MAX_ENABLED_POSTBACKS, MAX_POSTBACKS, postbackData, postbackOwnerOf } from "./notifications/postbacks";
import { WebhookWorker, type WebhookWorkerOptions } from "./notifications/webhook-worker";
import { PartnerEmailWorker } from "./notifications/partner-email-worker";
import { PollingLoop } from "../shared/polling-loop";
import type { Mail } from "../shared/mailer";
import type { Locale } from "../shared/i18n";
import {
  CATEGORY_WORDS,
  categoryOf,
  digestDueAt,
  monthFigures,
  monthOf,
  partnerEmailMessageId,
  payoutEmailKindOf,
  previousMonth,
  renderPartnerEmail,
  SIGN_IN_LINK,
  type EmailFacts,
  type PayoutFacts,
  type RefundFacts,
} from "./notifications/partner-emails";
import { ALLOW_PRIVATE_TARGETS_ENV, privateTargetsAllowed, refusalOfUrl, systemResolve, type TargetPolicy } from "./notifications/webhook-target";

type WebhookConfig = Omit<WebhookWorkerOptions, "workerId" | "logger" | "targets">;

type Methods = {
  workspaceOf(ctx: Context, programId: number): Promise<number | null>;
  programOf(ctx: Context, programId: number): Promise<{ workspaceId: number | null; name: string }>;
  recordMoneyEmails(ctx: Context, eventId: number, type: string, payload: Record<string, unknown>): Promise<void>;
  recordApplicationEmail(ctx: Context, eventId: number, payload: Record<string, unknown>): Promise<void>;
  addresseeOf(ctx: Pick<Context, "call">, key: PartnerKey, facts: EmailFacts): Promise<Addressee>;
  composeEmail(key: EmailKey, facts: EmailFacts, to: Addressee): NewPartnerEmail;
  recordEmail(ctx: Pick<Context, "call">, key: EmailKey, facts: EmailFacts): Promise<boolean>;
  collectDigest(ctx: Pick<Context, "call">, key: PartnerKey, cutoff: Date): Promise<boolean>;
  runEmailSchedule(ctx: Pick<Context, "call">, at: Date): Promise<{ digests: number; summaries: number }>;
  prepareEmail(email: ClaimedPartnerEmail): Promise<Mail | { skip: string }>;
  subscriptionOfToken(token: string): Promise<{ email: PartnerEmail; subscription: Unsubscription }>;
  subscriptionView(ctx: Context, email: PartnerEmail, unsubscribed: boolean): Promise<ResultOf<"notifications.unsubscribe">>;
  consumeEvent(ctx: Context, params: unknown): Promise<{ handled: false } | { handled: true; notices: number; deliveries: number }>;
  subscribedEndpoints(workspaceId: number, type: WebhookEventType, partner: PartnerKey | null): Promise<WebhookEndpoint[]>;
  endpointsChanged(workspaceId: number): Promise<void>;
  checkWebhookTarget(url: string): Promise<void>;
  endpointOf(endpointId: number, workspaceId: number | undefined, programId?: number): Promise<WebhookEndpoint>;
  postbackOf(programId: number, partnerId: number, endpointId: number): Promise<WebhookEndpoint>;
  checkPostbackRoom(programId: number, partnerId: number, adding: boolean): Promise<void>;
  disableEndpoint(endpoint: WebhookEndpoint, reason: string): Promise<WebhookEndpoint>;
  enableEndpoint(endpoint: WebhookEndpoint): Promise<WebhookEndpoint>;
  rotateSecret(endpoint: WebhookEndpoint): Promise<{ endpoint: WebhookEndpoint; secret: string }>;
  sendTest(endpoint: WebhookEndpoint): Promise<ResultOf<"notifications.sendTestWebhook">>;
  retryDelivery(endpoint: WebhookEndpoint, deliveryId: number): Promise<ResultOf<"notifications.retryWebhookDelivery">>;
  endpointWorkspace(ctx: Context, workspaceId: number | undefined, programId: number | null): Promise<number>;
  checkUsable(endpoint: WebhookEndpoint, doing: string): Promise<void>;
};
type Vars = StorageVars<NotificationsRepository> & {
  webhookConfig: WebhookConfig;
  /** Where webhooks may go: the operator setting and the resolver (tests replace `resolve`). */
  webhookTargets: TargetPolicy;
  worker?: WebhookWorker;
  /** Sends the partner emails recorded as pending. */
  emailWorker?: PartnerEmailWorker;
  /** Collects due commission digests and monthly summaries. */
  emailSchedule?: PollingLoop;
  /** The partners' emails (the partner sign-in mailer: MAIL_URL, MAIL_FROM). */
  mailer: Mailer;
  publicUrl: string;
  programCache: Map<number, { workspaceId: number | null; name: string; until: number }>;
  noSubscribers: NoSubscriberCache;
};

/** What identifies a partner email besides its content (repository.ts, PartnerEmail). */
type EmailKey = Pick<NewPartnerEmail, "dedupeKey" | "producer" | "eventId" | "programId" | "partnerId" | "withdrawalId">;
/** Who an email goes to, and from which program. */
interface Addressee {
  partnerName: string;
  recipient: string | null;
  /** The partner's language (their profile's), null: English. */
  locale: Locale | null;
  programName: string;
  replyTo: string | null;
  unsubscribed: boolean;
}

/** An email as callers see it: without its HTML part (the text says the same) and its unsubscribe token (a credential of the partner's). */
const partnerEmailView = (e: PartnerEmail) => {
  const { html: _html, unsubscribeToken: _token, ...view } = e;
  return toDto(view);
};

/** A merchant's endpoint as their routes answer it (never a partner's postback: `partnerId` is always null there). */
const endpointView = (e: WebhookEndpoint) => {
  const { partnerId: _partner, ...view } = e;
  return toDto(view);
};
/** A partner's postback as the portal answers it: without the workspace (partners do not see one). */
const postbackView = (e: WebhookEndpoint) => {
  const { workspaceId: _workspace, ...view } = e;
  return toDto(view);
};

/** "j***@example.com": enough for a partner to recognise the address, not enough to read it off a shared link. */
const maskedAddress = (address: string) => address.replace(/^(.)[^@]*/, "$1***");

/** After a rotation, how long deliveries are also signed with the previous secret (docs/architecture.md, "Endpoint settings"). */
const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60_000;

/** A program's workspace does not change, but a short cache keeps an operator's fix (and a new program name) visible. */
const PROGRAM_CACHE_MS = 5 * 60_000;
const PROGRAM_CACHE_MAX = 10_000;

/**
 * Partner emails: new ones go at once (the worker is nudged), retries are looked for every 5 seconds, a send that gets
 * no answer within a minute (PARTNER_EMAIL_SEND_TIMEOUT_MS) is a failed attempt, and an email is given up after 10
 * attempts (PARTNER_EMAIL_MAX_ATTEMPTS; the backoff doubles from a second: about 8.5 minutes in all).
 */
const PARTNER_EMAIL_INTERVAL_MS = 5000;
const PARTNER_EMAIL_MAX_BACKOFF_MS = 3_600_000;
/**
 * Digests and summaries are looked for every minute (PARTNER_EMAIL_SCHEDULE_MS), a little after they are due: a
 * commission heard of in the last instant before midnight is in that day's digest, a month's last ones in its summary.
 */
const DIGEST_GRACE_MS = 60_000;
const SUMMARY_GRACE_MS = 15 * 60_000;
const SCHEDULE_BATCH = 50;
/** How long an approval email's sign-in link works (made when the email is sent). */
const APPROVAL_LINK_MINUTES = 24 * 60;

const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};

/** The notification as callers see it: `deductionAmount` is `deductionCents` in major units of the currency. */
const notificationDto = <N extends Notification>(n: N) => toDto({ ...n, deductionAmount: toMajorUnits(n.deductionCents, n.currency) });
const withTotal = (counts: UnreadCounts) => ({ ...counts, total: counts.partner_notice + counts.advertiser_warning });

/**
 * Turns commission events from the commissions outbox into a partner notice
 * and, when the partner was already paid, a manual-review warning for the
 * advertiser's workspace (spec 3.1, 6.3), and into signed outbound webhook
 * deliveries for the workspace's endpoints; payouts paid or failed into an
 * email to the partner. Delivery from the outbox is at least once; storing on
 * (event id, kind), (event id, endpoint) and (producer, event id, email kind)
 * makes it exactly once in effect.
 */
const NotificationsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "notifications",
  mixins: [storageMixin(createNotificationsRepository)],

  created() {
    // Read once here: the configuration must not change under a running worker.
    const timeoutMs = positive("WEBHOOK_TIMEOUT_MS", 10_000);
    this.webhookConfig = {
      intervalMs: positive("WEBHOOK_INTERVAL_MS", 1000),
      // A lease shorter than a request would let another worker send the same delivery while this one waits.
      leaseMs: Math.max(positive("WEBHOOK_LEASE_MS", 60_000), timeoutMs + 5000),
      batchSize: 20,
      timeoutMs,
      connectTimeoutMs: Math.min(positive("WEBHOOK_CONNECT_TIMEOUT_MS", 5000), timeoutMs),
      maxAttempts: positive("WEBHOOK_MAX_ATTEMPTS", 16),
      maxBackoffMs: positive("WEBHOOK_MAX_BACKOFF_MS", 3_600_000),
      disableAfterFailures: positive("WEBHOOK_DISABLE_AFTER_FAILURES", 5),
    };
    this.webhookTargets = { allowPrivate: privateTargetsAllowed(), resolve: systemResolve };
    this.programCache = new Map();
    this.mailer = mailerFromEnv((message, fields) => this.logger.info(message, logFields(fields)));
    this.publicUrl = publicUrlFromEnv();
    const ttl = Number(process.env.WEBHOOK_ENDPOINT_CACHE_TTL_MS ?? 5000);
    this.noSubscribers = new NoSubscriberCache(Number.isFinite(ttl) ? ttl : 5000);
  },

  events: {
    /** An endpoint of the workspace was created or enabled (by any instance): its "no subscriber" answers are stale. */
    "notifications.endpointsChanged"(ctx: Context<{ workspaceId: number }>) {
      this.noSubscribers.forget(ctx.params.workspaceId);
    },
  },

  // Params are validated against each action's declared input (notifications/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(NOTIFICATIONS) } },

  actions: {
    /**
     * A producer's outbox batch (its relay's claim, services/clients/outbox-relay.ts): one bus round trip per batch
     * instead of one per event. Consumed one after the other, in order, each answered on its own, so a bad event
     * is deferred and retried alone. Exactly once in effect: notices are unique on (event, kind), deliveries on
     * (producer, event, endpoint).
     */
    events: {
      visibility: "public",
      async handler(ctx: Context<Input<typeof S.EventsInput>>) {
        const { producer, events } = ctx.params;
        const outcomes: ResultOf<"notifications.events"> = [];
        for (const event of events) {
          try {
            await this.consumeEvent(ctx, { ...event, producer });
            outcomes.push({ ok: true });
          } catch (err) {
            outcomes.push({ ok: false, error: toForwardedError(err) });
          }
        }
        return outcomes;
      },
    },

    /** One event: what every relay sent before `events` existed (an older producer may still call it). */
    event: {
      visibility: "public",
      handler(ctx: Context) {
        return this.consumeEvent(ctx, ctx.params);
      },
    },

    /** The commissions relay's action before `event` existed (an older commissions instance may still call it). */
    commissionEvent: {
      visibility: "public",
      handler(ctx: Context) {
        return this.consumeEvent(ctx, { ...(ctx.params as object), producer: "commissions" });
      },
    },

    /** Operators (admin API, CLI, REPL): notifications by workspace, program, partner, kind. */
    list: {
      async handler(ctx: Context<Input<typeof S.ListInput>>) {
        return (await this.repo.list(ctx.params)).map(notificationDto);
      },
    },

    /** Operators (admin API): the emails to partners, with their state. */
    listPartnerEmails: {
      async handler(ctx: Context<Input<typeof S.ListPartnerEmailsInput>>) {
        return (await this.repo.listPartnerEmails(ctx.params)).map(partnerEmailView);
      },
    },

    /** The dashboard: a page of the program's partner emails. */
    listProgramPartnerEmails: {
      async handler(ctx: Context<Input<typeof S.ProgramPartnerEmailsInput>>) {
        await this.programOf(ctx, ctx.params.programId);
        return mapPage(await this.repo.listProgramPartnerEmails(ctx.params), partnerEmailView);
      },
    },

    retryPartnerEmail: {
      async handler(ctx: Context<Input<typeof S.PartnerEmailIdInput>>) {
        const { programId, emailId } = ctx.params;
        const result = await this.repo.retryPartnerEmail(programId, emailId, new Date());
        if (!result) throw new NotFoundError(`No partner email ${emailId} in program ${programId}.`);
        if (result.retried) this.emailWorker?.nudge();
        return { retried: result.retried, email: partnerEmailView(result.email) };
      },
    },

    getPartnerEmailSettings: {
      async handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        await this.programOf(ctx, ctx.params.programId);
        return toDto(await this.repo.getPartnerEmailSettings(ctx.params.programId));
      },
    },

    /** A field left out keeps its value. */
    setPartnerEmailSettings: {
      async handler(ctx: Context<Input<typeof S.PartnerEmailSettingsInput>>) {
        const { programId, ...changes } = ctx.params;
        await this.programOf(ctx, programId);
        const current = await this.repo.getPartnerEmailSettings(programId);
        const next = {
          programId,
          replyTo: changes.replyTo !== undefined ? changes.replyTo : current.replyTo,
          commissionEmails: changes.commissionEmails ?? current.commissionEmails,
          monthlySummary: changes.monthlySummary ?? current.monthlySummary,
        };
        return toDto(await this.repo.putPartnerEmailSettings(next, new Date()));
      },
    },

    /** The public unsubscribe page: what the link is for, changing nothing. */
    unsubscribeLink: {
      async handler(ctx: Context<Input<typeof S.UnsubscribeInput>>) {
        const { email, subscription } = await this.subscriptionOfToken(ctx.params.token);
        return this.subscriptionView(ctx, email, await this.repo.isUnsubscribed(subscription));
      },
    },

    /** One click (RFC 8058) or the page's button: honoured at once, pending emails of the category skipped. */
    unsubscribe: {
      async handler(ctx: Context<Input<typeof S.UnsubscribeInput>>) {
        const { email, subscription } = await this.subscriptionOfToken(ctx.params.token);
        await this.repo.unsubscribe(subscription, new Date());
        return this.subscriptionView(ctx, email, true);
      },
    },

    resubscribe: {
      async handler(ctx: Context<Input<typeof S.UnsubscribeInput>>) {
        const { email, subscription } = await this.subscriptionOfToken(ctx.params.token);
        await this.repo.resubscribe(subscription);
        return this.subscriptionView(ctx, email, false);
      },
    },

    /** Operators (REPL) and tests: collect due digests and monthly summaries now, as at `at`. */
    runEmailSchedule: {
      async handler(ctx: Context<Input<typeof S.RunEmailScheduleInput>>) {
        return this.runEmailSchedule(ctx, ctx.params.at ? new Date(ctx.params.at) : new Date());
      },
    },

    /** Where the inbox's unread counts differ from the notifications (commissions.reconcile reports it). */
    rollupDrift: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.RollupDriftInput>>) {
        return this.repo.rollupDrift(ctx.params.limit);
      },
    },

    /** Dashboard: the workspace's notices and warnings with unread counts. The gateway checked membership. */
    listForWorkspace: {
      async handler(ctx: Context<Input<typeof S.WorkspaceListInput>>) {
        const [page, counts] = [await this.repo.listWorkspacePage(ctx.params), await this.repo.unreadCounts(ctx.params.workspaceId)];
        return { data: page.data.map(notificationDto), unread: withTotal(counts), nextCursor: page.nextCursor };
      },
    },

    markRead: {
      async handler(ctx: Context<Input<typeof S.MarkReadInput>>) {
        const { workspaceId, notificationId } = ctx.params;
        const n = await this.repo.markRead(workspaceId, notificationId, new Date());
        if (!n) throw new NotFoundError(`No notification with id ${notificationId} in workspace ${workspaceId}.`);
        return { data: notificationDto(n), unread: withTotal(await this.repo.unreadCounts(workspaceId)) };
      },
    },

    /** The partner portal: only notices to this partner in this program (the portal service checked the enrollment). */
    listPartnerNotices: {
      async handler(ctx: Context<Input<typeof S.PartnerNoticesInput>>) {
        return mapPage(await this.repo.listPartnerNotices(ctx.params), notificationDto);
      },
    },

    /** Another partner's notice, or one of another program, is not found (never "forbidden": it does not say it exists). */
    markPartnerNoticeRead: {
      async handler(ctx: Context<Input<typeof S.PartnerNoticeReadInput>>) {
        const { partnerId, programId, notificationId } = ctx.params;
        const notice = await this.repo.markPartnerNoticeRead(partnerId, programId, notificationId, new Date());
        if (!notice) throw new NotFoundError(`No notice with id ${notificationId} in program ${programId}.`);
        return notificationDto(notice);
      },
    },

    markAllRead: {
      async handler(ctx: Context<Input<typeof S.MarkAllReadInput>>) {
        const { workspaceId, kind } = ctx.params;
        const updated = await this.repo.markAllRead(workspaceId, kind, new Date());
        return { updated, unread: withTotal(await this.repo.unreadCounts(workspaceId)) };
      },
    },

    /** Registers an endpoint. The signing secret is in this response only. */
    createWebhookEndpoint: {
      async handler(ctx: Context<Input<typeof S.CreateEndpointInput>>) {
        const { programId = null, ...input } = ctx.params;
        const workspaceId = await this.endpointWorkspace(ctx, input.workspaceId, programId);
        await call(ctx, "accounts.getWorkspace", { workspaceId });
        await this.checkWebhookTarget(input.url);
        const secret = generateWebhookSecret();
        const endpoint = await this.repo.createEndpoint({ ...input, workspaceId, programId, secret }, new Date());
        await this.endpointsChanged(endpoint.workspaceId);
        return { ...endpointView(endpoint), secret };
      },
    },

    listWebhookEndpoints: {
      async handler(ctx: Context<Input<typeof S.ListEndpointsInput>>) {
        const { workspaceId, programId } = ctx.params;
        return (await this.repo.listEndpoints(await this.endpointWorkspace(ctx, workspaceId, programId ?? null), programId)).map(endpointView);
      },
    },

    /** Stops new deliveries to the endpoint; pending ones wait until it is enabled again. */
    disableWebhookEndpoint: {
      async handler(ctx: Context<Input<typeof S.DisableEndpointInput>>) {
        const { workspaceId, programId, endpointId, reason } = ctx.params;
        const endpoint = await this.endpointOf(endpointId, workspaceId, programId);
        // A dashboard session's call carries its user (the gateway's meta); the operator's does not.
        const byMember = Boolean((ctx.meta as { user?: unknown }).user);
        return endpointView(await this.disableEndpoint(endpoint, reason ?? (byMember ? "disabled from the dashboard" : "disabled by an operator")));
      },
    },

    /**
     * Enables the endpoint again (its failure count starts over); pending deliveries resume. Its URL is checked again
     * first: an endpoint registered before the check existed (or while private targets were allowed) is not turned
     * back on towards an internal address.
     */
    enableWebhookEndpoint: {
      async handler(ctx: Context<Input<typeof S.EndpointIdInput>>) {
        const { workspaceId, programId, endpointId } = ctx.params;
        return endpointView(await this.enableEndpoint(await this.endpointOf(endpointId, workspaceId, programId)));
      },
    },

    /**
     * A new signing secret, in this answer only. The previous one keeps signing deliveries (a second v1) for
     * PREVIOUS_SECRET_GRACE_MS, so receivers can switch without refusing anything; the one before it ends now.
     */
    rotateWebhookSecret: {
      async handler(ctx: Context<Input<typeof S.EndpointIdInput>>) {
        const { workspaceId, programId, endpointId } = ctx.params;
        const { endpoint, secret } = await this.rotateSecret(await this.endpointOf(endpointId, workspaceId, programId));
        return { ...endpointView(endpoint), secret };
      },
    },

    /**
     * Queues a test.ping event for this endpoint only (whatever its event types), through the same deliveries as any
     * event: signed, retried, logged. Its URL is checked first, as at registration.
     */
    sendTestWebhook: {
      async handler(ctx: Context<Input<typeof S.EndpointIdInput>>) {
        const { workspaceId, programId, endpointId } = ctx.params;
        return this.sendTest(await this.endpointOf(endpointId, workspaceId, programId));
      },
    },

    /** The endpoint's delivery log: a page, newest first, each with every attempt's status code or error. */
    listWebhookDeliveries: {
      async handler(ctx: Context<Input<typeof S.ListDeliveriesInput>>) {
        const filter = ctx.params;
        await this.endpointOf(filter.endpointId, filter.workspaceId, filter.programId);
        return toDto(await this.repo.listDeliveries(filter));
      },
    },

    /** A failed delivery goes out again (a fresh allowance of attempts); a pending or succeeded one is left alone, and the answer says so. */
    retryWebhookDelivery: {
      async handler(ctx: Context<Input<typeof S.RetryDeliveryInput>>) {
        const { workspaceId, programId, endpointId, deliveryId } = ctx.params;
        return this.retryDelivery(await this.endpointOf(endpointId, workspaceId, programId), deliveryId);
      },
    },

    /** The partner portal: the partner's postbacks in the program, enabled or not, without secrets. */
    listPartnerPostbacks: {
      async handler(ctx: Context<Input<typeof S.PartnerPostbacksInput>>) {
        return (await this.repo.listPartnerPostbacks(ctx.params.programId, ctx.params.partnerId)).map(postbackView);
      },
    },

    /**
     * Registers a partner's postback for their events in the program (docs/partners.md, "Postbacks"): the same
     * target check as a merchant's endpoint, within the partner's limits. The signing secret is in this answer only.
     */
    createPartnerPostback: {
      async handler(ctx: Context<Input<typeof S.CreatePartnerPostbackInput>>) {
        const { programId, partnerId, url, eventTypes } = ctx.params;
        await this.checkPostbackRoom(programId, partnerId, true);
        const program = await this.programOf(ctx, programId);
        if (program.workspaceId === null) throw new ConflictError(`Program ${programId} sends no events yet: postbacks are not available in it.`);
        await this.checkWebhookTarget(url);
        const secret = generateWebhookSecret();
        const endpoint = await this.repo.createEndpoint({ workspaceId: program.workspaceId, programId, partnerId, url, description: null, eventTypes, secret }, new Date());
        await this.endpointsChanged(endpoint.workspaceId);
        return { ...postbackView(endpoint), secret };
      },
    },

    disablePartnerPostback: {
      async handler(ctx: Context<Input<typeof S.PartnerPostbackInput>>) {
        const { programId, partnerId, endpointId } = ctx.params;
        return postbackView(await this.disableEndpoint(await this.postbackOf(programId, partnerId, endpointId), "disabled from the partner portal"));
      },
    },

    /** Enables the postback again (within the partner's limit of enabled ones), its URL checked again. */
    enablePartnerPostback: {
      async handler(ctx: Context<Input<typeof S.PartnerPostbackInput>>) {
        const { programId, partnerId, endpointId } = ctx.params;
        const postback = await this.postbackOf(programId, partnerId, endpointId);
        if (!postback.enabled) await this.checkPostbackRoom(programId, partnerId, false);
        return postbackView(await this.enableEndpoint(postback));
      },
    },

    rotatePartnerPostbackSecret: {
      async handler(ctx: Context<Input<typeof S.PartnerPostbackInput>>) {
        const { programId, partnerId, endpointId } = ctx.params;
        const { endpoint, secret } = await this.rotateSecret(await this.postbackOf(programId, partnerId, endpointId));
        return { ...postbackView(endpoint), secret };
      },
    },

    sendPartnerPostbackTest: {
      async handler(ctx: Context<Input<typeof S.PartnerPostbackInput>>) {
        const { programId, partnerId, endpointId } = ctx.params;
        return this.sendTest(await this.postbackOf(programId, partnerId, endpointId));
      },
    },

    listPartnerPostbackDeliveries: {
      async handler(ctx: Context<Input<typeof S.PartnerPostbackDeliveriesInput>>) {
        const { programId, partnerId, ...filter } = ctx.params;
        await this.postbackOf(programId, partnerId, filter.endpointId);
        return toDto(await this.repo.listDeliveries(filter));
      },
    },

    retryPartnerPostbackDelivery: {
      async handler(ctx: Context<Input<typeof S.RetryPartnerPostbackInput>>) {
        const { programId, partnerId, endpointId, deliveryId } = ctx.params;
        return this.retryDelivery(await this.postbackOf(programId, partnerId, endpointId), deliveryId);
      },
    },
  },

  methods: {
    async consumeEvent(ctx: Context, params: unknown) {
      // Other event types (an outbox may grow) are acknowledged unread, whatever their payload.
      if (!isWebhookEventType(parseInput(S.EventTypeInput, params).type)) return { handled: false };
      const { producer, eventId, type, occurredAt, payload: written } = parseInput(S.EventInput, params);
      if (!isWebhookEventType(type)) return { handled: false };
      // Events an earlier version wrote get the fields added since, with the values they stand for.
      const payload = currentPayload(type, written);
      // The documented payload (shared/events.ts); a producer writing anything else is a bug to see, not to send.
      const checked = WEBHOOK_EVENTS[type].schema.safeParse(payload);
      if (!checked.success) throw new InvalidRequestError(`The ${type} event ${producer}:${eventId} does not match its schema: ${checked.error.message}`);
      const workspaceId = await this.workspaceOf(ctx, written.programId);

      let notices = 0;
      if (producer === "commissions" && (type === "commission.refunded" || type === "commission.reversed")) {
        const commission = parseInput(S.CommissionEventInput, params).payload;
        const facts = {
          eventId,
          workspaceId,
          programId: commission.programId,
          partnerId: commission.partnerId,
          commissionId: commission.commissionId,
          transactionId: commission.transactionId,
          status: commission.status,
          deductionCents: commission.deductionCents ?? 0,
          currency: commission.currency,
          reason: commission.reason,
          partnerPaid: commission.wasPaidOut === true,
        };
        if (await this.repo.insertOnce({ ...facts, kind: "partner_notice" })) notices++;
        if (facts.partnerPaid && (await this.repo.insertOnce({ ...facts, kind: "advertiser_warning" }))) notices++;
      }

      // The partner's emails (docs/partners.md, "Emails"): recorded once per event, sent by the email worker.
      if (producer === "commissions") await this.recordMoneyEmails(ctx, eventId, type, payload);
      if (producer === "programs" && type.startsWith("application.")) await this.recordApplicationEmail(ctx, eventId, payload);
      if (producer === "programs" && type === "partner.banned") {
        const ban = payload as { programId: number; partnerId: number; reason: string };
        const key = { dedupeKey: `partner_banned.programs.${eventId}`, producer: "programs", eventId, programId: ban.programId, partnerId: ban.partnerId, withdrawalId: null };
        if (await this.recordEmail(ctx, key, { kind: "partner_banned", reason: ban.reason })) this.emailWorker?.nudge();
      }

      let deliveries = 0;
      if (workspaceId !== null) {
        const now = new Date();
        const createdAt = occurredAt ?? now.toISOString();
        // Frozen here: every attempt sends (and signs) the same bytes. The body's id is unique across producers.
        // Commission events' data is laid out as before this consumer took other producers' events.
        const data = producer === "commissions" && type.startsWith("commission.") ? parseInput(S.CommissionEventInput, params).payload : payload;
        const body = JSON.stringify({ id: publicEventId(producer, eventId), type, createdAt, workspaceId, data });
        const eventProgramId = (payload as { programId?: unknown }).programId;
        // The partner whose postbacks get the event too (docs/partners.md, "Postbacks"), with what the portal shows them.
        const owner = postbackOwnerOf(type, payload);
        const postbackBody = owner && isPostbackEventType(type) ? JSON.stringify({ id: publicEventId(producer, eventId), type, createdAt, data: postbackData(type, payload) }) : null;
        for (const endpoint of await this.subscribedEndpoints(workspaceId, type, owner)) {
          let sent = body;
          if (endpoint.partnerId !== null) {
            // A partner's postback: that partner's events in its program only, never the merchant's body.
            if (!owner || !postbackBody || endpoint.partnerId !== owner.partnerId || endpoint.programId !== owner.programId) continue;
            sent = postbackBody;
          } else if (endpoint.programId !== null && endpoint.programId !== eventProgramId) {
            // An endpoint an API key made gets its program's events only.
            continue;
          }
          if (await this.repo.enqueueDelivery({ producer, endpointId: endpoint.id, eventId, eventType: type, body: sent }, now)) deliveries++;
        }
        if (deliveries > 0) this.worker?.nudge();
      }
      return { handled: true, notices, deliveries };
    },

    /**
     * The workspace's enabled endpoints for the type, and the partner's postbacks for it when the event concerns a
     * partner; "none" is remembered, per partner for theirs (./notifications/subscription-cache.ts).
     */
    async subscribedEndpoints(workspaceId: number, type: WebhookEventType, partner: PartnerKey | null): Promise<WebhookEndpoint[]> {
      const key = partner ? `${type}:${partner.programId}:${partner.partnerId}` : type;
      if (this.noSubscribers.knownEmpty(workspaceId, key)) return [];
      const generation = this.noSubscribers.snapshot();
      const endpoints = await this.repo.listSubscribedEndpoints(workspaceId, type, partner ?? undefined);
      if (endpoints.length === 0) this.noSubscribers.rememberEmpty(workspaceId, key, generation);
      return endpoints;
    },

    /** Forgets the workspace here at once, then in every notifications instance (awaited, so before the caller's answer). */
    async endpointsChanged(workspaceId: number) {
      this.noSubscribers.forget(workspaceId);
      // Confirmed: every other instance has forgotten the workspace before the change is answered, so the next
      // event reaches the endpoint whichever instance consumes it.
      await broadcastConfirmed(this.broker, "notifications.endpointsChanged", { workspaceId });
    },

    /**
     * The endpoint, or 404: also when `workspaceId` (the dashboard's path) is given and the endpoint is another
     * workspace's, with the same answer as for an endpoint that does not exist.
     */
    async endpointOf(endpointId: number, workspaceId: number | undefined, programId?: number): Promise<WebhookEndpoint> {
      const endpoint = await this.repo.getEndpoint(endpointId);
      // A partner's postback is the partner's alone: not found here, whoever asks.
      const merchants = endpoint !== null && endpoint.partnerId === null;
      if (merchants && (workspaceId === undefined || endpoint.workspaceId === workspaceId) && (programId === undefined || endpoint.programId === programId)) return endpoint;
      throw new NotFoundError(workspaceId === undefined ? `No webhook endpoint with id ${endpointId}.` : `No webhook endpoint with id ${endpointId} in workspace ${workspaceId}.`);
    },

    /** The partner's postback in the program, or 404 (another partner's, another program's, or a merchant's endpoint). */
    async postbackOf(programId: number, partnerId: number, endpointId: number): Promise<WebhookEndpoint> {
      const endpoint = await this.repo.getEndpoint(endpointId);
      if (endpoint && endpoint.partnerId === partnerId && endpoint.programId === programId) return endpoint;
      throw new NotFoundError(`No postback with id ${endpointId} in program ${programId}.`);
    },

    /** Refuses one more (enabled) postback beyond the partner's limits in the program; `adding`: a new one. */
    async checkPostbackRoom(programId: number, partnerId: number, adding: boolean) {
      const existing = await this.repo.listPartnerPostbacks(programId, partnerId);
      const enabled = existing.filter((e) => e.enabled).length;
      if (enabled >= MAX_ENABLED_POSTBACKS) {
        throw new AppError("postback_limit_reached", `You have ${enabled} enabled postbacks in program ${programId}, as many as you may have: disable one first.`, {
          enabled,
          limit: MAX_ENABLED_POSTBACKS,
        });
      }
      if (adding && existing.length >= MAX_POSTBACKS) {
        throw new AppError("postback_limit_reached", `You have ${existing.length} postbacks in program ${programId}, as many as you may have: enable a disabled one again instead.`, {
          total: existing.length,
          limit: MAX_POSTBACKS,
        });
      }
    },

    /** Stops new deliveries to the endpoint (keeping a first reason); pending ones wait until it is enabled again. */
    async disableEndpoint(endpoint: WebhookEndpoint, reason: string) {
      const disabled = await this.repo.setEndpointEnabled(endpoint.id, false, reason, new Date());
      if (!disabled) throw new NotFoundError(`No webhook endpoint with id ${endpoint.id}.`);
      return disabled;
    },

    /** Enables the endpoint again (its failure count starts over) after checking its URL; pending deliveries resume. */
    async enableEndpoint(existing: WebhookEndpoint) {
      await this.checkWebhookTarget(existing.url);
      const endpoint = await this.repo.setEndpointEnabled(existing.id, true, null, new Date());
      if (!endpoint) throw new NotFoundError(`No webhook endpoint with id ${existing.id}.`);
      await this.endpointsChanged(endpoint.workspaceId);
      this.worker?.nudge();
      return endpoint;
    },

    /** A new signing secret; the previous one also signs for PREVIOUS_SECRET_GRACE_MS. */
    async rotateSecret(existing: WebhookEndpoint) {
      const secret = generateWebhookSecret();
      const now = new Date();
      const endpoint = await this.repo.rotateEndpointSecret(existing.id, secret, new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS), now);
      if (!endpoint) throw new NotFoundError(`No webhook endpoint with id ${existing.id}.`);
      return { endpoint, secret };
    },

    /**
     * Queues a test.ping delivery to the endpoint (usable: enabled, its URL allowed). A merchant's body names its
     * workspace; a partner's postback body has no workspace (partners do not see one).
     */
    async sendTest(endpoint: WebhookEndpoint) {
      await this.checkUsable(endpoint, "send it a test event");
      const now = new Date();
      const owner = endpoint.partnerId === null ? { workspaceId: endpoint.workspaceId } : {};
      const delivery = await this.repo.enqueueTestDelivery(
        endpoint.id,
        (eventId) =>
          JSON.stringify({ id: testEventId(eventId), type: TEST_EVENT_TYPE, createdAt: now.toISOString(), ...owner, data: { endpointId: endpoint.id, message: TEST_EVENT_MESSAGE } }),
        now,
      );
      this.worker?.nudge();
      return toDto({ ...delivery, attemptLog: [] });
    },

    /** Retries a failed delivery of the endpoint; a pending or succeeded one is answered as it is (`retried: false`). */
    async retryDelivery(endpoint: WebhookEndpoint, deliveryId: number) {
      const missing = () => new NotFoundError(`No delivery ${deliveryId} of webhook endpoint ${endpoint.id}.`);
      const delivery = await this.repo.getDelivery(endpoint.id, deliveryId);
      if (!delivery) throw missing();
      // Nothing to do: answered before the endpoint's state and URL are checked, so a repeated retry always says so.
      if (delivery.status !== "failed") return toDto({ retried: false, delivery });
      await this.checkUsable(endpoint, "retry its deliveries");
      const result = await this.repo.retryDelivery(endpoint.id, deliveryId, new Date());
      if (!result) throw missing();
      if (result.retried) this.worker?.nudge();
      return toDto(result);
    },

    /** The workspace of an endpoint operation: the dashboard's (in its path), or that of the API key's program. */
    async endpointWorkspace(ctx: Context, workspaceId: number | undefined, programId: number | null): Promise<number> {
      if (workspaceId !== undefined) return workspaceId;
      const program = await this.programOf(ctx, programId!);
      if (program.workspaceId === null) throw new ConflictError(`Program ${programId} belongs to no workspace: webhook endpoints are a workspace's.`);
      return program.workspaceId;
    },

    /** Refuses an endpoint that is disabled (409: nothing would be sent) or whose URL fails the target check (422). */
    async checkUsable(endpoint: WebhookEndpoint, doing: string) {
      if (!endpoint.enabled) throw new ConflictError(`Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason ?? "no reason given"}): enable it to ${doing}.`);
      await this.checkWebhookTarget(endpoint.url);
    },

    /** Refuses a URL whose host is, or resolves to, an address that is not public, unless the operator allows it. */
    async checkWebhookTarget(url: string) {
      const refusal = await refusalOfUrl(url, this.webhookTargets);
      if (refusal) throw new AppError("webhook_target_not_allowed", refusal.message, { host: refusal.host, kind: refusal.kind });
    },

    /** The program's workspace, from its owner (programs), cached briefly. */
    async workspaceOf(ctx: Context, programId: number): Promise<number | null> {
      return (await this.programOf(ctx, programId)).workspaceId;
    },

    /** What this service needs of a program (its workspace, its name), from its owner (programs), cached briefly. */
    async programOf(ctx: Context, programId: number) {
      const cached = this.programCache.get(programId);
      if (cached && cached.until > Date.now()) return cached;
      const program = await call(ctx, "programs.get", { programId });
      if (this.programCache.size >= PROGRAM_CACHE_MAX) this.programCache.clear();
      const known = { workspaceId: program.workspaceId ?? null, name: program.name, until: Date.now() + PROGRAM_CACHE_MS };
      this.programCache.set(programId, known);
      return known;
    },

    /**
     * What commission and withdrawal events mean for the partner's emails: a commission earned waits for its digest
     * (due when the program's setting says; at once for `each`); a refund's deduction and a payout paid or failed
     * mail now; all of it is the partner's activity for the monthly summary. Checked against the type's schema.
     */
    async recordMoneyEmails(ctx: Context, eventId: number, type: string, payload: Record<string, unknown>) {
      const p = payload as { programId: number; partnerId: number; currency: string; amountCents: number; commissionId?: number; transactionId?: string };
      const key = { programId: p.programId, partnerId: p.partnerId };
      const now = new Date();
      const activity = {
        producer: "commissions",
        eventId,
        ...key,
        currency: p.currency,
        commissionId: p.commissionId ?? null,
        transactionId: p.transactionId ?? null,
        month: monthOf(now),
        digestDueAt: null,
      };
      const eventEmail = (kind: string) => ({ dedupeKey: `${kind}.commissions.${eventId}`, producer: "commissions", eventId, ...key, withdrawalId: null });
      let recorded = false;
      if (type === "commission.created" && p.amountCents < 0) {
        // A clawback (a manual commission of a negative amount) reduces what the partner has, like a refund.
        await this.repo.recordPartnerActivity({ ...activity, kind: "reduced", amountCents: -p.amountCents }, now);
      } else if (type === "commission.created") {
        const { commissionEmails } = await this.repo.getPartnerEmailSettings(p.programId);
        await this.repo.recordPartnerActivity({ ...activity, kind: "earned", amountCents: p.amountCents, digestDueAt: digestDueAt(commissionEmails, now) }, now);
        if (commissionEmails === "each") recorded = await this.collectDigest(ctx, key, now);
      } else if (type === "commission.refunded" || type === "commission.reversed") {
        const refund = payload as unknown as RefundFacts;
        const deduction = refund.deductionCents ?? 0;
        if (deduction > 0) {
          await this.repo.recordPartnerActivity({ ...activity, kind: "reduced", amountCents: deduction }, now);
          const kind = type === "commission.reversed" ? "commission_reversed" : "commission_reduced";
          recorded = await this.recordEmail(ctx, eventEmail(kind), { kind, refund });
        }
      } else if (type === "withdrawal.paid" || type === "withdrawal.failed") {
        const payout = payload as unknown as PayoutFacts;
        // A payout returned after it was paid takes back what its paid event counted.
        const paidOut = type === "withdrawal.paid" ? payout.amountCents : payout.wasPaid ? -payout.amountCents : 0;
        if (paidOut !== 0) await this.repo.recordPartnerActivity({ ...activity, kind: "paid_out", amountCents: paidOut }, now);
        const kind = payoutEmailKindOf(type, payout);
        if (kind === "payout_paid" || kind === "payout_failed") recorded = await this.recordEmail(ctx, { ...eventEmail(kind), withdrawalId: payout.withdrawalId }, { kind, payout });
      }
      if (recorded) this.emailWorker?.nudge();
    },

    /** An application arrived (pending, or approved at once) or was decided: the applicant's email. */
    async recordApplicationEmail(ctx: Context, eventId: number, payload: Record<string, unknown>) {
      const a = payload as { programId: number; partnerId: number; status: "pending" | "approved" | "declined"; declineMessage: string | null };
      const facts: EmailFacts =
        a.status === "pending"
          ? { kind: "application_received" }
          : a.status === "approved"
            ? { kind: "application_approved" }
            : { kind: "application_declined", declineMessage: a.declineMessage };
      const key = { dedupeKey: `${facts.kind}.programs.${eventId}`, producer: "programs", eventId, programId: a.programId, partnerId: a.partnerId, withdrawalId: null };
      if (await this.recordEmail(ctx, key, facts)) this.emailWorker?.nudge();
    },

    /** The partner's name and address, the program's name and reply-to, and whether the address left the email's category. */
    async addresseeOf(ctx: Pick<Context, "call">, key: PartnerKey, facts: EmailFacts): Promise<Addressee> {
      const [partner, { locale }, program, settings] = await Promise.all([
        call(ctx, "programs.getPartner", { partnerId: key.partnerId }),
        call(ctx, "programs.getPartnerLocale", { partnerId: key.partnerId }),
        this.programOf(ctx as Context, key.programId),
        this.repo.getPartnerEmailSettings(key.programId),
      ]);
      const recipient = partner.email ?? null;
      const category = categoryOf(facts.kind);
      const unsubscribed = recipient !== null && category !== null && (await this.repo.isUnsubscribed({ programId: key.programId, recipient, category }));
      return { partnerName: partner.name, recipient, locale, programName: program.name, replyTo: settings.replyTo, unsubscribed };
    },

    /**
     * The email as it is recorded: its content frozen (every attempt sends the same words and Message-ID), an
     * unsubscribe token for its category, or `skipped` with the reason (no address, unsubscribed).
     */
    composeEmail(key: EmailKey, facts: EmailFacts, to: Addressee): NewPartnerEmail {
      const category = categoryOf(facts.kind);
      const token = category ? randomToken(24) : null;
      const content = renderPartnerEmail(facts, {
        partnerName: to.partnerName,
        programName: to.programName,
        locale: to.locale,
        portalUrl: `${this.publicUrl}/portal`,
        unsubscribeUrl: token ? `${this.publicUrl}/portal/unsubscribe?token=${token}` : null,
      });
      const skipReason = to.recipient === null ? "The partner has no email address: add one to the partner to mail them." : to.unsubscribed ? UNSUBSCRIBED_REASON : null;
      return {
        ...key,
        kind: facts.kind,
        category,
        recipient: to.recipient,
        fromName: to.programName,
        replyTo: to.replyTo,
        ...content,
        messageId: partnerEmailMessageId(key.dedupeKey, this.publicUrl),
        unsubscribeToken: token,
        status: skipReason ? "skipped" : "pending",
        skipReason,
      };
    },

    /**
     * Records the email unless its key is recorded (an event delivered again); returns whether one was recorded
     * pending, to send. A partner without an email address, or unsubscribed from its category, gets it `skipped`.
     */
    async recordEmail(ctx: Pick<Context, "call">, key: EmailKey, facts: EmailFacts) {
      const email = this.composeEmail(key, facts, await this.addresseeOf(ctx, key, facts));
      const recorded = await this.repo.recordPartnerEmail(email, new Date());
      if (recorded && email.status === "skipped") this.logger.info("partner email skipped", logFields({ dedupeKey: key.dedupeKey, partnerId: key.partnerId, reason: email.skipReason }));
      return recorded && email.status === "pending";
    },

    /** The partner's commissions due for a digest by `cutoff`, in one email (none when another instance took them). */
    async collectDigest(ctx: Pick<Context, "call">, key: PartnerKey, cutoff: Date) {
      const { commissionEmails } = await this.repo.getPartnerEmailSettings(key.programId);
      const probe: EmailFacts = { kind: "commission_digest", frequency: commissionEmails, lines: [] };
      const to = await this.addresseeOf(ctx, key, probe);
      return this.repo.collectDigest(
        key,
        cutoff,
        (items) =>
          this.composeEmail(
            { dedupeKey: `commission_digest.${key.programId}.${key.partnerId}.${items[0].id}`, producer: null, eventId: null, ...key, withdrawalId: null },
            { ...probe, lines: items.map((i) => ({ commissionId: i.commissionId ?? 0, transactionId: i.transactionId ?? "", amountCents: i.amountCents, currency: i.currency })) },
            to,
          ),
        new Date(),
      );
    },

    /**
     * Digests due (by `at`, less a minute's grace) and the summaries of the month before `at` (from 15 minutes into
     * the month), a batch of each; every instance may run it at once: digests are collected under locks, summaries
     * recorded once per (program, partner, month).
     */
    async runEmailSchedule(ctx: Pick<Context, "call">, at: Date) {
      let digests = 0;
      for (const key of await this.repo.dueDigests(new Date(at.getTime() - DIGEST_GRACE_MS), SCHEDULE_BATCH)) {
        if (await this.collectDigest(ctx, key, new Date(at.getTime() - DIGEST_GRACE_MS)).catch((err) => void this.logger.warn("digest not collected; retried", err))) digests++;
      }
      let summaries = 0;
      const month = previousMonth(new Date(at.getTime() - SUMMARY_GRACE_MS));
      for (const key of await this.repo.dueSummaries(month, SCHEDULE_BATCH)) {
        const summarise = async () => {
          const balance = await call(ctx, "commissions.balance", key).catch(() => null);
          const facts: EmailFacts = {
            kind: "monthly_summary",
            month,
            figures: monthFigures(await this.repo.activityOf(key, month)),
            balance: balance ? { balanceCents: balance.balanceCents, currency: balance.currency } : null,
          };
          return this.recordEmail(ctx, { dedupeKey: `monthly_summary.${key.programId}.${key.partnerId}.${month}`, producer: null, eventId: null, ...key, withdrawalId: null }, facts);
        };
        if (await summarise().catch((err) => void this.logger.warn("monthly summary not recorded; retried", err))) summaries++;
      }
      if (digests + summaries > 0) this.emailWorker?.nudge();
      return { digests, summaries };
    },

    /** The email whose unsubscribe link carries the token, with what it unsubscribes; 404 otherwise. */
    async subscriptionOfToken(token: string) {
      const email = await this.repo.findPartnerEmailByUnsubscribeToken(token);
      if (!email?.category || !email.recipient) throw new NotFoundError("This unsubscribe link is not known: use the link of a more recent email.");
      return { email, subscription: { programId: email.programId, recipient: email.recipient, category: email.category } };
    },

    async subscriptionView(ctx: Context, email: PartnerEmail, unsubscribed: boolean) {
      const category = email.category!;
      const { name } = await this.programOf(ctx, email.programId);
      return { programName: name, category, categoryWords: CATEGORY_WORDS[category], recipient: maskedAddress(email.recipient ?? ""), unsubscribed };
    },

    /** What the worker sends for a claimed email: its recorded content, an approval's sign-in link made now, unless unsubscribed since. */
    async prepareEmail(email: ClaimedPartnerEmail): Promise<Mail | { skip: string }> {
      if (email.category && (await this.repo.isUnsubscribed({ programId: email.programId, recipient: email.recipient, category: email.category }))) return { skip: UNSUBSCRIBED_REASON };
      let { text, html } = email;
      if (text.includes(SIGN_IN_LINK)) {
        const link = await call(this.broker, "accounts.createPartnerLink", { partnerId: email.partnerId, expiresInMinutes: APPROVAL_LINK_MINUTES, send: false });
        text = text.replaceAll(SIGN_IN_LINK, link.url);
        html = html.replaceAll(SIGN_IN_LINK, link.url.replace(/&/g, "&amp;").replace(/"/g, "&quot;"));
      }
      return {
        to: email.recipient,
        subject: email.subject,
        text,
        html,
        messageId: email.messageId,
        fromName: email.fromName || undefined,
        replyTo: email.replyTo ?? undefined,
        unsubscribeUrl: email.unsubscribeToken ? `${this.publicUrl}/api/public/unsubscribe/${email.unsubscribeToken}` : undefined,
      };
    },
  },

  started() {
    this.worker = new WebhookWorker(this.repo, {
      ...this.webhookConfig,
      targets: this.webhookTargets,
      // Unique per service instance, even with several in one process.
      workerId: `${this.broker.nodeID}:${os.hostname()}:${process.pid}:${randomToken(4)}`,
      logger: this.logger,
      onAttempt: (outcome, attempt) => countMetric(this.broker, METRICS.webhookDeliveries, { outcome, attempt: attemptLabel(attempt) }),
      onEndpointDisabled: () => countMetric(this.broker, METRICS.webhookEndpointsDisabled),
    });
    this.worker.start();
    this.emailWorker = new PartnerEmailWorker(this.repo, this.mailer, {
      workerId: `${this.broker.nodeID}:${os.hostname()}:${process.pid}:${randomToken(4)}:mail`,
      intervalMs: PARTNER_EMAIL_INTERVAL_MS,
      batchSize: 10,
      sendTimeoutMs: positive("PARTNER_EMAIL_SEND_TIMEOUT_MS", 60_000),
      maxAttempts: positive("PARTNER_EMAIL_MAX_ATTEMPTS", 10),
      maxBackoffMs: PARTNER_EMAIL_MAX_BACKOFF_MS,
      logger: this.logger,
      prepare: (email) => this.prepareEmail(email),
    });
    this.emailWorker.start();
    this.emailSchedule = new PollingLoop(async () => (await this.runEmailSchedule(this.broker, new Date())).digests, {
      intervalMs: positive("PARTNER_EMAIL_SCHEDULE_MS", 60_000),
      batchSize: SCHEDULE_BATCH,
      onError: (err) => this.logger.warn("Partner email schedule could not run; retrying.", err),
    });
    this.emailSchedule.start();
    if (this.webhookTargets.allowPrivate) {
      this.logger.warn(`${ALLOW_PRIVATE_TARGETS_ENV}=true: webhooks may be sent to loopback, private and link-local addresses. For self-hosted installs and development only.`);
    }
    countMetric(this.broker, METRICS.webhookEndpointsDisabled, undefined, 0); // shown as 0 until the first one
  },

  async stopped() {
    await this.worker?.stop();
    await this.emailSchedule?.stop();
    await this.emailWorker?.stop();
    await this.mailer?.close();
  },
};

export default NotificationsService;
