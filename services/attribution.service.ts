import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { inputValidator, type Input } from "../shared/endpoint";
import { attributionSteps, type AttributionMethod } from "../shared/domain/attribution";
import { call, type ResultOf, broadcastConfirmed } from "./bus";
import { toDto } from "../shared/dto";
import { mapPage } from "../shared/pagination";
import { AppError, ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, toForwardedError } from "../shared/errors";
import { couponAttribution, couponCodeKey, hasCouponHints, type CouponCandidate } from "../shared/domain/coupon-codes";
import type { CallerMeta } from "../shared/meta";
import { randomToken } from "../shared/secrets";
import { getProgram, programCacheMixin } from "./clients/program-cache";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { startServiceOutboxRelay, type ServiceOutboxRelay } from "./clients/outbox-relay";
import { startRunningTotals } from "./clients/running-totals";
import type { PollingLoop } from "../shared/polling-loop";
import { createAttributionRepository } from "./attribution/storage";
import { clickDetailRetentionDays, clickDetailsKeptFrom, startClickRetention } from "./attribution/click-retention";
import { countsAsTraffic, trafficDimensionsOf, type AttributionRepository, type Click, type CouponCode, type NewClick } from "./attribution/repository";
import { ATTRIBUTION } from "./attribution/endpoints";
import { createClickWriter, type ClickWriter } from "./attribution/click-writer";
import { ReferralCache } from "./attribution/referral-cache";
import type { Attribution, ClickCaller, ClickFacts, ClickOutcome, TrackedClick, Unattributed } from "./attribution/contract";
import * as S from "./attribution/schemas";
import { SELF_REFERRAL } from "../shared/domain/self-referral";
import { isSelfReferredTo } from "./clients/self-referral-check";
import { answerBreakdowns, answerStats, answerTopPartners } from "../shared/stats-input";
import { topValues } from "../shared/domain/breakdowns";
import { parseInput } from "../shared/validation";
import { ClickEnricher } from "./attribution/click-details";
import { addressHashSecret, hashableAddress } from "../shared/address-hash";

type Methods = {
  recordClick(ctx: Context, caller: ClickCaller, input: Input<typeof S.TrackClickRequest>): Promise<TrackedClick>;
  checkClick(ctx: Context, caller: ClickCaller, input: Input<typeof S.TrackClickRequest>): Promise<NewClick>;
  assertOriginAllowed(ctx: Context, caller: ClickCaller, programId: number): Promise<void>;
  findPartnerBy(programId: number, method: AttributionMethod, value: string): Promise<Omit<Attribution, "method"> | null>;
  attribute(ctx: Context, input: Input<typeof S.ResolveInput>, found: Omit<Attribution, "method">, method: AttributionMethod): Promise<Attribution>;
  resolveCoupon(ctx: Context, input: Input<typeof S.ResolveInput>): Promise<Attribution | Unattributed | null>;
  isApprovedPartner(ctx: Context, programId: number, partnerId: number): Promise<boolean>;
  couponCandidates(ctx: Context, programId: number, codes: CouponCode[]): Promise<CouponCandidate[]>;
  assertCouponCodeFree(ctx: Context, input: Input<typeof S.CheckCouponCodeInput>): Promise<string>;
  customersPage(ctx: Context, input: Input<typeof S.ListCustomersInput>): Promise<ResultOf<"attribution.listCustomers">>;
  testEventsRecorded(programIds: number[]): Promise<void>;
};

export type { Attribution };

type Referral = NonNullable<ResultOf<"programs.findReferral">>;

type Vars = StorageVars<AttributionRepository> & {
  outboxRelay?: ServiceOutboxRelay;
  runningTotals?: PollingLoop;
  clickRetention?: PollingLoop;
  clickWriter: ClickWriter;
  enricher: ClickEnricher;
  referrals: ReferralCache<Referral>;
};

/** A bot's or a hosting network's click is stored but attributes nothing (repository.ts countsAsTraffic). */
const attributable = (click: Click | null): Click | null => (click && countsAsTraffic(click.details) ? click : null);

const trackedClick = (click: Click): TrackedClick => ({ success: true, click_id: click.clickId, id: click.id, test: click.isTest });

/** Owns clicks, leads (customers) and the attribution of sales to partners. */
const AttributionService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "attribution",
  mixins: [storageMixin(createAttributionRepository), programCacheMixin],

  // Params are validated against each action's declared input (attribution/endpoints.ts, shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(ATTRIBUTION) } },

  actions: {
    /** A referral click from the browser; the returned click id goes into the `svc_click_id` cookie. */
    trackClick: {
      handler(ctx: Context<Input<typeof S.TrackClickRequest>, CallerMeta>) {
        return this.recordClick(ctx, ctx.meta, ctx.params);
      },
    },

    /**
     * Several clicks in one call, each with its own caller, each answered on
     * its own: the gateway of a split deployment forwards the clicks of a few
     * milliseconds this way (services/gateway/click-forwarder.ts), one bus
     * round trip instead of one per click. An invalid or refused click fails
     * alone; the others are stored.
     */
    trackClicks: {
      async handler(ctx: Context<Input<typeof S.TrackClicksInput>>) {
        const checked = await Promise.allSettled(ctx.params.clicks.map(async ({ click, caller }) => this.checkClick(ctx, caller, parseInput(S.TrackClickRequest, click))));
        // The gateway has already waited for these to gather: stored in one batch now, not after another wait.
        const accepted = checked.flatMap((c) => (c.status === "fulfilled" ? [c.value] : []));
        const stored = await Promise.allSettled(this.clickWriter.addAll(accepted));
        await this.testEventsRecorded(stored.flatMap((c) => (c.status === "fulfilled" && c.value.isTest ? [c.value.programId] : [])));
        let next = 0;
        return checked.map((c): ClickOutcome => {
          const outcome = c.status === "fulfilled" ? stored[next++] : c;
          if (outcome.status === "fulfilled") return { ok: true, click: trackedClick(outcome.value) };
          if (!(outcome.reason instanceof AppError)) this.logger.error("A forwarded click failed", outcome.reason);
          return { ok: false, error: toForwardedError(outcome.reason) };
        });
      },
    },

    /**
     * A signup. With an API key the program comes from the key; from the
     * browser (no secret) it needs `program_id` and a click id of that program.
     *
     * A browser lead proves nothing but the click it carries, and anyone can
     * get a click with a public referral code. So it only binds that click to
     * a new customer key: it cannot record an email, nor claim a customer key
     * that already has a lead (both would let a stranger take later sales;
     * docs/security.md). The merchant's server, with the key, can do both.
     */
    /** The discount the click's partner's group gives referred customers (docs/rewards.md, "The referred customer's discount"). */
    referredDiscount: {
      async handler(ctx: Context<Input<typeof S.ReferredDiscountRequest>, CallerMeta>) {
        const input = ctx.params;
        const programId = ctx.meta.programId ?? input.program_id;
        if (programId === undefined) throw new InvalidRequestError("Invalid 'program_id': required when no API key is sent.");
        if (ctx.meta.programId !== undefined && input.program_id !== undefined && input.program_id !== programId) {
          throw new InvalidRequestError("Invalid 'program_id': it does not match the program of the API key.");
        }
        await this.assertOriginAllowed(ctx, ctx.meta, programId);
        const click = await this.repo.findClick(programId, input.click_id);
        if (!click) throw new NotFoundError("Unknown 'click_id' for this program: send the click id from the svc_click_id cookie.");
        const discount =
          attributable(click) && (await this.isApprovedPartner(ctx, programId, click.partnerId))
            ? (await call(ctx, "rewards.forPartner", { programId, partnerId: click.partnerId })).group.customerDiscount
            : null;
        return { success: true as const, click_id: click.clickId, discount };
      },
    },

    trackLead: {
      async handler(ctx: Context<Input<typeof S.TrackLeadRequest>, CallerMeta>) {
        const input = ctx.params;
        const fromBrowser = ctx.meta.programId === undefined;
        const programId = ctx.meta.programId ?? input.program_id;
        if (programId === undefined) throw new InvalidRequestError("Invalid 'program_id': required when no API key is sent.");
        if (!fromBrowser && input.program_id !== undefined && input.program_id !== programId) {
          throw new InvalidRequestError("Invalid 'program_id': it does not match the program of the API key.");
        }
        await this.assertOriginAllowed(ctx, ctx.meta, programId);
        const click = input.click_id ? attributable(await this.repo.findClick(programId, input.click_id)) : null;
        if (fromBrowser && !click) {
          throw new NotFoundError("Unknown 'click_id' for this program: a browser signup must carry the click id from the svc_click_id cookie.");
        }
        if (fromBrowser && input.email !== undefined) {
          throw new InvalidRequestError("Invalid 'email': a browser signup cannot record an email. Send the lead from your server with the API key to record one.");
        }
        const claimed = (lead: { clickId: string | null } | null) => lead !== null && lead.clickId !== click?.clickId;
        if (fromBrowser && claimed(await this.repo.findLeadByCustomerKey(programId, input.customer_key))) {
          throw new ConflictError(
            "This customer key already has a lead in this program: a browser signup only records a new customer. Send the lead from your server with the API key to change it.",
          );
        }
        // The partner signing up through their own link: recorded, but not theirs (services/clients/self-referral-check.ts).
        const selfReferral = click !== null && (await isSelfReferredTo(ctx, programId, click.partnerId, { email: input.email ?? null, customerKey: input.customer_key }));
        const { lead, created } = await this.repo.recordLead({
          programId,
          customerKey: input.customer_key,
          email: input.email ?? null,
          clickId: click?.clickId ?? null,
          clickTraffic: click && trafficDimensionsOf(click.details),
          partnerId: selfReferral ? null : (click?.partnerId ?? null),
          unattributedReason: selfReferral ? SELF_REFERRAL : null,
          isTest: input.test || (click?.isTest ?? false),
          timestamp: input.timestamp ? new Date(input.timestamp) : new Date(),
        });
        if (created) this.outboxRelay?.nudge(); // its lead.created event committed with it
        if (created && lead.isTest) await this.testEventsRecorded([programId]);
        // Another signup of the same key won the race: the browser's click did not become its first touch.
        if (fromBrowser && !created && claimed(lead)) {
          throw new ConflictError("This customer key already has a lead in this program: a browser signup only records a new customer.");
        }
        // The lead reward of the partner's group (docs/rewards.md), once per customer: only for leads your server
        // reports, since anyone can send a browser signup. Asked again on a repeat, so a retry after a failure earns it.
        const earned =
          !fromBrowser && lead.partnerId !== null && !lead.isTest
            ? await call(ctx, "commissions.createForLead", { programId, partnerId: lead.partnerId, customerKey: lead.customerKey, customerEmail: lead.email, clickId: lead.clickId })
            : null;
        return {
          success: true,
          lead_id: lead.id,
          customer_key: lead.customerKey,
          created,
          attributed: lead.partnerId !== null,
          partner_id: lead.partnerId,
          reason: lead.unattributedReason,
          test: lead.isTest,
          commission_id: earned?.commissionId ?? null,
        };
      },
    },

    /**
     * Finds the partner of a sale by the spec's order (6.1), then by a coupon code (rule 5) when the four found
     * none; null when nothing matches and the sale named no code (Unattributed, with why, when it did).
     */
    clickFacts: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ClickFactsInput>>): Promise<ClickFacts | null> {
        const click = await this.repo.findClick(ctx.params.programId, ctx.params.clickId);
        if (!click) return null;
        const d = click.details;
        return {
          at: click.timestamp.toISOString(),
          referrerDomain: d.referrerDomain,
          paid: d.paid,
          adNetworks: d.adNetworks ?? [],
          utmMedium: d.utm?.utm_medium ?? null,
          addressHash: d.addressHash,
        };
      },
    },

    resolve: {
      async handler(ctx: Context<Input<typeof S.ResolveInput>>): Promise<Attribution | Unattributed | null> {
        const input = ctx.params;
        for (const step of attributionSteps(input)) {
          const found = await this.findPartnerBy(input.programId, step.method, step.value);
          if (found) return this.attribute(ctx, input, found, step.method);
        }
        return this.resolveCoupon(ctx, input);
      },
    },

    /** A partner's new code (from the processor, which found or created its Stripe promotion code first). */
    createCouponCode: {
      async handler(ctx: Context<Input<typeof S.CreateCouponCodeInput>>) {
        const input = ctx.params;
        const codeKey = await this.assertCouponCodeFree(ctx, input);
        const created = await this.repo.createCouponCode({
          programId: input.programId,
          partnerId: input.partnerId,
          code: input.code,
          codeKey,
          stripePromotionCodeId: input.stripePromotionCodeId ?? null,
          stripeCouponId: input.stripeCouponId ?? null,
          source: input.source,
        });
        if (!created) {
          // Another request took it between the check and the insert (the unique indexes decided): the check says which.
          await this.assertCouponCodeFree(ctx, input);
          throw new AppError("coupon_code_taken", `Coupon code '${input.code}' was just added to program ${input.programId} by another request.`);
        }
        return toDto(created);
      },
    },

    checkCouponCode: {
      async handler(ctx: Context<Input<typeof S.CheckCouponCodeInput>>) {
        await this.assertCouponCodeFree(ctx, ctx.params);
        return { ok: true as const };
      },
    },

    /** A page of the program's codes, newest first (404 for an unknown program). */
    listCouponCodes: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ListCouponCodesInput>>) {
        await getProgram(ctx, ctx.params.programId);
        return mapPage(await this.repo.listCouponCodesPage(ctx.params), toDto);
      },
    },

    /** Stops a code attributing; its Stripe promotion code is the merchant's to deactivate. */
    archiveCouponCode: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ArchiveCouponCodeInput>>) {
        const { programId, couponCodeId } = ctx.params;
        await getProgram(ctx, programId);
        const code = await this.repo.archiveCouponCode(programId, couponCodeId, new Date());
        if (!code) throw new NotFoundError(`No coupon code ${couponCodeId} in program ${programId}.`);
        const stripe = code.stripePromotionCodeId
          ? ` Its Stripe promotion code ${code.stripePromotionCodeId} is left as it is: deactivate it in Stripe if customers should no longer get the discount.`
          : "";
        return { ...toDto(code), message: `Coupon code ${code.code} no longer attributes sales.${stripe}` };
      },
    },

    hasStripeCouponCodes: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ProgramIdInput>>) {
        return this.repo.hasStripeCouponCodes(ctx.params.programId);
      },
    },

    /** A page of the program's leads (dashboard; the partner portal passes partnerId and masks them itself). */
    listCustomers: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ListCustomersInput>>) {
        return this.customersPage(ctx, ctx.params);
      },
    },

    /** Both kinds in one call and one query: the status page asks for them on every request. */
    testEvents: {
      // Safe to send again: if its node is lost mid-call, the caller retries it on another instance (shared/failover.ts).
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.TestEventsInput>>) {
        const { programId, limit } = ctx.params;
        return toDto(await this.repo.testEventStats(programId, limit));
      },
    },

    /** One kind, for a status instance of an earlier version during a rolling upgrade. */
    testEventStats: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.TestEventStatsInput>>) {
        const { programId, kind, limit } = ctx.params;
        const summary = await this.repo.testEventStats(programId, limit);
        return toDto(kind === "click" ? summary.clicks : summary.leads);
      },
    },

    countPartnerClicks: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.PartnerClicksInput>>) {
        const { programId, partnerId } = ctx.params;
        return { clicks: await this.repo.countPartnerClicks(programId, partnerId) };
      },
    },
    /** Clicks and attributed leads per UTC day and per partner (the program overview; docs/merchants.md). */
    stats: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.StatsInput>>) {
        return answerStats(ctx.params, { clicks: 0, leads: 0 }, (q) => this.repo.activityStats(q));
      },
    },
    /** The partners with the most clicks over a range of days (the overview's partner table). */
    topPartners: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.TopPartnersInput>>) {
        return answerTopPartners(ctx.params, (q, limit) => this.repo.topPartners(q, limit));
      },
    },
    /** Clicks and attributed leads by country, device, browser and referrer domain over a range (programs.breakdowns). */
    breakdowns: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.BreakdownsInput>>) {
        const { from, to, rows } = await answerBreakdowns(ctx.params, (q) => this.repo.breakdowns(q));
        return { from, to, clicks: topValues<{ clicks: number }>(rows, ["clicks"]), leads: topValues<{ leads: number }>(rows, ["leads"]) };
      },
    },
    /**
     * Where clicks_daily, leads_daily and their breakdowns differ from the clicks and leads (commissions.reconcile
     * reports it); the clicks' breakdown on the days whose clicks still have their details only (clickDetailsKeptFrom).
     */
    rollupDrift: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.RollupDriftInput>>) {
        return this.repo.rollupDrift(ctx.params.limit, clickDetailsKeptFrom(clickDetailRetentionDays(), new Date()));
      },
    },
  },

  methods: {
    /**
     * Tells the status service (which caches a program's test events) before the test event's answer goes out, so
     * the integration status a developer opens next shows it. Test events are rare; live traffic never waits for this.
     * Each program once, however many of its test events a batch stored.
     */
    async testEventsRecorded(programIds: number[]) {
      await Promise.all([...new Set(programIds)].map((programId) => broadcastConfirmed(this.broker, "attribution.testEventRecorded", { programId })));
    },

    /** One page of a program's leads (404 for an unknown program): the dashboard's list and the operator's. */
    async customersPage(ctx: Context, input: Input<typeof S.ListCustomersInput>) {
      await getProgram(ctx, input.programId);
      return mapPage(await this.repo.listLeadsPage(input), toDto);
    },

    /** Checks and stores one click; answered once its batch has committed (attribution/click-writer.ts). */
    async recordClick(ctx: Context, caller: ClickCaller, input: Input<typeof S.TrackClickRequest>) {
      const click = await this.clickWriter.add(await this.checkClick(ctx, caller, input));
      if (click.isTest) await this.testEventsRecorded([click.programId]);
      return trackedClick(click);
    },

    /** The click to store, once its program, origin and referral code are accepted; `caller` is what the gateway knows of its request. */
    async checkClick(ctx: Context, caller: ClickCaller, input: Input<typeof S.TrackClickRequest>): Promise<NewClick> {
      // A key of program A records clicks for A only (and would otherwise skip B's origin check).
      if (caller.programId !== undefined && input.program_id !== caller.programId) {
        throw new InvalidRequestError("Invalid 'program_id': it does not match the program of the API key.");
      }
      await this.assertOriginAllowed(ctx, caller, input.program_id);
      // Cached per process; programs.enrollmentChanged drops a code whose partner was declined (attribution/referral-cache.ts).
      const enrollment = await this.referrals.lookup(input.program_id, input.referral_code, () =>
        call(ctx, "programs.findReferral", { programId: input.program_id, referralCode: input.referral_code }),
      );
      if (!enrollment) throw new NotFoundError(`No approved partner with referral code '${input.referral_code}' in program ${input.program_id}.`);
      const timestamp = input.timestamp ? new Date(input.timestamp) : new Date();
      return {
        clickId: `clk_${randomToken(16)}`,
        programId: input.program_id,
        partnerId: enrollment.partnerId,
        referralCode: input.referral_code,
        isTest: input.test,
        landingUrl: input.url ?? null,
        referrer: input.referrer ?? null,
        userAgent: caller.userAgent ?? null,
        timestamp,
        // The address is read for its country and daily hash here, and goes no further.
        details: this.enricher.details({
          userAgent: caller.userAgent ?? null,
          address: caller.address ? hashableAddress(caller.address) : null,
          landingUrl: input.url ?? null,
          referrer: input.referrer ?? null,
          at: timestamp,
        }),
      };
    },

    /** Browser calls (no API key) must come from one of the program's allowed origins, when it lists any. */
    async assertOriginAllowed(ctx: Context, caller: ClickCaller, programId: number) {
      if (caller.programId !== undefined) return;
      const program = await getProgram(ctx, programId);
      if (program.allowedOrigins.length && !program.allowedOrigins.includes(caller.origin ?? "")) {
        throw new ForbiddenError(`Origin '${caller.origin ?? "(none)"}' is not allowed for program ${programId}. Add it to the program's allowed origins.`);
      }
    },

    /**
     * The sale's partner, once found: the self-referral guard first (so the partner's own renewals do not find them
     * through the processor customer), then the processor customer linked to the partner for later renewals (rule 3).
     */
    async attribute(ctx: Context, input: Input<typeof S.ResolveInput>, found: Omit<Attribution, "method">, method: AttributionMethod) {
      if (input.customer && (await isSelfReferredTo(ctx, input.programId, found.partnerId, input.customer))) return { ...found, method, selfReferral: true };
      if (input.processorCustomerId) {
        await this.repo.linkProcessorCustomer({ programId: input.programId, processorCustomerId: input.processorCustomerId, partnerId: found.partnerId, clickId: found.clickId });
      }
      return { ...found, method };
    },

    /**
     * Rule 5 (shared/domain/coupon-codes.ts). The customer then belongs to the code's partner like a lead: their
     * processor customer is linked (rule 3 finds their renewals), and with a customer key they become (or their
     * unattributed lead becomes) the partner's lead (rules 2 and 4 find their later sales). No lead reward: it is a sale.
     */
    async resolveCoupon(ctx: Context, input: Input<typeof S.ResolveInput>) {
      if (!hasCouponHints(input)) return null;
      const codes = await this.repo.findCouponCodes(input.programId, {
        codeKeys: input.couponCode?.trim() ? [couponCodeKey(input.couponCode)] : [],
        promotionCodeIds: input.promotionCodeIds ?? [],
      });
      const decision = couponAttribution(input, await this.couponCandidates(ctx, input.programId, codes));
      if (!decision) return null;
      if ("reason" in decision) return { partnerId: null, reason: decision.reason };
      const attribution = await this.attribute(ctx, input, { partnerId: decision.partnerId, clickId: null, leadId: null }, "coupon");
      const customerKey = input.customer?.customerKey;
      if (attribution.selfReferral || !customerKey) return attribution;
      const { lead, created } = await this.repo.recordLead({
        programId: input.programId,
        customerKey,
        email: input.customer?.email ?? null,
        clickId: null,
        partnerId: decision.partnerId,
        isTest: input.test ?? false,
        timestamp: new Date(),
      });
      if (created) this.outboxRelay?.nudge();
      if (created && lead.isTest) await this.testEventsRecorded([input.programId]);
      return { ...attribution, leadId: lead.partnerId === decision.partnerId ? lead.id : null };
    },

    /** Whether the partner is enrolled in the program and approved now. */
    async isApprovedPartner(ctx: Context, programId: number, partnerId: number) {
      const enrollment = await call(ctx, "programs.getEnrollment", { programId, partnerId }).catch((err: unknown) => {
        if ((err as { type?: string } | null)?.type === "not_found") return null;
        throw err;
      });
      return enrollment?.status === "approved";
    },

    /** The codes with whether each one's partner is approved in the program now (asked only for live codes). */
    async couponCandidates(ctx: Context, programId: number, codes: CouponCode[]) {
      const partnerIds = [...new Set(codes.filter((c) => !c.archivedAt).map((c) => c.partnerId))];
      const approved = new Set<number>();
      await Promise.all(
        partnerIds.map(async (partnerId) => {
          if (await this.isApprovedPartner(ctx, programId, partnerId)) approved.add(partnerId);
        }),
      );
      return codes.map((c) => ({
        id: c.id,
        partnerId: c.partnerId,
        codeKey: c.codeKey,
        stripePromotionCodeId: c.stripePromotionCodeId,
        archived: c.archivedAt !== null,
        partnerApproved: approved.has(c.partnerId),
      }));
    },

    /**
     * A new code's checks (its key returned): the program exists (404), the partner is enrolled (404) and approved
     * (422 partner_not_approved), and neither the code nor its Stripe promotion code is live in the program (409).
     */
    async assertCouponCodeFree(ctx: Context, input: Input<typeof S.CheckCouponCodeInput>) {
      const { programId, partnerId, code } = input;
      await getProgram(ctx, programId);
      const enrollment = await call(ctx, "programs.getEnrollment", { programId, partnerId });
      if (enrollment.status !== "approved") {
        throw new AppError("partner_not_approved", `Partner ${partnerId} is ${enrollment.status} in program ${programId}: approve the partner first, then add the code.`);
      }
      const codeKey = couponCodeKey(code);
      const promotionCodeIds = input.stripePromotionCodeId ? [input.stripePromotionCodeId] : [];
      const live = (await this.repo.findCouponCodes(programId, { codeKeys: [codeKey], promotionCodeIds })).find((c) => c.archivedAt === null);
      if (live) {
        const what = live.codeKey === codeKey ? `Coupon code '${code}'` : `Stripe promotion code ${input.stripePromotionCodeId} (as code '${live.code}')`;
        throw new AppError(
          "coupon_code_taken",
          `${what} is already a live code of program ${programId} (id ${live.id}, partner ${live.partnerId}). Archive that one first (DELETE /api/programs/${programId}/coupon-codes/${live.id}), or choose another code.`,
        );
      }
      return codeKey;
    },

    async findPartnerBy(programId: number, method: AttributionMethod, value: string) {
      switch (method) {
        case "click": {
          const click = attributable(await this.repo.findClick(programId, value));
          return click && { partnerId: click.partnerId, clickId: click.clickId, leadId: null, clickTraffic: trafficDimensionsOf(click.details) };
        }
        case "email": {
          const lead = await this.repo.findAttributedLeadByEmail(programId, value);
          return lead && { partnerId: lead.partnerId!, clickId: lead.clickId, leadId: lead.id };
        }
        case "processor_customer": {
          const link = await this.repo.findProcessorCustomer(programId, value);
          return link && { partnerId: link.partnerId, clickId: link.clickId, leadId: null };
        }
        case "customer_key": {
          const lead = await this.repo.findLeadByCustomerKey(programId, value);
          return lead?.partnerId ? { partnerId: lead.partnerId, clickId: lead.clickId, leadId: lead.id } : null;
        }
        // Not a lookup of the spec's steps: rule 5 (resolveCoupon) runs after them.
        case "coupon":
          return null;
      }
    },
  },

  events: {
    /** An enrollment's status changed (programs.service.ts): its referral code may have stopped counting. */
    "programs.enrollmentChanged"(ctx: Context<{ programId: number; referralCode: string }>) {
      this.referrals.invalidate(ctx.params.programId, ctx.params.referralCode);
    },
  },

  created() {
    this.referrals = new ReferralCache(ReferralCache.ttlFromEnv());
  },

  started() {
    // The IP country database is read once here; a click's details are worked out in memory (attribution/click-details.ts).
    this.enricher = ClickEnricher.open(addressHashSecret());
    this.clickWriter = createClickWriter(this.repo);
    // lead.created events, from the attribution outbox to notifications.
    this.outboxRelay = startServiceOutboxRelay(this, "attribution", this.repo.outbox);
    // clicks_running and leads_running: the overview's ranking of partners by clicks, the partners' clicks and leads.
    this.runningTotals = startRunningTotals(this, (today) => this.repo.extendRunningTotals(today));
    // A click's details are kept CLICK_DETAIL_RETENTION_DAYS (90); its rollups' counts for ever.
    this.clickRetention = startClickRetention(this, this.repo);
  },

  async stopped() {
    await this.runningTotals?.stop();
    await this.clickRetention?.stop();
    // The clicks still waiting for their batch are stored (and answered) before the database is released.
    await this.clickWriter?.stop();
    await this.outboxRelay?.stop();
  },
};

export default AttributionService;
