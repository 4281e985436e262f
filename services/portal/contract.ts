import type { ExportBatch } from "../../shared/csv-export";
import type { z } from "zod";
import type { CommissionsContract } from "../commissions/contract";
import type { NotificationsContract } from "../notifications/contract";
import type { PartnerPayoutAccountView } from "../processor/contract";
import type { ProgramBreakdowns, ProgramsContract } from "../programs/contract";
import type { PartnerStats } from "./stats";
import type * as S from "./schemas";

export interface PortalProgram {
  programId: number;
  name: string;
  currency: string;
  status: "approved" | "pending" | "declined";
  /** Null unless approved. */
  referralCode: string | null;
  /** The merchant's site with ?ref=<code>; null when the program names no site (or the enrollment is not approved). */
  referralLink: string | null;
  /** The merchant's sites, for links to other pages of them (empty when the program names none, or not approved). */
  allowedOrigins: string[];
  /** The program's landing page for referral links; null when it names none (or not approved). */
  defaultLandingUrl: string | null;
  /** The query parameter that carries the referral code in a link (the browser snippet's default). */
  referralParam: string;
  clicks: number | null;
  balance: { balanceCents: number; creditedCents: number; deductedCents: number; paidCents: number } | null;
}

/** GET /api/partner/programs/:programId/payout-account. */
export interface PortalPayoutAccount {
  payoutMethod: ProgramsContract["programs.getPartnerProfile"]["result"]["payoutMethod"];
  stripe: Omit<PartnerPayoutAccountView, "partnerId"> | null;
}

/** A commission as the portal lists it: the list's item and the reward in words. */
export type PortalCommission = CommissionsContract["commissions.list"]["result"]["data"][number] & { reward: string | null };

/**
 * The portal service's actions (the partner portal's data). The partner is
 * `ctx.meta.partner`, set by the gateway; no action takes a partner id.
 */
export interface PortalContract {
  "portal.me": { params: z.input<typeof S.NoInput>; result: { partner: { id: number; name: string; email: string | null }; programs: PortalProgram[] } };
  "portal.notices": { params: z.input<typeof S.NoticesInput>; result: NotificationsContract["notifications.listPartnerNotices"]["result"] };
  /** Each commission with `reward`: the reward that earned it in words (shared/domain/reward-words.ts), null before rewards. */
  "portal.commissions": { params: z.input<typeof S.ListInput>; result: { data: PortalCommission[]; nextCursor: string | null } };
  /** The partner's own figures per day of the range and in total (their overview). */
  "portal.stats": { params: z.input<typeof S.StatsInput>; result: PartnerStats };
  /** The partner's own traffic breakdowns in a program (live data). */
  "portal.breakdowns": { params: z.input<typeof S.BreakdownsInput>; result: Omit<ProgramBreakdowns, "test" | "partnerId"> };
  "portal.profile": { params: z.input<typeof S.NoInput>; result: ProgramsContract["programs.getPartnerProfile"]["result"] };
  "portal.updateProfile": { params: z.input<typeof S.UpdateProfileInput>; result: ProgramsContract["programs.updatePartnerProfile"]["result"] };
  "portal.withdrawals": { params: z.input<typeof S.ListInput>; result: CommissionsContract["commissions.listWithdrawals"]["result"] };
  "portal.payout": { params: z.input<typeof S.PayoutInput>; result: CommissionsContract["commissions.partnerPayout"]["result"] };
  "portal.statement": { params: z.input<typeof S.StatementInput>; result: ExportBatch };
  /** Masked: the customer key shortened, the email reduced to its first letters and top-level domain. */
  "portal.customers": { params: z.input<typeof S.ListInput>; result: { data: Array<{ id: number; customer: string; email: string | null; createdAt: string }>; nextCursor: string | null } };
  /** The link to Stripe's onboarding of the partner's Express account in the program (made once). */
  "portal.stripeOnboarding": { params: z.input<typeof S.ProgramInput>; result: { url: string } };
  /** How the partner is paid in the program: the profile's method, and their Stripe account there (null: none yet). */
  "portal.payoutAccount": { params: z.input<typeof S.ProgramInput>; result: PortalPayoutAccount };
  /** The partner's postbacks in the program (docs/partners.md, "Postbacks"); secrets only in the create and rotate answers. */
  "portal.postbacks": { params: z.input<typeof S.ProgramInput>; result: NotificationsContract["notifications.listPartnerPostbacks"]["result"] };
  "portal.createPostback": { params: z.input<typeof S.CreatePostbackInput>; result: NotificationsContract["notifications.createPartnerPostback"]["result"] };
  "portal.disablePostback": { params: z.input<typeof S.PostbackInput>; result: NotificationsContract["notifications.disablePartnerPostback"]["result"] };
  "portal.enablePostback": { params: z.input<typeof S.PostbackInput>; result: NotificationsContract["notifications.enablePartnerPostback"]["result"] };
  "portal.rotatePostbackSecret": { params: z.input<typeof S.PostbackInput>; result: NotificationsContract["notifications.rotatePartnerPostbackSecret"]["result"] };
  "portal.testPostback": { params: z.input<typeof S.PostbackInput>; result: NotificationsContract["notifications.sendPartnerPostbackTest"]["result"] };
  "portal.postbackDeliveries": { params: z.input<typeof S.PostbackDeliveriesInput>; result: NotificationsContract["notifications.listPartnerPostbackDeliveries"]["result"] };
  "portal.retryPostbackDelivery": { params: z.input<typeof S.RetryPostbackInput>; result: NotificationsContract["notifications.retryPartnerPostbackDelivery"]["result"] };
  /** What the partner earns in the program, in plain words (their group's live rewards), and how long commissions are held. */
  "portal.rewards": {
    params: z.input<typeof S.ProgramInput>;
    result: {
      programId: number;
      currency: string;
      holdDays: number;
      rewards: string[];
      /** Cash (by `payoutMethod`, the partner's choice, null until chosen) or credit in the merchant's app or Stripe balance. */
      rewardAs: "cash" | "account_credit" | "stripe_balance";
      payoutMethod: "paypal" | "bank" | "stripe" | null;
      minPayoutCents: number;
    };
  };
  "portal.markNoticeRead": { params: z.input<typeof S.NoticeReadInput>; result: NotificationsContract["notifications.markPartnerNoticeRead"]["result"] };
}
