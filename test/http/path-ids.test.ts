/**
 * Ids in paths (and query strings and bodies) are canonical positive decimal
 * integers: `/api/tracking/status/01` or `/0x1` is a 400, not program 1, so the
 * status endpoint's `programId` (spec 2.4: the path value) is always the path.
 * Every route with an id is asked with other spellings of ids that exist.
 */
import { routeAliasKeys } from "../../services/gateway/openapi";
import { ENDPOINTS } from "../../services/gateway/declarations";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { deliver, event, processorId } from "../support/processor";
import { startPaypalDouble, type PaypalDouble } from "../support/paypal-double";
import { signPaddleNotification } from "../../shared/paddle-signature";
import { startStripeDouble, type StripeDouble } from "../support/stripe-double";
import { attributedSale, refund, uniqueId } from "../support/tracking";

let sys: TestSystem;
let cookie: string;
let boot: Bootstrap;
let ids: Record<string, number>;
let transactionId: string;
let partnerCookie: string;
let fullAccessKey: string;
let stripe: StripeDouble;
const STRIPE_KEY = "rk_test_51PathIdsRestrictedKey";
const WEBHOOK_SIGNING_SECRET = "whsec_pathIdsOwnEndpointSecret";
const PADDLE_SECRET_KEY = "pdl_ntfset_01pathids_PathIdsSecretKey";
/** A notification type the service does not use: answered 200 and recorded nowhere. */
const paddleCustomerCreated = JSON.stringify({ event_id: "evt_01pathids", event_type: "customer.created", occurred_at: new Date().toISOString(), data: { id: "ctm_01pathids" } });
let paypal: PaypalDouble;
const PAYPAL_CLIENT_ID = "AZDxPathIdsPaypalClientId";
const PAYPAL_SECRET = "EGnHPathIdsPaypalSecret";

/** A lead commission (the program's lead reward) to void, or hold (it is not credited: the credit run ran before). */
async function leadCommission() {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  const lead = await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: uniqueId("customer"), click_id: click.body.click_id } });
  return lead.body.commission_id as number;
}

beforeAll(async () => {
  stripe = await startStripeDouble();
  stripe.keys.set(STRIPE_KEY, { canRead: true });
  paypal = await startPaypalDouble();
  paypal.apps.set(PAYPAL_CLIENT_ID, { secret: PAYPAL_SECRET });
  // Every route is asked with several spellings by each caller: well over 1200 requests a minute of the operator or a key.
  sys = await startSystem({ env: { STRIPE_API_URL: stripe.url, PAYPAL_API_URL: paypal.url, ADMIN_RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_MINUTE: "100000" } });
  const owner = await sys.dashboardUser("owner");
  cookie = await sys.login(owner.email, owner.password);
  boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
  fullAccessKey = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "full_access" })).apiKey;
  const sale = await attributedSale(sys, boot, { amountCents: 10_000 });
  transactionId = sale.transactionId;
  await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
  const withdrawal = await sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, { amountCents: 100 });
  // Another one for the dashboard's pay route (the operator's pays the first).
  const dashboardWithdrawal = await sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, { amountCents: 100 });
  const key = await sys.admin("POST", `/programs/${boot.programId}/api-keys`);
  const endpoint = await sys.admin("POST", `/workspaces/${owner.workspaceId}/webhook-endpoints`, { url: "http://127.0.0.1:9/hooks", eventTypes: ["commission.reversed"] });
  const user = await sys.admin("POST", "/users", { email: `ids-${process.pid}@example.com`, name: "Ids", password: "a long enough password" });
  await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1000, refund_id: "r-1" });
  const inbox = await waitFor(
    () => sys.http("GET", `/api/workspaces/${owner.workspaceId}/notifications`, { headers: { Cookie: cookie } }),
    (r) => r.body?.data?.length > 0,
  );
  ids = {
    programId: boot.programId,
    partnerId: boot.partnerId,
    workspaceId: owner.workspaceId,
    commissionId: sale.body.commission_id,
    withdrawalId: withdrawal.id,
    keyId: key.id,
    endpointId: endpoint.id,
    userId: user.id,
    notificationId: inbox.body.data[0].id,
    // A partner of another program, for the enrollment route.
    otherPartnerId: (await sys.bootstrap()).partnerId,
    dashboardWithdrawalId: dashboardWithdrawal.id,
  };
  // A program with the signing secret of its own Stripe webhook endpoint.
  ids.webhookProgramId = (await sys.bootstrap({ workspaceId: owner.workspaceId })).programId;
  await sys.admin("PUT", `/programs/${ids.webhookProgramId}/processor/webhook-secret`, { signingSecret: WEBHOOK_SIGNING_SECRET });
  await sys.admin("PUT", `/programs/${ids.webhookProgramId}/processor/paddle`, { secretKey: PADDLE_SECRET_KEY });
  // Rewards: a live group, groups and rewards to archive (once each), lead commissions to reverse (once each).
  const program = `/programs/${boot.programId}`;
  const group = async (name: string) => (await sys.admin("POST", `${program}/groups`, { name })).id as number;
  const reward = async (groupId: number) => (await sys.admin("POST", `${program}/rewards`, { groupId, kind: "flat", value: 100 })).id as number;
  const defaultGroupId = (await sys.admin("GET", `${program}/rewards`)).groups[0].id;
  await sys.admin("POST", `${program}/rewards`, { groupId: defaultGroupId, event: "lead", kind: "flat", value: 500 });
  ids.groupId = await group("Live");
  ids.rewardId = await reward(ids.groupId);
  Object.assign(ids, {
    dashboardArchiveGroupId: await group("Archived by the dashboard"),
    adminArchiveGroupId: await group("Archived by the operator"),
    dashboardArchiveRewardId: await reward(ids.groupId),
    adminArchiveRewardId: await reward(ids.groupId),
    dashboardLeadCommissionId: await leadCommission(),
    adminLeadCommissionId: await leadCommission(),
    keyArchiveGroupId: await group("Archived with an API key"),
    keyArchiveRewardId: await reward(ids.groupId),
    keyLeadCommissionId: await leadCommission(),
    heldCommissionId: await leadCommission(),
    bannedPartnerId: (await sys.admin("POST", `${program}/partners`, { name: "Banned" })).partner.id,
  });
  // Two sales held for review (click injection on for them only): one to clear, one to reject (again: changed false).
  await sys.admin("PUT", `${program}/fraud-settings`, { click_injection: { enabled: true, seconds: 3600 } });
  const flaggedSale = async () => {
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("flagged"), amount_cents: 5000, click_id: click.body.click_id } });
    return sale.body.commission_id as number;
  };
  const [toClear, toReject] = [await flaggedSale(), await flaggedSale()];
  await sys.admin("PUT", `${program}/fraud-settings`, { click_injection: { enabled: false, seconds: 10 } });
  const reviews = (await sys.admin("GET", `${program}/fraud/reviews?status=pending`)).data as Array<{ id: number; commissionId: number }>;
  ids.clearedReviewId = reviews.find((r) => r.commissionId === toClear)!.id;
  ids.rejectedReviewId = reviews.find((r) => r.commissionId === toReject)!.id;
  // A coupon code to archive (archiving again changes nothing).
  ids.couponCodeId = (await sys.admin("POST", `${program}/coupon-codes`, { partnerId: boot.partnerId, source: "manual", code: "PATH-IDS" })).id;
  // The team (issue 27): a member whose role the dashboard sets, members to remove and invitations to withdraw (once each).
  const teamMember = async (name: string) => {
    const member = await sys.admin("POST", "/users", { email: `ids-${name}-${process.pid}@example.com`, name, password: "a long enough password" });
    await sys.admin("POST", `/workspaces/${owner.workspaceId}/members`, { userId: member.id, role: "viewer" });
    return member.id as number;
  };
  const invitation = async (name: string) =>
    (await sys.admin("POST", `/workspaces/${owner.workspaceId}/invitations`, { email: `ids-${name}-${process.pid}@example.com`, role: "viewer" })).id as number;
  Object.assign(ids, {
    memberUserId: await teamMember("member"),
    dashboardRemoveUserId: await teamMember("removed-by-dashboard"),
    adminRemoveUserId: await teamMember("removed-by-operator"),
    dashboardRevokeInvitationId: await invitation("withdrawn-by-dashboard"),
    adminRevokeInvitationId: await invitation("withdrawn-by-operator"),
  });
  // Applications (docs/dashboard-api.md, "Applications"): the program's form open, an application to approve (the
  // dashboard's route approves it, the operator's then changes nothing) and one to decline (likewise).
  await sys.admin("PATCH", `/programs/${boot.programId}/settings`, { applications: { open: true } });
  const apply = async () => (await sys.http("POST", `/api/public/programs/${boot.programId}/applications`, { body: applicationBody() })).body.applicationId as number;
  ids.applicationId = await apply();
  ids.declinedApplicationId = await apply();
  // A partner email (the first applicant's receipt), for the retry routes (retrying one not failed changes nothing).
  const emails = await waitFor(
    () => sys.admin("GET", `/programs/${boot.programId}/partner-emails`),
    (page) => page.data.length > 0,
  );
  ids.emailId = emails.data[0].id;
  // The bootstrap partner, signed in to the partner portal with an invite link.
  const link = await sys.admin("POST", `/partners/${boot.partnerId}/sign-in-links`, {});
  const signedIn = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
  partnerCookie = signedIn.headers.get("set-cookie")!.split(";")[0];
});
afterAll(async () => {
  await sys.stop();
  await stripe.close();
  await paypal.close();
});

let applicants = 0;
/** An application from the public form, from an email of its own. */
const applicationBody = () => ({ name: "Path Ids", email: `path-ids-${++applicants}-${process.pid}@example.com`, promotion: "Path ids" });

/** Other spellings of `n` that number parsers read as `n`. */
const spellings = (n: number) => [`0${n}`, `00${n}`, `0x${n.toString(16)}`, `${n}.0`, `${n}e0`, `+${n}`, `%20${n}`, `${n}%20`, `${n}n`];

type Route = {
  method: string;
  path: string;
  body?: () => Record<string, unknown>;
  session?: boolean;
  ids?: () => Record<string, number>;
  /** Only these parameters' spellings (a route whose canonical call can succeed once: paying a withdrawal). */
  only?: string[];
  partner?: boolean;
  /** An API key of the program with full access (the merchant API). */
  key?: boolean;
  /** A program's own Stripe webhook endpoint: an event signed with this secret (the raw body, no credentials). */
  signedWith?: string;
  /** A program's Paddle notification endpoint: a notification signed with this secret key. */
  paddleSignedWith?: string;
};

/** Every route with an id in its path; `body` is what makes the canonical call succeed. */
const ROUTES: Route[] = [
  { method: "GET", path: "/api/tracking/status/:programId", session: true },
  { method: "GET", path: "/api/workspaces/:workspaceId/notifications", session: true },
  { method: "POST", path: "/api/workspaces/:workspaceId/notifications/:notificationId/read", session: true },
  { method: "POST", path: "/api/workspaces/:workspaceId/notifications/read-all", session: true, body: () => ({}) },
  { method: "GET", path: "/api/admin/programs/:programId" },
  { method: "POST", path: "/api/admin/programs/:programId/api-keys" },
  { method: "POST", path: "/api/admin/api-keys/:keyId/retire" },
  { method: "POST", path: "/api/admin/programs/:programId/partners", body: () => ({ name: "Another partner" }) },
  { method: "POST", path: "/api/programs/:programId/partners", session: true, body: () => ({ name: "A partner from the dashboard" }) },
  { method: "GET", path: "/api/admin/programs/:programId/sales/:transactionId" },
  { method: "GET", path: "/api/admin/commissions/:commissionId" },
  { method: "GET", path: "/api/admin/processor/events/:eventId" },
  // A program's own Stripe webhook endpoint (docs/processor-webhooks.md): the id is checked before the body is read.
  {
    method: "POST",
    path: "/api/v1/webhooks/processor/programs/:programId",
    ids: () => ({ programId: ids.webhookProgramId }),
    signedWith: WEBHOOK_SIGNING_SECRET,
  },
  // A program's Paddle notification destination (docs/processor-webhooks.md, "Paddle Billing").
  { method: "POST", path: "/api/v1/webhooks/paddle/programs/:programId", ids: () => ({ programId: ids.webhookProgramId }), paddleSignedWith: PADDLE_SECRET_KEY },
  { method: "GET", path: "/api/admin/programs/:programId/partners/:partnerId/balance" },
  { method: "POST", path: "/api/admin/programs/:programId/partners/:partnerId/withdrawals", body: () => ({ amountCents: 100 }) },
  { method: "POST", path: "/api/admin/withdrawals/:withdrawalId/pay" },
  { method: "POST", path: "/api/admin/workspaces/:workspaceId/webhook-endpoints", body: () => ({ url: "http://127.0.0.1:9/other", eventTypes: ["commission.reversed"] }) },
  { method: "GET", path: "/api/admin/workspaces/:workspaceId/webhook-endpoints" },
  { method: "POST", path: "/api/admin/webhook-endpoints/:endpointId/disable", body: () => ({}) },
  { method: "POST", path: "/api/admin/webhook-endpoints/:endpointId/enable" },
  { method: "GET", path: "/api/admin/webhook-endpoints/:endpointId/deliveries" },
  { method: "POST", path: "/api/admin/workspaces/:workspaceId/members", body: () => ({ userId: ids.userId, role: "viewer" }) },
  { method: "PUT", path: "/api/admin/programs/:programId/processor", body: () => ({ connectionStatus: "onboarding" }) },
  // The lists (issue 15.1).
  { method: "GET", path: "/api/workspaces/:workspaceId/programs", session: true },
  { method: "GET", path: "/api/programs/:programId/sales", session: true },
  { method: "GET", path: "/api/programs/:programId/commissions", session: true },
  { method: "GET", path: "/api/programs/:programId/withdrawals", session: true },
  { method: "GET", path: "/api/programs/:programId/customers", session: true },
  // The partner portal (issue 15.3): the partner's routes, and the operator's invite link and enrollment.
  { method: "GET", path: "/api/partner/programs/:programId/commissions", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/breakdowns", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/rewards", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/withdrawals", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/customers", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/notices", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/stats", partner: true },
  { method: "POST", path: "/api/partner/programs/:programId/notices/:notificationId/read", partner: true },
  // Postbacks (docs/partners.md, "Postbacks"): disabled, then enabled again, before the test event that needs it enabled.
  { method: "GET", path: "/api/partner/programs/:programId/postbacks", partner: true },
  { method: "POST", path: "/api/partner/programs/:programId/postbacks", partner: true, body: () => ({ url: "http://127.0.0.1:9/path-ids-postback" }) },
  { method: "POST", path: "/api/partner/programs/:programId/postbacks/:postbackId/disable", partner: true },
  { method: "POST", path: "/api/partner/programs/:programId/postbacks/:postbackId/enable", partner: true },
  { method: "POST", path: "/api/partner/programs/:programId/postbacks/:postbackId/rotate-secret", partner: true },
  { method: "POST", path: "/api/partner/programs/:programId/postbacks/:postbackId/test", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/postbacks/:postbackId/deliveries", partner: true },
  { method: "POST", path: "/api/partner/programs/:programId/postbacks/:postbackId/deliveries/:deliveryId/retry", partner: true, ids: () => ({ deliveryId: postbackDeliveryId }) },
  { method: "POST", path: "/api/admin/partners/:partnerId/sign-in-links", body: () => ({}) },
  { method: "POST", path: "/api/admin/programs/:programId/enrollments", body: () => ({ partnerId: ids.otherPartnerId }) },
  // The program overview (issue 15.2). Decline, then approve again: the partner ends as it began.
  { method: "GET", path: "/api/programs/:programId/overview", session: true },
  { method: "GET", path: "/api/programs/:programId/breakdowns", session: true },
  { method: "GET", path: "/api/programs/:programId/partners", session: true },
  { method: "POST", path: "/api/programs/:programId/partners/:partnerId/withdrawals", session: true, body: () => ({ amountCents: 1 }) },
  { method: "POST", path: "/api/programs/:programId/withdrawals/:withdrawalId/pay", session: true, ids: () => ({ withdrawalId: ids.dashboardWithdrawalId }), only: ["withdrawalId"] },
  { method: "POST", path: "/api/programs/:programId/partners/:partnerId/decline", session: true },
  { method: "POST", path: "/api/programs/:programId/partners/:partnerId/approve", session: true },
  ...["/api/programs", "/api/admin/programs"].map((base): Route => ({
    method: "POST",
    path: `${base}/:programId/partners/:partnerId/ban`,
    session: base === "/api/programs",
    ids: () => ({ partnerId: ids.bannedPartnerId }),
    body: () => ({ reason: "Path ids" }),
  })),
  { method: "GET", path: "/api/admin/programs/:programId/overview" },
  { method: "GET", path: "/api/admin/programs/:programId/breakdowns" },
  { method: "GET", path: "/api/admin/programs/:programId/partners" },
  { method: "POST", path: "/api/admin/programs/:programId/partners/:partnerId/status", body: () => ({ status: "approved" }) },
  // The partner detail and the team's notes on a partner: the dashboard's routes and the operator's.
  { method: "GET", path: "/api/programs/:programId/partners/:partnerId", session: true },
  { method: "PATCH", path: "/api/programs/:programId/partners/:partnerId", session: true, body: () => ({ notes: "Path ids" }) },
  { method: "GET", path: "/api/admin/programs/:programId/partners/:partnerId" },
  { method: "PATCH", path: "/api/admin/programs/:programId/partners/:partnerId", body: () => ({ notes: "Path ids" }) },
  // Program settings and API keys (docs/dashboard-api.md, "Settings"): the dashboard's routes and the operator's
  // (the operator's create and retire of a key are above). The retired key is the one the operator's route retires.
  { method: "GET", path: "/api/programs/:programId/settings", session: true },
  { method: "PATCH", path: "/api/programs/:programId/settings", session: true, body: () => ({ cookieWindowDays: 90 }) },
  { method: "GET", path: "/api/admin/programs/:programId/settings" },
  { method: "PATCH", path: "/api/admin/programs/:programId/settings", body: () => ({ cookieWindowDays: 90 }) },
  { method: "POST", path: "/api/programs/:programId/api-keys", session: true, body: () => ({ name: "Path ids" }) },
  { method: "GET", path: "/api/programs/:programId/api-keys", session: true },
  { method: "GET", path: "/api/admin/programs/:programId/api-keys" },
  { method: "GET", path: "/api/programs/:programId/activity", session: true },
  { method: "GET", path: "/api/admin/programs/:programId/activity" },
  { method: "POST", path: "/api/programs/:programId/api-keys/:keyId/retire", session: true },
  // Rewards (docs/rewards.md): each operation on the dashboard's route and the operator's.
  ...(["dashboard", "admin"] as const).flatMap((caller): Route[] => {
    const base = caller === "dashboard" ? "/api/programs/:programId" : "/api/admin/programs/:programId";
    const session = caller === "dashboard";
    const once = (param: string, key: string): Pick<Route, "ids" | "only"> => ({ ids: () => ({ [param]: ids[`${caller}${key}`] }), only: [param] });
    return [
      { method: "GET", path: `${base}/rewards`, session },
      { method: "GET", path: `${base}/rewards/:rewardId`, session },
      { method: "POST", path: `${base}/rewards`, session, body: () => ({ groupId: ids.groupId, kind: "flat", value: 200 }) },
      { method: "PUT", path: `${base}/rewards/:rewardId`, session, body: () => ({ kind: "flat", value: 300 }) },
      { method: "POST", path: `${base}/rewards/:rewardId/archive`, session, ...once("rewardId", "ArchiveRewardId") },
      { method: "POST", path: `${base}/rewards/preview`, session, body: () => ({ amountCents: 4900 }) },
      { method: "POST", path: `${base}/groups`, session, body: () => ({ name: uniqueId("group") }) },
      { method: "PATCH", path: `${base}/groups/:groupId`, session, body: () => ({ holdDays: 10 }) },
      { method: "POST", path: `${base}/groups/:groupId/archive`, session, ...once("groupId", "ArchiveGroupId") },
      { method: "PUT", path: `${base}/group-members`, session, body: () => ({ assignments: [{ partnerId: ids.partnerId, groupId: ids.groupId }] }) },
      { method: "POST", path: `${base}/commissions/:commissionId/void`, session, ...once("commissionId", "LeadCommissionId") },
      { method: "GET", path: `${base}/commissions/:commissionId`, session },
      // Manual commissions and holds (docs/api.md): a bonus; a commission not yet credited held, then released.
      { method: "POST", path: `${base}/commissions`, session, body: () => ({ partnerId: ids.partnerId, type: "bonus", amountCents: 100, description: "Path ids" }) },
      { method: "POST", path: `${base}/commissions/:commissionId/hold`, session, ids: () => ({ commissionId: ids.heldCommissionId }) },
      { method: "POST", path: `${base}/commissions/:commissionId/release`, session, ids: () => ({ commissionId: ids.heldCommissionId }) },
      // Fraud rules and reviews (docs/fraud.md): every caller clears one review and rejects another (again: changed false).
      { method: "GET", path: `${base}/fraud-settings`, session },
      { method: "PUT", path: `${base}/fraud-settings`, session, body: () => ({ paid_traffic: { enabled: false } }) },
      { method: "GET", path: `${base}/fraud/reviews`, session },
      { method: "POST", path: `${base}/fraud/reviews/:reviewId/clear`, session, ids: () => ({ reviewId: ids.clearedReviewId }) },
      { method: "POST", path: `${base}/fraud/reviews/:reviewId/reject`, session, ids: () => ({ reviewId: ids.rejectedReviewId }) },
      { method: "GET", path: `${base}/processor/api-key`, session },
      { method: "PUT", path: `${base}/processor/api-key`, session, body: () => ({ restrictedKey: STRIPE_KEY }) },
      // Coupon codes (docs/processor-webhooks.md, "Coupon codes"): the merchant's Stripe coupons need the key, set just above.
      { method: "GET", path: `${base}/processor/coupons`, session },
      { method: "POST", path: `${base}/coupon-codes`, session, body: () => ({ partnerId: ids.partnerId, source: "manual", code: `PATH-IDS-${caller}` }) },
      { method: "GET", path: `${base}/coupon-codes`, session },
      { method: "DELETE", path: `${base}/coupon-codes/:couponCodeId`, session },
      // Stripe onboarding needs the program's key, set just above.
      ...(session ? [{ method: "POST", path: "/api/partner/programs/:programId/stripe-onboarding", partner: true }] : []),
      { method: "DELETE", path: `${base}/processor/api-key`, session },
      // The Stripe screen (docs/processor-webhooks.md, "Set-up for a merchant"): linking the account already linked changes nothing.
      { method: "GET", path: `${base}/processor`, session },
      { method: "PUT", path: `${base}/processor/account`, session, body: () => ({ accountId: `acct_path_ids_${process.pid}` }) },
      { method: "PUT", path: `${base}/processor/webhook-secret`, session, body: () => ({ signingSecret: "whsec_pathIdsSigningSecret" }) },
      { method: "DELETE", path: `${base}/processor/webhook-secret`, session },
      // PayPal payouts (docs/payouts.md, "PayPal"): the program's API credentials, checked with the PayPal double.
      { method: "GET", path: `${base}/processor/paypal`, session },
      { method: "PUT", path: `${base}/processor/paypal`, session, body: () => ({ clientId: PAYPAL_CLIENT_ID, clientSecret: PAYPAL_SECRET, mode: "sandbox" }) },
      { method: "DELETE", path: `${base}/processor/paypal`, session },
      // Paddle Billing (docs/processor-webhooks.md, "Paddle Billing").
      { method: "GET", path: `${base}/processor/paddle`, session },
      { method: "PUT", path: `${base}/processor/paddle`, session, body: () => ({ environment: "sandbox" }) },
    ];
  }),
  // The team (issue 27): members and invitations, on the dashboard's route and, where there is one, the operator's.
  ...(["dashboard", "admin"] as const).flatMap((caller): Route[] => {
    const base = caller === "dashboard" ? "/api/workspaces/:workspaceId" : "/api/admin/workspaces/:workspaceId";
    const session = caller === "dashboard";
    const once = (param: string, key: string): Pick<Route, "ids" | "only"> => ({ ids: () => ({ [param]: ids[`${caller}${key}`] }), only: [param] });
    return [
      { method: "GET", path: `${base}/members`, session },
      { method: "DELETE", path: `${base}/members/:userId`, session, ...once("userId", "RemoveUserId") },
      { method: "GET", path: `${base}/invitations`, session },
      { method: "POST", path: `${base}/invitations`, session, body: () => ({ email: `ids-invited-by-${caller}-${process.pid}@example.com`, role: "viewer" }) },
      { method: "DELETE", path: `${base}/invitations/:invitationId`, session, ...once("invitationId", "RevokeInvitationId") },
    ];
  }),
  { method: "PATCH", path: "/api/workspaces/:workspaceId/members/:userId", session: true, ids: () => ({ userId: ids.memberUserId }), body: () => ({ role: "viewer" }) },
  // Webhook endpoints from the dashboard (issue 27), and the operator's new routes (its create, list, disable, enable
  // and deliveries are above). Disable before enable, so the test event and the retry meet an enabled endpoint; the
  // retried delivery is a test event's, still pending (port 9 refuses it and it waits to be tried again): 200, retried false.
  { method: "POST", path: "/api/workspaces/:workspaceId/webhook-endpoints", session: true, body: () => ({ url: "http://127.0.0.1:9/dashboard", eventTypes: ["commission.reversed"] }) },
  { method: "GET", path: "/api/workspaces/:workspaceId/webhook-endpoints", session: true },
  { method: "POST", path: "/api/workspaces/:workspaceId/webhook-endpoints/:endpointId/disable", session: true, body: () => ({}) },
  { method: "POST", path: "/api/workspaces/:workspaceId/webhook-endpoints/:endpointId/enable", session: true },
  { method: "POST", path: "/api/workspaces/:workspaceId/webhook-endpoints/:endpointId/rotate-secret", session: true },
  { method: "POST", path: "/api/workspaces/:workspaceId/webhook-endpoints/:endpointId/test", session: true },
  { method: "GET", path: "/api/workspaces/:workspaceId/webhook-endpoints/:endpointId/deliveries", session: true },
  { method: "POST", path: "/api/workspaces/:workspaceId/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry", session: true, ids: () => ({ deliveryId: webhookDeliveryId }) },
  { method: "POST", path: "/api/admin/webhook-endpoints/:endpointId/rotate-secret" },
  { method: "POST", path: "/api/admin/webhook-endpoints/:endpointId/test" },
  { method: "POST", path: "/api/admin/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry", ids: () => ({ deliveryId: webhookDeliveryId }) },
  // The merchant API's webhook endpoints (docs/api.md): one made with a key of the program.
  ...["disable", "enable", "rotate-secret", "test"].map((op): Route => ({
    method: "POST",
    path: `/api/v1/webhook-endpoints/:endpointId/${op}`,
    key: true,
    ids: () => ({ endpointId: keyWebhook.endpointId }),
  })),
  { method: "GET", path: "/api/v1/webhook-endpoints/:endpointId/deliveries", key: true, ids: () => ({ endpointId: keyWebhook.endpointId }) },
  {
    method: "POST",
    path: "/api/v1/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry",
    key: true,
    ids: () => ({ endpointId: keyWebhook.endpointId, deliveryId: keyWebhook.deliveryId }),
  },
  // Applications: the public form and application (no credentials), the review list and decisions on the dashboard's
  // route and the operator's.
  { method: "GET", path: "/api/public/programs/:programId/application" },
  // The embedded referrals page (docs/embedded-referrals.md): the program names its frame-ancestors.
  { method: "GET", path: "/embed/programs/:programId/referrals" },
  { method: "POST", path: "/api/public/programs/:programId/applications", body: applicationBody },
  { method: "GET", path: "/api/programs/:programId/applications", session: true },
  { method: "GET", path: "/api/admin/programs/:programId/applications" },
  { method: "GET", path: "/api/programs/:programId/applications/:applicationId", session: true },
  { method: "GET", path: "/api/admin/programs/:programId/applications/:applicationId" },
  { method: "POST", path: "/api/programs/:programId/applications/:applicationId/approve", session: true },
  { method: "POST", path: "/api/admin/programs/:programId/applications/:applicationId/approve" },
  { method: "POST", path: "/api/programs/:programId/applications/:applicationId/decline", session: true, ids: () => ({ applicationId: ids.declinedApplicationId }) },
  { method: "POST", path: "/api/admin/programs/:programId/applications/:applicationId/decline", ids: () => ({ applicationId: ids.declinedApplicationId }) },
  // Payouts (docs/payouts.md): runs, their files, the schedule, failing a payout (the operator's paid withdrawal,
  // returned: failing it again changes nothing), on the dashboard's route and the operator's; the partner's own.
  ...(["dashboard", "admin"] as const).flatMap((caller): Route[] => {
    const base = caller === "dashboard" ? "/api/programs/:programId" : "/api/admin/programs/:programId";
    const session = caller === "dashboard";
    return [
      { method: "GET", path: `${base}/payout-runs/preview`, session },
      { method: "POST", path: `${base}/payout-runs`, session, body: () => ({ periodKey: "path-ids" }) },
      { method: "GET", path: `${base}/payout-runs`, session },
      { method: "GET", path: `${base}/payout-runs/:runId`, session },
      ...["payouts", "bank", "paypal"].map((file) => ({ method: "GET", path: `${base}/payout-runs/:runId/${file}.csv`, session })),
      { method: "POST", path: `${base}/payout-runs/:runId/mark-paid`, session, body: () => ({ method: "bank" }) },
      { method: "POST", path: `${base}/withdrawals/:withdrawalId/fail`, session, body: () => ({ reason: "Path ids" }) },
      { method: "GET", path: `${base}/payout-schedule`, session },
      { method: "PUT", path: `${base}/payout-schedule`, session, body: () => ({ kind: "monthly", dayOfMonth: 1 }) },
    ];
  }),
  { method: "GET", path: "/api/partner/programs/:programId/withdrawals/:withdrawalId", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/statement.csv", partner: true },
  { method: "GET", path: "/api/partner/programs/:programId/payout-account", partner: true },
  // Partner emails (docs/partners.md, "Emails"): the log, a retry, the settings; the unsubscribe links (a token, not an id).
  ...(["dashboard", "admin"] as const).flatMap((caller): Route[] => {
    const base = caller === "dashboard" ? "/api/programs/:programId" : "/api/admin/programs/:programId";
    const session = caller === "dashboard";
    return [
      { method: "GET", path: `${base}/partner-emails`, session },
      { method: "POST", path: `${base}/partner-emails/:emailId/retry`, session },
      { method: "GET", path: `${base}/partner-email-settings`, session },
      { method: "PUT", path: `${base}/partner-email-settings`, session, body: () => ({ monthlySummary: true }) },
    ];
  }),
  { method: "GET", path: "/api/public/unsubscribe/:token" },
  { method: "POST", path: "/api/public/unsubscribe/:token" },
  { method: "POST", path: "/api/public/unsubscribe/:token/resubscribe" },
  // CSV exports of the lists (docs/dashboard-api.md, "Exports (CSV)"): the dashboard's route and the operator's of each.
  ...["sales", "commissions", "withdrawals", "partners"].flatMap((what): Route[] => [
    { method: "GET", path: `/api/programs/:programId/${what}.csv`, session: true },
    { method: "GET", path: `/api/admin/programs/:programId/${what}.csv` },
  ]),
];

/**
 * The merchant API's routes with an id (docs/api.md): the dashboard's, with the program taken from a full-access key;
 * what succeeds once (archiving, reversing) has its own ids.
 */
const PROGRAM_API = new Set(ENDPOINTS.filter((e) => e.http.route === "program-api").map((e) => `${e.http.method} ${e.http.path}`));
const KEY_ONCE: Record<string, string> = { groupId: "keyArchiveGroupId", rewardId: "keyArchiveRewardId", commissionId: "keyLeadCommissionId" };
ROUTES.push(
  ...ROUTES.flatMap((r): Route[] => {
    const rest = r.session ? /^\/api\/programs\/:programId(\/.*\/:.*)$/.exec(r.path)?.[1] : undefined;
    if (!rest || !PROGRAM_API.has(`${r.method} /api/v1${rest}`)) return [];
    const once = r.only?.[0];
    return [{ ...r, path: `/api/v1${rest}`, session: false, key: true, ...(once ? { ids: () => ({ [once]: ids[KEY_ONCE[once]] }) } : {}) }];
  }),
);

/** A delivery of the webhook endpoint (a test event's), for the retry routes. */
let webhookDeliveryId: number;
/** A delivery of the partner's postback (a test event's), for the portal's retry route. */
let postbackDeliveryId: number;
const keyWebhook = { endpointId: 0, deliveryId: 0 };
beforeAll(async () => {
  webhookDeliveryId = (await sys.admin("POST", `/webhook-endpoints/${ids.endpointId}/test`)).id;
  const made = await sys.http("POST", "/api/v1/webhook-endpoints", { key: fullAccessKey, body: { url: "http://127.0.0.1:9/key-hooks", eventTypes: ["commission.reversed"] } });
  keyWebhook.endpointId = made.body.id;
  keyWebhook.deliveryId = (await sys.http("POST", `/api/v1/webhook-endpoints/${made.body.id}/test`, { key: fullAccessKey, body: {} })).body.id;
  ids.runId = (await sys.admin("POST", `/programs/${ids.programId}/payout-runs`, { periodKey: "path-ids" })).run.id;
  const postback = await sys.http("POST", `/api/partner/programs/${boot.programId}/postbacks`, { headers: { Cookie: partnerCookie }, body: { url: "http://127.0.0.1:9/postback" } });
  ids.postbackId = postback.body.id;
  postbackDeliveryId = (await sys.http("POST", `/api/partner/programs/${boot.programId}/postbacks/${postback.body.id}/test`, { headers: { Cookie: partnerCookie }, body: {} })).body.id;
});

const send = (route: Route, path: string) =>
  route.signedWith
    ? deliver(sys, event("customer.created", { id: processorId("cus"), object: "customer" }, { account: null }), { secret: route.signedWith, path })
    : route.paddleSignedWith
      ? sys.http("POST", path, { raw: paddleCustomerCreated, headers: { "Paddle-Signature": signPaddleNotification(route.paddleSignedWith, paddleCustomerCreated) } })
      : sys.http(route.method, path, {
          ...(route.session ? { headers: { Cookie: cookie } } : route.partner ? { headers: { Cookie: partnerCookie } } : { key: route.key ? fullAccessKey : ADMIN_TOKEN }),
          body: route.body?.() ?? (route.method === "GET" ? undefined : {}),
        });

/** The route's path with each `:param` replaced by its id (or `override` for one of them). */
function pathOf(route: Route, override?: { param: string; value: string }) {
  return route.path.replace(/:([A-Za-z]+)/g, (_, param: string) => {
    if (param === override?.param) return override.value;
    if (param === "transactionId") return transactionId;
    return param === "eventId" ? "evt_never_received" : String(route.ids?.()[param] ?? ids[param]);
  });
}

/** Text keys (a transaction id, a processor event id, an unsubscribe token) are not numeric ids. */
const idParams = (route: Route) => [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]).filter((p) => !["transactionId", "eventId", "token"].includes(p));

test("every route of the running gateway with a path parameter is in this table", () => {
  const routes = (sys.broker.getLocalService("gateway") as unknown as { settings: { routes: Parameters<typeof routeAliasKeys>[0] } }).settings.routes;
  const withParams = routeAliasKeys(routes).filter((key) => key.includes("/:"));
  expect(withParams.length).toBeGreaterThan(15);
  expect(withParams.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
});

describe.each(ROUTES.filter((r) => idParams(r).length).map((r) => [`${r.method} ${r.path}`, r] as const))("%s", (_name, route) => {
  test.each(route.only ?? idParams(route))("another spelling of an existing %s is a 400 invalid_request; the canonical id answers", async (param) => {
    for (const value of spellings(route.ids?.()[param] ?? ids[param])) {
      const res = await send(route, pathOf(route, { param, value }));
      expect({ value, status: res.status }).toEqual({ value, status: 400 });
      expect(res.body).toEqual({ success: false, error: { code: "invalid_request", message: expect.stringContaining(`'${param}'`) } });
    }
    const ok = await send(route, pathOf(route));
    expect({ path: pathOf(route), status: ok.status, body: ok.status < 300 ? "ok" : ok.body }).toEqual({ path: pathOf(route), status: ok.status, body: "ok" });
  });
});

test("the status endpoint echoes the path: only the canonical spelling answers, and it answers with itself", async () => {
  const res = await sys.http("GET", `/api/tracking/status/${boot.programId}`, { headers: { Cookie: cookie } });
  expect(res.status).toBe(200);
  expect(res.body.data.programId).toBe(String(boot.programId));
  for (const value of ["2147483648", "9007199254740993", "99999999999999999999999", "0", "-1", ""]) {
    const bad = await sys.http("GET", `/api/tracking/status/${value}`, { headers: { Cookie: cookie } });
    expect({ value, status: bad.status }).toEqual({ value, status: value === "" ? 404 : 400 });
  }
});

test("ids in query strings and JSON bodies follow the same rule", async () => {
  const n = boot.programId;
  for (const value of spellings(n)) {
    const list = await sys.http("GET", `/api/admin/notifications?programId=${value}`, { key: ADMIN_TOKEN });
    expect({ value, status: list.status, code: list.body.error?.code }).toEqual({ value, status: 400, code: "invalid_request" });
    const approve = await sys.http("POST", "/api/admin/commissions/approve-due", { key: ADMIN_TOKEN, body: { programId: decodeURIComponent(value) } });
    expect({ value, status: approve.status, code: approve.body.error?.code }).toEqual({ value, status: 400, code: "invalid_request" });
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: decodeURIComponent(value), referral_code: boot.referralCode } });
    expect({ value, status: click.status, code: click.body.error?.code }).toEqual({ value, status: 400, code: "invalid_request" });
  }
  expect((await sys.http("GET", `/api/admin/notifications?programId=${n}`, { key: ADMIN_TOKEN })).status).toBe(200);
  expect((await sys.http("POST", "/api/admin/commissions/approve-due", { key: ADMIN_TOKEN, body: { programId: String(n) } })).status).toBe(200);
  expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: String(n), referral_code: boot.referralCode } })).status).toBe(200);
  // Numbers in JSON are numbers: 1 and 1.0 are the same JSON value.
  expect((await sys.http("POST", "/api/v1/track/click", { raw: `{"program_id": ${n}.0, "referral_code": "${boot.referralCode}"}` })).status).toBe(200);
});

test("limits in query strings are plain decimal too", async () => {
  for (const value of ["0x10", "1e1", "010", "%2010"]) {
    const res = await sys.http("GET", `/api/admin/notifications?limit=${value}`, { key: ADMIN_TOKEN });
    expect({ value, status: res.status }).toEqual({ value, status: 400 });
  }
  expect((await sys.http("GET", "/api/admin/notifications?limit=10", { key: ADMIN_TOKEN })).status).toBe(200);
});
