import type { Context, ServiceSchema } from "moleculer";
import { call, type ResultOf } from "./bus";
import { inputValidator, type Input } from "../shared/endpoint";
import { NotFoundError, UnauthorizedError } from "../shared/errors";
import { publicUrlFromEnv } from "../shared/mailer";
import { getProgram, programCacheMixin } from "./clients/program-cache";
import { REFERRAL_PARAM, referralLink } from "../shared/domain/referral-link";
import { commissionRewardWords, rewardLineWords } from "../shared/domain/reward-words";
import type { RecurringRule } from "../shared/domain/rewards";
import { partnerStats } from "./portal/stats";
import { maskEmail, shortenCustomerKey } from "../shared/customer-masking";
import { PORTAL } from "./portal/endpoints";
import { encodeCursor } from "../shared/pagination";
import * as S from "./portal/schemas";

type PartnerMeta = { partner?: Omit<ResultOf<"accounts.authenticatePartnerSession">, "validUntil"> | null; clientAddress?: string };
type Vars = { publicUrl: string };
type Methods = {
  partnerOf(ctx: Context<unknown, PartnerMeta>): number;
  requireEnrollment(ctx: Context<unknown, PartnerMeta>, programId: number): Promise<{ partnerId: number; enrollment: ResultOf<"programs.getEnrollment"> }>;
};

const isNotFound = (err: unknown) => (err as { type?: string } | null)?.type === "not_found";

/**
 * The partner portal's data (docs/partners.md). Owns nothing: like status, it
 * asks the owners. The partner is always the signed-in one (`ctx.meta.partner`,
 * set by the gateway from the partner cookie), never a parameter; a program
 * the partner is not approved in is "not found", the same answer as a program
 * that does not exist, so the portal never confirms another program's or
 * partner's existence.
 */
const PortalService: ServiceSchema<Record<string, never>, Methods, Vars> = {
  name: "portal",
  mixins: [programCacheMixin],

  hooks: { before: { "*": inputValidator(PORTAL) } },

  created() {
    // Where Stripe's onboarding sends the partner back: the portal, at PUBLIC_URL (docs/payouts.md).
    this.publicUrl = publicUrlFromEnv();
  },

  actions: {
    /** The partner and each program they are enrolled in: status, referral code and link, clicks and balance (approved ones). */
    me: {
      async handler(ctx: Context<Input<typeof S.NoInput>, PartnerMeta>) {
        const partnerId = this.partnerOf(ctx);
        // The partner's own address of the day, as its hash (the fraud rule partner_identity): the portal loads this first.
        if (ctx.meta.clientAddress) await call(ctx, "accounts.notePartnerAddress", { partnerId, address: ctx.meta.clientAddress });
        const { partner, enrollments } = await call(ctx, "programs.getPartnerEnrollments", { partnerId });
        // An embedded session (docs/embedded-referrals.md) sees its one program only.
        const bound = ctx.meta.partner?.programId ?? null;
        const programs = await Promise.all(
          enrollments
            .filter((e) => bound === null || e.programId === bound)
            .map(async (e) => {
              const program = await getProgram(ctx, e.programId);
              const base = {
                programId: program.id,
                name: program.name,
                currency: program.currency,
                status: e.status,
                referralParam: REFERRAL_PARAM,
                // The merchant's brand (the embedded referrals page wears it).
                brandColor: program.brandColor ?? null,
                logoUrl: program.logoUrl ?? null,
              };
              if (e.status !== "approved") return { ...base, referralCode: null, referralLink: null, allowedOrigins: [], defaultLandingUrl: null, clicks: null, balance: null };
              // Pending: earned but still in the hold period (net of refunds), which the balance does not hold yet.
              const [{ clicks }, balance, earnings] = await Promise.all([
                call(ctx, "attribution.countPartnerClicks", { programId: program.id, partnerId }),
                call(ctx, "commissions.balance", { programId: program.id, partnerId }),
                call(ctx, "commissions.stats", { programId: program.id, partnerIds: [partnerId], allTime: true }),
              ]);
              return {
                ...base,
                referralCode: e.referralCode,
                // The program's default landing URL when set (its settings), else its first allowed origin.
                referralLink: referralLink(program.defaultLandingUrl ? [program.defaultLandingUrl] : program.allowedOrigins, e.referralCode),
                // The link builder's choices: a page of these sites, with referralParam=code added.
                allowedOrigins: program.allowedOrigins,
                defaultLandingUrl: program.defaultLandingUrl,
                clicks,
                balance: {
                  balanceCents: balance.balanceCents,
                  pendingCents: earnings.totals.pendingCents,
                  // Part of pending: what is held for the merchant's review.
                  heldForReviewCents: balance.heldForReviewCents,
                  creditedCents: balance.creditedCents,
                  deductedCents: balance.deductedCents,
                  paidCents: balance.paidCents,
                },
              };
            }),
        );
        return { partner: { id: partner.id, name: partner.name, email: partner.email }, programs };
      },
    },

    notices: {
      async handler(ctx: Context<Input<typeof S.NoticesInput>, PartnerMeta>) {
        const { programId, unread, cursor, limit } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.listPartnerNotices", { partnerId, programId, unread, cursor, limit });
      },
    },

    /** The partner's commissions in the program, each with its refunds and their reasons and the reward that earned it in words (newest first, paginated). */
    commissions: {
      async handler(ctx: Context<Input<typeof S.ListInput>, PartnerMeta>) {
        const { programId, limit, cursor } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        const page = await call(ctx, "commissions.list", { programId, partnerId, limit, cursor });
        return { data: page.data.map((c) => ({ ...c, reward: commissionRewardWords(c.rewardLines, c.currency) })), nextCursor: page.nextCursor };
      },
    },

    /** The partner's own figures per day (live data): their program overview (programs.overview with partnerId). */
    stats: {
      async handler(ctx: Context<Input<typeof S.StatsInput>, PartnerMeta>) {
        const { programId, from, to } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return partnerStats(await call(ctx, "programs.overview", { programId, partnerId, from, to, test: false }));
      },
    },

    /** The partner's own traffic breakdowns (live data): programs.breakdowns with partnerId, without the program-wide fields. */
    breakdowns: {
      async handler(ctx: Context<Input<typeof S.BreakdownsInput>, PartnerMeta>) {
        const { programId, from, to } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        const { test: _test, partnerId: _partnerId, ...breakdowns } = await call(ctx, "programs.breakdowns", { programId, partnerId, from, to, test: false });
        return breakdowns;
      },
    },

    /** The partner's profile and payout details: on the partner (programs owns it), the same in every program. */
    profile: {
      async handler(ctx: Context<Input<typeof S.NoInput>, PartnerMeta>) {
        return call(ctx, "programs.getPartnerProfile", { partnerId: this.partnerOf(ctx) });
      },
    },

    /** Sets the fields given (programs checks the resulting profile, 400 naming the field). Never logged: it holds bank details. */
    updateProfile: {
      async handler(ctx: Context<Input<typeof S.UpdateProfileInput>, PartnerMeta>) {
        return call(ctx, "programs.updatePartnerProfile", { ...ctx.params, partnerId: this.partnerOf(ctx) });
      },
    },

    withdrawals: {
      async handler(ctx: Context<Input<typeof S.ListInput>, PartnerMeta>) {
        const { programId, limit, cursor } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "commissions.listWithdrawals", { programId, partnerId, limit, cursor });
      },
    },

    /** One of the partner's payouts with its commissions (another's is not found). */
    payout: {
      async handler(ctx: Context<Input<typeof S.PayoutInput>, PartnerMeta>) {
        const { programId, withdrawalId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "commissions.partnerPayout", { programId, partnerId, withdrawalId });
      },
    },

    /** One batch of the partner's statement CSV (the gateway writes the file). */
    statement: {
      async handler(ctx: Context<Input<typeof S.StatementInput>, PartnerMeta>) {
        const { programId, cursor } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        // The cursor was decoded by this action's schema; the commissions action decodes it again from its text.
        return call(ctx, "commissions.partnerStatement", { programId, partnerId, cursor: cursor ? encodeCursor(cursor) : undefined });
      },
    },

    /**
     * "Connect with Stripe": the partner's Express account under the merchant's platform (made once) and a link to
     * Stripe's onboarding, which sends them back to the portal (`?program=<id>&stripe=return`, or `refresh` when
     * the link expired). Prefilled with the profile's email and country.
     */
    stripeOnboarding: {
      async handler(ctx: Context<Input<typeof S.ProgramInput>, PartnerMeta>) {
        const { programId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        const profile = await call(ctx, "programs.getPartnerProfile", { partnerId });
        const back = (stripe: "return" | "refresh") => `${this.publicUrl}/portal?program=${programId}&stripe=${stripe}`;
        const { url } = await call(ctx, "processor.startPartnerOnboarding", {
          programId,
          partnerId,
          email: profile.email,
          country: profile.country,
          returnUrl: back("return"),
          refreshUrl: back("refresh"),
        });
        return { url };
      },
    },

    /**
     * How the partner is paid in the program: the profile's method and their Stripe account there. An account not
     * ready yet is read again from Stripe (the partner is likely back from onboarding); when Stripe cannot answer,
     * the stored state is shown.
     */
    payoutAccount: {
      async handler(ctx: Context<Input<typeof S.ProgramInput>, PartnerMeta>) {
        const { programId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        const [profile, [stored]] = await Promise.all([
          call(ctx, "programs.getPartnerProfile", { partnerId }),
          call(ctx, "processor.partnerPayoutAccounts", { programId, partnerIds: [partnerId] }),
        ]);
        let stripe = stored ?? null;
        if (stripe && !stripe.ready) {
          stripe = await call(ctx, "processor.refreshPartnerAccount", { programId, partnerId }).then(
            (fresh) => fresh ?? stored,
            (err: unknown) => {
              this.logger.warn(`The Stripe account of partner ${partnerId} in program ${programId} could not be read again; the stored state is shown.`, err);
              return stored;
            },
          );
        }
        return { payoutMethod: profile.payoutMethod, stripe: stripe && { accountId: stripe.accountId, ready: stripe.ready, detailsSubmitted: stripe.detailsSubmitted } };
      },
    },

    /** The partner's rewards in the program in words (their group's live rewards) and the hold period. */
    rewards: {
      async handler(ctx: Context<Input<typeof S.ProgramInput>, PartnerMeta>) {
        const { programId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        const [{ currency, group, rewards }, profile] = await Promise.all([
          call(ctx, "rewards.forPartner", { programId, partnerId }),
          call(ctx, "programs.getPartnerProfile", { partnerId }),
        ]);
        const recurringWords = (r: RecurringRule | null) =>
          !r || r.duration === "first" ? "" : r.duration === "lifetime" ? ", for as long as the customer pays" : `, for ${r.months} month${r.months === 1 ? "" : "s"}`;
        const words = rewards.map((r) => {
          const some = r.productIds.length || r.priceIds.length ? " (on some products)" : "";
          const tiers = r.tiers ? ", more as you sell more" : "";
          return `${rewardLineWords({ event: r.event, kind: r.kind, value: r.value, tier: null }, currency)}${r.event === "sale" ? recurringWords(r.recurring) : ""}${some}${tiers}`;
        });
        // How they are paid: cash by their payout method (only its name: the details are the profile's), or credit.
        return {
          programId,
          currency,
          holdDays: group.holdDays,
          rewards: [...new Set(words)],
          rewardAs: group.rewardAs,
          payoutMethod: profile.payoutMethod,
          minPayoutCents: group.minPayoutCents,
        };
      },
    },

    /** Customers who signed up through the partner (live leads), masked: they are the merchant's customers. */
    customers: {
      async handler(ctx: Context<Input<typeof S.ListInput>, PartnerMeta>) {
        const { programId, limit, cursor } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        const page = await call(ctx, "attribution.listCustomers", { programId, partnerId, test: false, limit, cursor });
        return {
          data: page.data.map((lead) => ({ id: lead.id, customer: shortenCustomerKey(lead.customerKey), email: maskEmail(lead.email), createdAt: lead.createdAt })),
          nextCursor: page.nextCursor,
        };
      },
    },

    /** The partner's postbacks in the program (docs/partners.md, "Postbacks"): notifications owns them. */
    postbacks: {
      async handler(ctx: Context<Input<typeof S.ProgramInput>, PartnerMeta>) {
        const { programId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.listPartnerPostbacks", { programId, partnerId });
      },
    },

    createPostback: {
      async handler(ctx: Context<Input<typeof S.CreatePostbackInput>, PartnerMeta>) {
        const { programId, url, eventTypes } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.createPartnerPostback", { programId, partnerId, url, eventTypes });
      },
    },

    disablePostback: {
      async handler(ctx: Context<Input<typeof S.PostbackInput>, PartnerMeta>) {
        const { programId, postbackId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.disablePartnerPostback", { programId, partnerId, endpointId: postbackId });
      },
    },

    enablePostback: {
      async handler(ctx: Context<Input<typeof S.PostbackInput>, PartnerMeta>) {
        const { programId, postbackId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.enablePartnerPostback", { programId, partnerId, endpointId: postbackId });
      },
    },

    rotatePostbackSecret: {
      async handler(ctx: Context<Input<typeof S.PostbackInput>, PartnerMeta>) {
        const { programId, postbackId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.rotatePartnerPostbackSecret", { programId, partnerId, endpointId: postbackId });
      },
    },

    testPostback: {
      async handler(ctx: Context<Input<typeof S.PostbackInput>, PartnerMeta>) {
        const { programId, postbackId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.sendPartnerPostbackTest", { programId, partnerId, endpointId: postbackId });
      },
    },

    postbackDeliveries: {
      async handler(ctx: Context<Input<typeof S.PostbackDeliveriesInput>, PartnerMeta>) {
        const { programId, postbackId, status, limit, cursor } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.listPartnerPostbackDeliveries", { programId, partnerId, endpointId: postbackId, status, limit, cursor });
      },
    },

    retryPostbackDelivery: {
      async handler(ctx: Context<Input<typeof S.RetryPostbackInput>, PartnerMeta>) {
        const { programId, postbackId, deliveryId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.retryPartnerPostbackDelivery", { programId, partnerId, endpointId: postbackId, deliveryId });
      },
    },

    markNoticeRead: {
      async handler(ctx: Context<Input<typeof S.NoticeReadInput>, PartnerMeta>) {
        const { programId, notificationId } = ctx.params;
        const { partnerId } = await this.requireEnrollment(ctx, programId);
        return call(ctx, "notifications.markPartnerNoticeRead", { partnerId, programId, notificationId });
      },
    },
  },

  methods: {
    partnerOf(ctx) {
      const partner = ctx.meta.partner;
      if (!partner) throw new UnauthorizedError("Sign in to the partner portal first.");
      return partner.partnerId;
    },

    async requireEnrollment(ctx, programId) {
      const partnerId = this.partnerOf(ctx);
      const notHere = () => new NotFoundError(`No program ${programId} in your partner portal.`);
      // An embedded session is bound to its one program: any other is not found, like a program the partner is not in.
      const bound = ctx.meta.partner?.programId ?? null;
      if (bound !== null && bound !== programId) throw notHere();
      const enrollment = await call(ctx, "programs.getEnrollment", { programId, partnerId }).catch((err: unknown) => {
        throw isNotFound(err) ? notHere() : err;
      });
      if (enrollment.status !== "approved") throw notHere();
      return { partnerId, enrollment };
    },
  },
};

export default PortalService;
