/**
 * Double-sided rewards (docs/rewards.md, "The referred customer's discount"): a group's discount for the customers its
 * partners refer, answered for a click id to the browser (no key, allowed origins apply) and to the merchant's server
 * (API key), and recorded with the sale when the checkout applied it (Stripe's session discounts, Paddle's discount).
 */
import notifications from "../fixtures/paddle/notifications.json";
import { checkoutSession, deliver, deliverPaddle, event } from "../support/processor";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";

const STRIPE_SECRET = "whsec_referred_discount_secret";
const PADDLE_SECRET = "pdl_ntfset_01referred_DiscountSecretKey";
const discount = { platform: "stripe", id: "FRIENDS-20", code: "FRIENDS20", description: "20% off your first month" };

let sys: TestSystem;
let boot: Bootstrap;
let friendsGroupId: number;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
  friendsGroupId = (await sys.admin("POST", `/programs/${boot.programId}/groups`, { name: "Friends", customerDiscount: discount })).id;
  await sys.admin("PUT", `/programs/${boot.programId}/group-members`, { assignments: [{ partnerId: boot.partnerId, groupId: friendsGroupId }] });
  await sys.admin("PUT", `/programs/${boot.programId}/processor/webhook-secret`, { signingSecret: STRIPE_SECRET });
  await sys.admin("PUT", `/programs/${boot.programId}/processor/paddle`, { secretKey: PADDLE_SECRET });
});
afterAll(() => sys.stop());

const click = async (p: Bootstrap = boot) => (await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: p.referralCode } })).body.click_id as string;
const askBrowser = (clickId: string, programId = boot.programId) => sys.http("POST", "/api/v1/track/discount", { body: { program_id: programId, click_id: clickId } });

test("a referral click's visitor is offered its partner's group discount, in the browser and from the server", async () => {
  const clickId = await click();
  const browser = await askBrowser(clickId);
  expect(browser.status).toBe(200);
  expect(browser.body).toEqual({ success: true, click_id: clickId, discount: { ...discount, platform: "stripe" } });
  const server = await sys.http("POST", "/api/v1/track/discount", { key: boot.apiKey, body: { click_id: clickId } });
  expect(server.body.discount).toEqual(discount);
});

test("no discount for a partner of a group without one, or a partner banned since; an unknown click is a 404", async () => {
  const other = await sys.bootstrap();
  expect((await askBrowser(await click(other), other.programId)).body.discount).toBeNull();
  // The click of this program's partner, asked for another program: unknown there.
  expect((await askBrowser(await click(), other.programId)).status).toBe(404);
  expect((await askBrowser("clk_neverissued0000", boot.programId)).body.error.code).toBe("not_found");
  const banned = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Soon banned" });
  await sys.admin("PUT", `/programs/${boot.programId}/group-members`, { assignments: [{ partnerId: banned.partner.id, groupId: friendsGroupId }] });
  const clickId = (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: banned.enrollment.referralCode } })).body.click_id;
  expect((await askBrowser(clickId)).body.discount).toEqual(discount);
  await sys.http("POST", `/api/admin/programs/${boot.programId}/partners/${banned.partner.id}/ban`, { key: ADMIN_TOKEN, body: { reason: "fraud" } });
  expect((await askBrowser(clickId)).body.discount).toBeNull();
});

test("a group's discount is checked at the edge: a Paddle discount is a dsc_ id, words on one line", async () => {
  const bad = await sys.http("POST", `/api/admin/programs/${boot.programId}/groups`, { key: ADMIN_TOKEN, body: { name: "Bad", customerDiscount: { ...discount, platform: "paddle" } } });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toContain("dsc_");
});

test("the checkout that applied it records the discount with the sale: Stripe's session discounts, Paddle's discount", async () => {
  const session = checkoutSession({ metadata: { svc_click_id: await click() }, discounts: [{ coupon: "FRIENDS-20", promotion_code: null }] });
  const res = await deliver(sys, event("checkout.session.completed", session, { account: null }), { secret: STRIPE_SECRET, path: `/api/v1/webhooks/processor/programs/${boot.programId}` });
  expect(res.body).toMatchObject({ handled: true, attributionMethod: "click", partnerId: boot.partnerId });
  expect(await sys.admin("GET", `/programs/${boot.programId}/sales/${session.id}`)).toMatchObject({ discountIds: ["FRIENDS-20"], partnerId: boot.partnerId });

  const sample = notifications["transaction.completed"];
  const transaction = {
    ...sample,
    event_id: `evt_01referred${process.pid}`,
    data: { ...sample.data, id: `txn_01referred${process.pid}`, discount_id: "dsc_01friends20", custom_data: { svc_click_id: await click() } },
  };
  expect((await deliverPaddle(sys, transaction, { programId: boot.programId, secret: PADDLE_SECRET })).body).toMatchObject({ handled: true, attributionMethod: "click" });
  expect(await sys.admin("GET", `/programs/${boot.programId}/sales/${transaction.data.id}`)).toMatchObject({ discountIds: ["dsc_01friends20"] });
});
