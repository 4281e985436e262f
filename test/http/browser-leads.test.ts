/**
 * What a browser (no secret, only a public referral code) may claim
 * (docs/security.md, "Browser leads"): it binds its own click to a new
 * customer key, and nothing more. It cannot pre-claim an existing customer
 * key or an email to take a later sale, and a key of one program records no
 * click for another.
 */
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
/** A second partner of the same program: the attacker, with their own public referral code. */
let attacker: { partnerId: number; referralCode: string };

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
  const { partner, enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Attacker" });
  attacker = { partnerId: partner.id, referralCode: enrollment.referralCode };
});
afterAll(async () => {
  await sys?.stop();
});

async function clicksOf(programId: number): Promise<number> {
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    if (db.kind !== "sql") throw new Error("counts clicks with SQL");
    return (await db.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM clicks WHERE program_id = $1", [programId]))[0].n;
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
}

const clickOf = async (referralCode: string) =>
  (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: referralCode } })).body.click_id as string;
const browserLead = (body: Record<string, unknown>) => sys.http("POST", "/api/v1/track/lead", { body: { program_id: boot.programId, ...body } });
const sale = (body: Record<string, unknown>) => sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 10_000, ...body } });

test("a browser lead binds its click to a new customer key; the same signup again is a no-op", async () => {
  const click = await clickOf(boot.referralCode);
  const customer = uniqueId("visitor");
  const first = await browserLead({ customer_key: customer, click_id: click });
  expect(first.body).toMatchObject({ success: true, created: true, attributed: true, partner_id: boot.partnerId });
  const again = await browserLead({ customer_key: customer, click_id: click });
  expect(again.body).toMatchObject({ success: true, created: false, lead_id: first.body.lead_id, partner_id: boot.partnerId });
});

test("a browser cannot claim a customer key that already has a lead, attributed or not: 409, and the sale goes where it should", async () => {
  const attackerClick = await clickOf(attacker.referralCode);
  // A customer the merchant's server recorded without a click, and one attributed to the first partner.
  const unattributed = uniqueId("known");
  expect((await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: unattributed } })).status).toBe(200);
  const attributed = uniqueId("known");
  const click = await clickOf(boot.referralCode);
  expect((await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: attributed, click_id: click } })).body.attributed).toBe(true);

  for (const customer of [unattributed, attributed]) {
    const claim = await browserLead({ customer_key: customer, click_id: attackerClick });
    expect({ customer, status: claim.status, code: claim.body.error.code }).toEqual({ customer, status: 409, code: "conflict" });
  }
  expect((await sale({ customer_key: unattributed })).body).toMatchObject({ attributed: false, partner_id: null });
  expect((await sale({ customer_key: attributed })).body).toMatchObject({ attributed: true, partner_id: boot.partnerId });
  // The merchant's server, with the key, may still bind a click to the unattributed customer.
  const fromServer = await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: unattributed, click_id: click } });
  expect(fromServer.body).toMatchObject({ created: false, attributed: true, partner_id: boot.partnerId });
});

test("a browser cannot record an email: 400, and a later sale with that email is not the attacker's", async () => {
  const attackerClick = await clickOf(attacker.referralCode);
  const email = `${uniqueId("victim")}@example.com`;
  const claim = await browserLead({ customer_key: uniqueId("fake"), email, click_id: attackerClick });
  expect({ status: claim.status, code: claim.body.error.code, message: claim.body.error.message }).toEqual({
    status: 400,
    code: "invalid_request",
    message: expect.stringMatching(/^Invalid 'email': a browser signup cannot record an email/),
  });
  expect((await sale({ email })).body).toMatchObject({ attributed: false, partner_id: null });
  // From the server, with the key, an email is recorded and attributes as before.
  const click = await clickOf(boot.referralCode);
  expect((await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: uniqueId("real"), email, click_id: click } })).status).toBe(200);
  expect((await sale({ email })).body).toMatchObject({ attributed: true, partner_id: boot.partnerId });
});

test("a key of program A records no click for program B (and skips none of B's origin checks)", async () => {
  const other = await sys.bootstrap({ name: "Program B", allowedOrigins: ["https://b.example"] });
  const res = await sys.http("POST", "/api/v1/track/click", { key: boot.apiKey, body: { program_id: other.programId, referral_code: other.referralCode } });
  expect({ status: res.status, body: res.body }).toEqual({
    status: 400,
    body: { success: false, error: { code: "invalid_request", message: "Invalid 'program_id': it does not match the program of the API key." } },
  });
  expect(await clicksOf(other.programId)).toBe(0);
  // Its own program's click with its key is fine.
  const own = await sys.http("POST", "/api/v1/track/click", { key: boot.apiKey, body: { program_id: boot.programId, referral_code: boot.referralCode } });
  expect(own.status).toBe(200);
  // B's own browser clicks still go through B's origin rule.
  expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: other.programId, referral_code: other.referralCode }, headers: { Origin: "https://b.example" } })).status).toBe(
    200,
  );
  expect(await clicksOf(other.programId)).toBe(1);
});
