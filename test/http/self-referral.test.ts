/** The self-referral guard (services/attribution, services/sales): a partner's own leads and sales are not theirs. */
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(() => sys.stop());

const admin = async (method: string, path: string, body?: unknown) => {
  const res = await sys.http(method, `/api/admin${path}`, { key: ADMIN_TOKEN, body });
  if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

/** A program (guard as given, or the default) with a key and a partner who is also a customer. */
async function setUp(program: Record<string, unknown> = {}) {
  const p = await admin("POST", "/programs", { name: "Guarded", commissionRule: { type: "percentage", basisPoints: 2000 }, paymentTrackingMode: "s2s", ...program });
  const { apiKey } = await admin("POST", `/programs/${p.id}/api-keys`);
  const customerKey = uniqueId("partner-user");
  const { partner, enrollment } = await admin("POST", `/programs/${p.id}/partners`, { name: "Jane", email: "Jane@Example.com", customerKey });
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.id, referral_code: enrollment.referralCode } });
  return { program: p, apiKey, partner, customerKey, clickId: click.body.click_id as string };
}

const sale = (apiKey: string, body: Record<string, unknown>) =>
  sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: uniqueId("order"), amount_cents: 10_000, ...body } });

test("the guard is on by default and the partner's customer key is stored", async () => {
  const { program, partner, customerKey } = await setUp();
  expect(program.selfReferralGuard).toBe(true);
  expect(partner).toMatchObject({ email: "jane@example.com", customerKey });
});

test("guard on: the partner buying through their own link is recorded unattributed, with the reason, and earns nothing", async () => {
  const { program, apiKey, clickId } = await setUp();
  const res = await sale(apiKey, { click_id: clickId, email: "JANE@example.COM" });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true, attributed: false, partner_id: null, reason: "self_referral", commission_id: null, commission_status: null });

  const stored = await admin("GET", `/programs/${program.id}/sales/${res.body.transaction_id}`);
  expect(stored).toMatchObject({ partnerId: null, commissionId: null, commissionState: "none", noCommissionReason: "self_referral" });

  // Another customer through the same link is the partner's, as always.
  const other = await sale(apiKey, { click_id: clickId, email: "joe@example.com" });
  expect(other.body).toMatchObject({ attributed: true, reason: null, commission_id: expect.any(Number) });
});

test("guard on: a sale under the partner's own customer key is not attributed", async () => {
  const { apiKey, clickId, customerKey } = await setUp();
  const res = await sale(apiKey, { click_id: clickId, customer_key: customerKey });
  expect(res.body).toMatchObject({ attributed: false, reason: "self_referral", commission_id: null });
});

test("guard on: the partner's own signup is recorded unattributed with the reason, and their later sale by email too", async () => {
  const { apiKey, clickId } = await setUp();
  const lead = await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: uniqueId("u"), click_id: clickId, email: "jane@example.com" } });
  expect(lead.status).toBe(200);
  expect(lead.body).toMatchObject({ created: true, attributed: false, partner_id: null, reason: "self_referral" });
  const later = await sale(apiKey, { email: "jane@example.com" });
  expect(later.body).toMatchObject({ attributed: false, commission_id: null });
});

test("guard off: the partner's own lead and sale are attributed and earn a commission", async () => {
  const { program, apiKey, partner, clickId, customerKey } = await setUp({ selfReferralGuard: false });
  expect(program.selfReferralGuard).toBe(false);
  const lead = await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customerKey, click_id: clickId, email: "jane@example.com" } });
  expect(lead.body).toMatchObject({ attributed: true, partner_id: partner.id, reason: null });
  const res = await sale(apiKey, { click_id: clickId, email: "jane@example.com", customer_key: customerKey });
  expect(res.body).toMatchObject({ attributed: true, partner_id: partner.id, reason: null, commission_id: expect.any(Number) });
});

test("a partner with no email or customer key never matches", async () => {
  const p = await admin("POST", "/programs", { name: "Plain", commissionRule: { type: "flat", amountCents: 500 }, paymentTrackingMode: "s2s" });
  const { apiKey } = await admin("POST", `/programs/${p.id}/api-keys`);
  const { enrollment } = await admin("POST", `/programs/${p.id}/partners`, { name: "Anon" });
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.id, referral_code: enrollment.referralCode } });
  const res = await sale(apiKey, { click_id: click.body.click_id, email: "someone@example.com", customer_key: uniqueId("u") });
  expect(res.body).toMatchObject({ attributed: true, reason: null });
});
