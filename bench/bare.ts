/**
 * The bare floor: a plain node:http server doing, for each benchmarked
 * request, the same database work as the real path (the same repository
 * methods, hence the same SQL, in the same order, with the same transaction
 * boundaries, the same ledger functions inside the commissions transaction,
 * the same outbox relays (commissions, sales) delivering the events to notifications, and the same
 * caches with the same TTLs: API keys, programs, the notifications' program
 * workspaces and "no endpoint subscribes" answers), and nothing else: no Moleculer (no broker, no bus, no context,
 * no serialization), no moleculer-web, no zod validation, no rate limiter, no
 * logging. Bodies are JSON.parse'd and trusted. Sale recording and refund
 * reversal are not copies: the floor calls the services' own functions
 * (services/sales/record-sale.ts, reverse-sale.ts, commissions/create-for-sale.ts,
 * reverse-for-sale.ts) with a stand-in for the bus that answers the same action
 * names directly, so the floor's responses cannot drift from the service's.
 *
 * What each route mirrors (see docs/performance.md):
 * - POST /api/v1/track/refund: gateway key lookup -> sales.refund -> commissions.reverseForSale
 * - POST /api/v1/track/sale:   gateway key lookup -> sales.track (attribution.resolve, insert, commissions.createForSale)
 * - GET  /api/tracking/status/:programId: accounts.authenticateSession -> verifyProgramAccess -> status.forProgram
 * - POST /api/v1/track/click:  attribution.trackClick (origin check, referral, the click's details, batched insert)
 * - POST /bare/seed: creates a program, key, partners, clicks, leads and a dashboard session (setup only)
 *
 * Environment: DATABASE_URL (pglite://<dir> or postgres://...), PORT.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { createAccountsRepository } from "../services/accounts/storage";
import { createAttributionRepository } from "../services/attribution/storage";
import { createClickWriter } from "../services/attribution/click-writer";
import { ClickEnricher } from "../services/attribution/click-details";
import { clientAddressOf } from "../shared/client-address";
import { ReferralCache } from "../services/attribution/referral-cache";
import type { Enrollment } from "../services/programs/repository";
import { createForSale } from "../services/commissions/create-for-sale";
import { OutboxRelay } from "../shared/outbox/relay";
import { reversalApplied, reverseForSale } from "../services/commissions/reverse-for-sale";
import { createCommissionsRepository } from "../services/commissions/storage";
import { createNotificationsRepository } from "../services/notifications/storage";
import { digestDueAt, monthOf, partnerEmailMessageId, renderPartnerEmail, type RefundFacts } from "../services/notifications/partner-emails";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../services/notifications/repository";
import { NoSubscriberCache } from "../services/notifications/subscription-cache";
import { createProgramsRepository } from "../services/programs/storage";
import { createRewardsRepository } from "../services/rewards/storage";
import { defaultGroupSeed } from "../services/rewards/default-group";
import type { PartnerRewards } from "../services/rewards/contract";
import type { Program } from "../services/programs/repository";
import { recordSale, trackSaleResponse, type ProgramCaller, type SalesDeps } from "../services/sales/record-sale";
import { reverseSale } from "../services/sales/reverse-sale";
import { createSalesRepository } from "../services/sales/storage";
import { attributionSteps, type AttributionMethod } from "../shared/domain/attribution";
import { roleAllows } from "../shared/domain/permissions";
import { recordedReason } from "../shared/domain/refunds";
import { isSelfReferral, type Identity } from "../shared/domain/self-referral";
import { buildTrackingStatus, TEST_EVENT_CAP } from "../services/status/tracking-status";
import { ApiKeyCache } from "../shared/api-key-cache";
import { InvalidatedCache } from "../shared/invalidated-cache";
import { toDto } from "../shared/dto";
import { publicEventId, type EventProducer } from "../shared/events";
import type { OutboxEvent } from "../shared/outbox/outbox";
import { AppError, ERROR_CODES } from "../shared/errors";
import { hashPassword } from "../shared/passwords";
import { generateApiKey, hashesEqual, hashSecret, parseApiKey, randomToken } from "../shared/secrets";
import { acquireDatabase, releaseDatabase } from "../shared/storage/database";

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL!;
  const db = await acquireDatabase(url);
  // The same factories the services use: they run the real migrations, so the schema is the real one.
  const programs = await createProgramsRepository(db);
  const accounts = await createAccountsRepository(db);
  const attribution = await createAttributionRepository(db);
  // The same batching as attribution.trackClick (same window and size): the same multi-row INSERTs.
  const clickWriter = createClickWriter(attribution);
  const sales = await createSalesRepository(db);
  const commissions = await createCommissionsRepository(db);
  const rewards = await createRewardsRepository(db);
  const notifications = await createNotificationsRepository(db);

  // The outbox relays with the same options (commissions; sales, for sale.created), delivering to the notifications
  // repository directly: what notifications.events does for each event (workspace of the program, cached 5 minutes there too; the
  // notices; the webhook deliveries of the workspace's endpoints, with "no endpoint subscribes" remembered as there),
  // minus the bus and the validation.
  const programCache = new Map<number, { workspaceId: number | null; name: string; until: number }>();
  const programOf = async (programId: number) => {
    const cached = programCache.get(programId);
    if (cached && cached.until > Date.now()) return cached;
    const program = await programs.getProgram(programId);
    const known = { workspaceId: program?.workspaceId ?? null, name: program?.name ?? "", until: Date.now() + 5 * 60_000 };
    programCache.set(programId, known);
    return known;
  };
  const workspaceOf = async (programId: number) => (await programOf(programId)).workspaceId;
  const noSubscribers = new NoSubscriberCache(Number(process.env.WEBHOOK_ENDPOINT_CACHE_TTL_MS ?? 5000));
  const subscribedEndpoints = async (workspaceId: number, type: WebhookEventType) => {
    if (noSubscribers.knownEmpty(workspaceId, type)) return [];
    const generation = noSubscribers.snapshot();
    const endpoints = await notifications.listSubscribedEndpoints(workspaceId, type);
    if (endpoints.length === 0) noSubscribers.rememberEmpty(workspaceId, type, generation);
    return endpoints;
  };
  // The partner emails' work of a commission event (notifications.service.ts, recordMoneyEmails): the activity row
  // (a new commission waits for its digest), and for a refund's deduction the partner, the settings, the
  // unsubscription check, the rendered email and its record; the sending is the worker's, apart from requests.
  const partnerEmails = async (event: OutboxEvent, p: Record<string, any>) => {
    const now = new Date();
    const activity = {
      producer: "commissions",
      eventId: event.id,
      programId: p.programId,
      partnerId: p.partnerId,
      currency: p.currency,
      commissionId: p.commissionId ?? null,
      transactionId: p.transactionId ?? null,
      month: monthOf(now),
    };
    if (event.type === "commission.created") {
      const { commissionEmails } = await notifications.getPartnerEmailSettings(p.programId);
      await notifications.recordPartnerActivity({ ...activity, kind: "earned", amountCents: p.amountCents, digestDueAt: digestDueAt(commissionEmails, now) }, now);
      return;
    }
    if ((event.type !== "commission.refunded" && event.type !== "commission.reversed") || !(p.deductionCents > 0)) return;
    await notifications.recordPartnerActivity({ ...activity, kind: "reduced", amountCents: p.deductionCents, digestDueAt: null }, now);
    const kind = event.type === "commission.reversed" ? "commission_reversed" : "commission_reduced";
    const [partner, program, settings] = await Promise.all([programs.getPartner(p.partnerId), programOf(p.programId), notifications.getPartnerEmailSettings(p.programId)]);
    const recipient = partner?.email ?? null;
    const unsubscribed = recipient !== null && (await notifications.isUnsubscribed({ programId: p.programId, recipient, category: "refunds" }));
    const dedupeKey = `${kind}.commissions.${event.id}`;
    const token = randomBytes(24).toString("base64url");
    const content = renderPartnerEmail(
      { kind, refund: p as RefundFacts },
      { partnerName: partner?.name ?? "", programName: program.name, portalUrl: "http://localhost/portal", unsubscribeUrl: `http://localhost/portal/unsubscribe?token=${token}` },
    );
    await notifications.recordPartnerEmail(
      {
        dedupeKey,
        producer: "commissions",
        eventId: event.id,
        kind,
        category: "refunds",
        programId: p.programId,
        partnerId: p.partnerId,
        withdrawalId: null,
        recipient,
        fromName: program.name,
        replyTo: settings.replyTo,
        ...content,
        messageId: partnerEmailMessageId(dedupeKey, "http://localhost"),
        unsubscribeToken: token,
        status: recipient && !unsubscribed ? "pending" : "skipped",
        skipReason: recipient && !unsubscribed ? null : "no address or unsubscribed",
      },
      now,
    );
  };
  const deliver = async (producer: EventProducer, event: OutboxEvent) => {
    const type = event.type as WebhookEventType;
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) return;
    const p = event.payload as Record<string, any>;
    const workspaceId = await workspaceOf(p.programId);
    if (producer === "commissions" && (type === "commission.refunded" || type === "commission.reversed")) {
      const facts = {
        eventId: event.id,
        workspaceId,
        programId: p.programId,
        partnerId: p.partnerId,
        commissionId: p.commissionId,
        transactionId: p.transactionId,
        status: p.status,
        deductionCents: p.deductionCents ?? 0,
        currency: p.currency,
        reason: p.reason,
        partnerPaid: p.wasPaidOut === true,
      };
      await notifications.insertOnce({ ...facts, kind: "partner_notice" });
      if (facts.partnerPaid) await notifications.insertOnce({ ...facts, kind: "advertiser_warning" });
    }
    if (producer === "commissions") await partnerEmails(event, p);
    if (workspaceId !== null) {
      const now = new Date();
      const body = JSON.stringify({ id: publicEventId(producer, event.id), type, createdAt: event.createdAt.toISOString(), workspaceId, data: p });
      for (const endpoint of await subscribedEndpoints(workspaceId, type)) {
        await notifications.enqueueDelivery({ producer, endpointId: endpoint.id, eventId: event.id, eventType: type, body }, now);
      }
    }
  };
  const relayOptions = (name: string) => ({
    relayId: `bare:${process.pid}:${name}`,
    intervalMs: Number(process.env.OUTBOX_INTERVAL_MS ?? 1000),
    leaseMs: 30_000,
    batchSize: 50,
    maxBackoffMs: 300_000,
    logger: console,
  });
  // Each event of the claimed batch in order, answered on its own (what notifications.events does).
  const deliverAll = (producer: EventProducer) => async (events: OutboxEvent[]) => {
    const failures: Array<string | null> = [];
    for (const event of events)
      failures.push(
        await deliver(producer, event).then(
          () => null,
          (err: Error) => err.message,
        ),
      );
    return failures;
  };
  const relay = new OutboxRelay(commissions.outbox, deliverAll("commissions"), relayOptions("commissions"));
  const salesRelay = new OutboxRelay(sales.outbox, deliverAll("sales"), relayOptions("sales"));
  salesRelay.start();
  relay.start();

  /** A per-process memory of an owner's answers for `ttlMs`, as the services keep them (only found rows). */
  function remembered<V>(ttlMs: number, load: (id: number) => Promise<V | null>): (id: number) => Promise<V | null> {
    const entries = new Map<number, { value: V; until: number }>();
    return async (id) => {
      const hit = entries.get(id);
      if (hit && hit.until > Date.now()) return hit.value;
      const value = await load(id);
      if (value && ttlMs > 0) entries.set(id, { value, until: Date.now() + ttlMs });
      return value;
    };
  }
  /** services/clients/program-cache.ts: the services read programs through a per-process cache with this TTL. */
  const cachedProgram = remembered<Program>(Number(process.env.PROGRAM_CACHE_TTL_MS ?? 5000), (id) => programs.getProgram(id));
  /** The self-referral guard's partner cache (services/clients/self-referral-check.ts), same TTL. */
  const cachedPartner = remembered<Identity>(Number(process.env.PARTNER_CACHE_TTL_MS ?? 60_000), (id) => programs.getPartner(id));

  /**
   * services/clients/partner-rewards-cache.ts over rewards.forPartner (its default group, the partner's membership
   * and the group's rewards), with the service's TTL.
   */
  const partnerRewards = new InvalidatedCache<string, PartnerRewards>(Number(process.env.REWARDS_CACHE_TTL_MS ?? 60_000));
  async function rewardsOf(program: Program, partnerId: number): Promise<PartnerRewards> {
    const key = `${program.id}:${partnerId}`;
    const hit = partnerRewards.get(key);
    if (hit) return hit;
    const fallback = await rewards.ensureDefaultGroup(program.id, defaultGroupSeed(program), new Date());
    const memberOf = await rewards.findMembership(program.id, partnerId);
    const group = (memberOf !== null ? await rewards.getGroup(program.id, memberOf) : null) ?? fallback;
    const answer: PartnerRewards = {
      currency: program.currency,
      group: { id: group.id, name: group.name, holdDays: group.holdDays, minPayoutCents: group.minPayoutCents, customerDiscount: group.customerDiscount, rewardAs: group.rewardAs },
      rewards: await rewards.listRewards(program.id, { groupId: group.id }),
    };
    partnerRewards.set(key, answer, partnerRewards.ticket());
    return answer;
  }

  /** attribution's referral cache (services/attribution/referral-cache.ts), same TTL; approved enrollments only. */
  const referrals = new ReferralCache<Enrollment>(ReferralCache.ttlFromEnv());

  /** The gateway's key cache (same TTL), then programs.authenticateKey on a miss. */
  const keyCache = new ApiKeyCache(Number(process.env.API_KEY_CACHE_TTL_MS ?? 5000));
  async function authenticate(req: http.IncomingMessage): Promise<number> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    const cached = m ? keyCache.get(m[1]) : undefined;
    if (cached) return cached.programId;
    const parsed = m ? parseApiKey(m[1]) : null;
    if (!parsed) throw new HttpError(401, "unauthorized");
    const stored = await programs.findApiKeyByPrefix(parsed.prefix);
    if (!stored || !hashesEqual(stored.secretHash, hashSecret(parsed.secret))) throw new HttpError(401, "unauthorized");
    if (stored.retiredAt) throw new HttpError(401, "api_key_retired");
    keyCache.set(m![1], { programId: stored.programId, keyId: stored.id, scopes: stored.scopes });
    return stored.programId;
  }

  /** attribution.resolve (findPartnerBy for each present hint, in the spec's order; then the self-referral guard's partner read) */
  async function resolve(programId: number, hints: { clickId?: string; email?: string; customerKey?: string; customer?: Identity }) {
    for (const step of attributionSteps(hints)) {
      let found: { partnerId: number; clickId: string | null } | null = null;
      const method: AttributionMethod = step.method;
      if (method === "click") found = await attribution.findClick(programId, step.value);
      else if (method === "email") {
        const lead = await attribution.findAttributedLeadByEmail(programId, step.value);
        found = lead && { partnerId: lead.partnerId!, clickId: lead.clickId };
      } else if (method === "processor_customer") found = await attribution.findProcessorCustomer(programId, step.value);
      else {
        const lead = await attribution.findLeadByCustomerKey(programId, step.value);
        found = lead?.partnerId ? { partnerId: lead.partnerId, clickId: lead.clickId } : null;
      }
      if (!found) continue;
      // services/clients/self-referral-check.ts: with the guard on (the default), the partner is read and compared with the customer.
      const customer = hints.customer;
      if (customer && (customer.email || customer.customerKey) && (await cachedProgram(programId))?.selfReferralGuard) {
        const partner = await cachedPartner(found.partnerId);
        if (partner && isSelfReferral(true, partner, customer)) return { partnerId: found.partnerId, clickId: found.clickId, method, selfReferral: true };
      }
      return { partnerId: found.partnerId, clickId: found.clickId, method };
    }
    return null;
  }

  /**
   * The bus as the sales functions see it (services/sales/record-sale.ts, reverse-sale.ts): the same action names,
   * answered here directly by the same functions the services run (no serialization). programs.get is read through
   * services/clients/program-cache.ts by recordSale itself, keyed by this floor's stand-in broker (no metrics).
   */
  const floorBroker = { isMetricsEnabled: () => false };
  const bus = {
    broker: floorBroker,
    async call(action: string, params: any): Promise<unknown> {
      switch (action) {
        case "attribution.resolve":
          return resolve(params.programId, params);
        case "programs.get":
          return programs.getProgram(params.programId);
        case "commissions.createForSale": {
          const program = await cachedProgram(params.programId);
          if (!program) throw new HttpError(404, "no program");
          // The service's zod input turns the bus's ISO strings into dates.
          const input = {
            ...params,
            occurredAt: params.occurredAt ? new Date(params.occurredAt) : undefined,
            firstPaymentAt: params.firstPaymentAt ? new Date(params.firstPaymentAt) : null,
          };
          const created = await createForSale(commissions, await rewardsOf(program, params.partnerId), input, new Date());
          if (created.created) relay.nudge();
          return created;
        }
        case "commissions.reverseForSale": {
          const response = await reverseForSale(commissions, params, new Date());
          if (reversalApplied(response)) relay.nudge();
          return response;
        }
        default:
          throw new Error(`The floor does not answer ${action}.`);
      }
    },
  } as unknown as ProgramCaller;
  const salesDeps: SalesDeps = {
    repo: sales,
    logger: { info: () => undefined, warn: console.warn },
    outboxRelay: salesRelay,
    referenceRate: async () => null,
    exchangeRates: { maxAgeDays: 4 },
  };

  /** sales.track: recordSale and its response, as the service does them (minus the zod validation and the currency check). */
  async function trackSale(req: http.IncomingMessage, body: any) {
    const programId = await authenticate(req);
    const { sale, commission } = await recordSale(salesDeps, bus, {
      programId,
      transactionId: body.transaction_id,
      amountCents: body.amount_cents,
      currency: body.currency ?? "usd",
      customerKey: body.customer_key ?? null,
      email: body.email ?? null,
      attributionHints: { clickId: body.click_id, email: body.email, customerKey: body.customer_key },
      isTest: body.additional_data?.test_mode === true,
      isRecurring: body.is_recurring ?? false,
      saleType: body.sale_type ?? null,
      subscriptionId: body.subscription_id ?? null,
      processorCustomerId: null,
      occurredAt: new Date(),
    });
    return trackSaleResponse(sale, commission);
  }

  /** sales.refund: reverseSale (commissions.reverseForSale), as the service does it. */
  async function refund(req: http.IncomingMessage, body: any) {
    const programId = await authenticate(req);
    const sale = await sales.findSale(programId, body.transaction_id);
    if (!sale) throw new HttpError(404, "not_found");
    return reverseSale(salesDeps, bus, sale, {
      amountCents: body.refund_amount_cents ?? undefined,
      refundId: body.refund_id ?? undefined,
      reasonCode: body.reason ?? "refund",
      reason: recordedReason(body.refund_reason ?? undefined, body.reason ?? undefined),
    });
  }

  /** services/gateway/auth.ts: sessions and permission answers cached in the gateway with this TTL. */
  const sessionTtlMs = Number(process.env.SESSION_CACHE_TTL_MS ?? 5000);
  const sessionCache = new InvalidatedCache<string, { id: number }>(sessionTtlMs);
  const permissionCache = new InvalidatedCache<string, boolean>(sessionTtlMs);

  /** services/status.service.ts: whether a program has an approved partner and its test events, cached in the status process with this TTL. */
  const statusCacheTtlMs = Number(process.env.STATUS_CACHE_TTL_MS ?? 5000);
  const partnersCache = new InvalidatedCache<number, boolean>(statusCacheTtlMs);
  const testEventsCache = new InvalidatedCache<number, Awaited<ReturnType<typeof attribution.testEventStats>>>(statusCacheTtlMs);
  async function testEvents(programId: number) {
    const hit = testEventsCache.get(programId);
    if (hit !== undefined) return hit;
    const ticket = testEventsCache.ticket();
    const answer = await attribution.testEventStats(programId, TEST_EVENT_CAP);
    testEventsCache.set(programId, answer, ticket);
    return answer;
  }
  async function hasApprovedPartners(programId: number): Promise<boolean> {
    const hit = partnersCache.get(programId);
    if (hit !== undefined) return hit;
    const ticket = partnersCache.ticket();
    const answer = await programs.hasApprovedEnrollment(programId);
    partnersCache.set(programId, answer, ticket);
    return answer;
  }

  /** accounts.authenticateSession + the gateway's verifyProgramAccess + status.forProgram */
  async function status(req: http.IncomingMessage, programId: number) {
    const token = /(?:^|;\s*)svc_session=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
    if (!token) throw new HttpError(401, "unauthorized");
    const tokenHash = hashSecret(decodeURIComponent(token));
    const now = new Date();
    // The gateway's session cache (services/gateway/auth.ts): a hit does no database work.
    let user = sessionCache.get(tokenHash);
    if (!user) {
      const session = await accounts.findSession(tokenHash);
      if (!session || session.expiresAt <= now) throw new HttpError(401, "unauthorized");
      if (now.getTime() - session.lastSeenAt.getTime() > 60_000) await accounts.touchSession(session.id, now);
      const found = await accounts.getUser(session.userId);
      if (!found) throw new HttpError(401, "unauthorized");
      user = { id: found.id };
      sessionCache.set(tokenHash, user, sessionCache.ticket(), session.expiresAt.getTime());
    }

    const owner = await cachedProgram(programId);
    if (!owner) throw new HttpError(404, "not_found");
    // The gateway's permission cache, keyed the same way.
    const accessKey = `${user.id}:${owner.workspaceId}:tracking:read`;
    let allowed = permissionCache.get(accessKey);
    if (allowed === undefined) {
      const membership = owner.workspaceId ? await accounts.findMembership(owner.workspaceId, user.id) : null;
      allowed = membership !== null && roleAllows(membership.role, "tracking:read");
      permissionCache.set(accessKey, allowed, permissionCache.ticket());
    }
    if (!allowed) throw new HttpError(403, "forbidden");

    const [program, { clicks, leads }, hasPartners] = await Promise.all([cachedProgram(programId), testEvents(programId), hasApprovedPartners(programId)]);
    const p = toDto(program!.processor);
    return buildTrackingStatus({
      programId: String(programId),
      clicks: toDto(clicks),
      leads: toDto(leads),
      payments: {
        paymentTrackingMode: program!.paymentTrackingMode,
        connectionStatus: p.connectionStatus,
        accountId: p.accountId,
        chargesEnabled: p.chargesEnabled,
        payoutsEnabled: p.payoutsEnabled,
        detailsSubmitted: p.detailsSubmitted,
        connectedAt: p.connectedAt,
      },
      hasPartners,
      now,
    });
  }

  /** attribution.trackClick (no API key: the program's allowed origins are checked) */
  // A click's details, worked out as the service does (attribution/click-details.ts): the row stored is the same.
  const enricher = ClickEnricher.open("bench floor address key");

  async function click(req: http.IncomingMessage, body: any) {
    const program = await cachedProgram(body.program_id);
    if (!program) throw new HttpError(404, "not_found");
    const origin = req.headers.origin ?? "";
    if (program.allowedOrigins.length && !program.allowedOrigins.includes(origin)) throw new HttpError(403, "forbidden");
    const enrollment = await referrals.lookup(body.program_id, body.referral_code, async () => {
      const found = await programs.findEnrollmentByReferralCode(body.program_id, body.referral_code);
      return found?.status === "approved" ? found : null;
    });
    if (!enrollment) throw new HttpError(404, "not_found");
    const userAgent = typeof req.headers["user-agent"] === "string" ? req.headers["user-agent"].slice(0, 512) : null;
    const timestamp = body.timestamp ? new Date(body.timestamp) : new Date();
    const address = clientAddressOf(req.socket.remoteAddress, undefined, false).replace(/\/64$/, "");
    const created = await clickWriter.add({
      clickId: `clk_${randomToken(16)}`,
      programId: body.program_id,
      partnerId: enrollment.partnerId,
      referralCode: body.referral_code,
      isTest: body.test ?? false,
      landingUrl: body.url ?? null,
      referrer: body.referrer ?? null,
      userAgent,
      timestamp,
      details: enricher.details({ userAgent, address, landingUrl: body.url ?? null, referrer: body.referrer ?? null, at: timestamp }),
    });
    return { success: true, click_id: created.clickId, id: created.id, test: created.isTest };
  }

  /** Setup only: the same rows the benchmark creates through the real admin and tracking API. */
  async function seed(body: { partners: number }) {
    const workspace = await accounts.createWorkspace("Bench workspace");
    const program = await programs.createProgram({
      workspaceId: workspace.id,
      name: "Bench program",
      currency: "usd",
      commissionRule: { type: "percentage", basisPoints: 2000 },
      holdDays: 30,
      recurringCommissionMonths: null,
      testMode: false,
      selfReferralGuard: true,
      paymentTrackingMode: "s2s",
      allowedOrigins: [],
    });
    const key = generateApiKey();
    await programs.createApiKey({ programId: program.id, prefix: key.prefix, secretHash: key.secretHash });
    const referralCodes: string[] = [];
    const customerKeys: string[] = [];
    for (let i = 0; i < body.partners; i++) {
      const partner = await programs.createPartner({ name: `Partner ${i}`, email: null });
      const referralCode = `ref${i}_${randomToken(4)}`;
      await programs.createEnrollment({ partnerId: partner.id, programId: program.id, referralCode, status: "approved" });
      const c = await attribution.createClick({
        clickId: `clk_${randomToken(16)}`,
        programId: program.id,
        partnerId: partner.id,
        referralCode,
        isTest: i === 0,
        landingUrl: null,
        referrer: null,
        userAgent: null,
        timestamp: new Date(),
      });
      const customerKey = `cust_${i}`;
      await attribution.recordLead({ programId: program.id, customerKey, email: null, clickId: c.clickId, partnerId: partner.id, isTest: i === 0, timestamp: new Date() });
      referralCodes.push(referralCode);
      customerKeys.push(customerKey);
    }
    const user = await accounts.createUser({ email: `bench-${randomToken(6)}@example.com`, name: "Bench", passwordHash: await hashPassword(randomToken(16)) });
    await accounts.setMembership({ workspaceId: workspace.id, userId: user!.id, role: "owner" });
    const token = randomToken(32);
    const now = new Date();
    await accounts.createSession({ userId: user!.id, tokenHash: hashSecret(token), expiresAt: new Date(now.getTime() + 7 * 86_400_000), now });
    return { programId: program.id, apiKey: key.key, referralCodes, customerKeys, cookie: `svc_session=${encodeURIComponent(token)}` };
  }

  const readBody = (req: http.IncomingMessage) =>
    new Promise<any>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {});
        } catch (err) {
          reject(new HttpError(400, "invalid_request"));
        }
      });
      req.on("error", reject);
    });

  const server = http.createServer(async (req, res) => {
    try {
      const path = (req.url ?? "/").split("?")[0];
      let result: unknown;
      if (req.method === "POST" && path === "/api/v1/track/refund") result = await refund(req, await readBody(req));
      else if (req.method === "POST" && path === "/api/v1/track/sale") result = await trackSale(req, await readBody(req));
      else if (req.method === "POST" && path === "/api/v1/track/click") result = await click(req, await readBody(req));
      else if (req.method === "GET" && path.startsWith("/api/tracking/status/")) result = await status(req, Number(path.slice("/api/tracking/status/".length)));
      else if (req.method === "GET" && path === "/api/health") result = { status: "ok" };
      else if (req.method === "POST" && path === "/bare/seed") result = await seed(await readBody(req));
      else throw new HttpError(404, "no such endpoint");
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(result));
    } catch (err) {
      const status = err instanceof HttpError ? err.status : err instanceof AppError ? ERROR_CODES[err.errorCode].status : 500;
      if (status >= 500) console.error(err);
      res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
      res.end(
        JSON.stringify({
          success: false,
          error: { code: err instanceof HttpError ? err.message : err instanceof AppError ? err.errorCode : "internal_error", message: String((err as Error).message) },
        }),
      );
    }
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT), "127.0.0.1");

  const stop = async () => {
    server.close();
    await clickWriter.stop();
    await relay.stop();
    await salesRelay.stop();
    await releaseDatabase(url);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
