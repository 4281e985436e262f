import type { z } from "zod";
import type { CommissionsContract } from "../commissions/contract";
import type { NotificationsContract } from "../notifications/contract";
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
  clicks: number | null;
  balance: { balanceCents: number; creditedCents: number; deductedCents: number; paidCents: number } | null;
}

/**
 * The portal service's actions (the partner portal's data). The partner is
 * `ctx.meta.partner`, set by the gateway; no action takes a partner id.
 */
export interface PortalContract {
  "portal.me": { params: z.input<typeof S.NoInput>; result: { partner: { id: number; name: string; email: string | null }; programs: PortalProgram[] } };
  "portal.notices": { params: z.input<typeof S.NoticesInput>; result: NotificationsContract["notifications.listPartnerNotices"]["result"] };
  "portal.commissions": { params: z.input<typeof S.ListInput>; result: CommissionsContract["commissions.list"]["result"] };
  "portal.withdrawals": { params: z.input<typeof S.ListInput>; result: CommissionsContract["commissions.listWithdrawals"]["result"] };
  /** Masked: the customer key shortened, the email reduced to its first letters and top-level domain. */
  "portal.customers": { params: z.input<typeof S.ListInput>; result: { data: Array<{ id: number; customer: string; email: string | null; createdAt: string }>; nextCursor: string | null } };
  "portal.markNoticeRead": { params: z.input<typeof S.NoticeReadInput>; result: NotificationsContract["notifications.markPartnerNoticeRead"]["result"] };
}
