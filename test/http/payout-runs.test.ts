/**
 * Payout runs over HTTP on the whole system (docs/payouts.md): the preview names who is paid and who is skipped
 * and why, confirming with a stale total changes nothing, a period is paid once, the bank and PayPal files carry
 * the partners' details, marking paid and failed moves the balances, the schedule is kept, and reconcile agrees.
 * Stripe transfers are in test/http/stripe-connect-payouts.test.ts, a crash mid-batch in
 * test/reliability/payout-crash.test.ts.
 */
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { runCli } from "../support/processes";

let sys: TestSystem;
let boot: Bootstrap;
const partners: Record<"bank" | "paypal" | "none" | "small", Bootstrap> = {} as never;

/** A partner of the program with `sales` sales of 10000 (a 2000 commission each) and the payout method given. */
async function partnerWith(name: string, sales: number, profile: Record<string, unknown> | null): Promise<Bootstrap> {
  const { partner, enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name, email: `${name.toLowerCase()}@example.com` });
  const p = { ...boot, partnerId: partner.id, referralCode: enrollment.referralCode };
  for (let i = 0; i < sales; i++) await attributedSale(sys, p, { amountCents: 10_000 });
  if (profile) await sys.broker.call("programs.updatePartnerProfile", { partnerId: partner.id, ...profile });
  return p;
}

const runs = (path = "", init?: { method?: string; body?: unknown }) =>
  sys.http(init?.method ?? "GET", `/api/admin/programs/${boot.programId}/payout-runs${path}`, { key: ADMIN_TOKEN, body: init?.body });
const balanceOf = (partnerId: number) => sys.admin("GET", `/programs/${boot.programId}/partners/${partnerId}/balance`);

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
  // The default group pays from 25.00 on.
  const { groups } = await sys.admin("GET", `/programs/${boot.programId}/rewards`);
  await sys.admin("PATCH", `/programs/${boot.programId}/groups/${groups[0].id}`, { minPayoutCents: 2500 });
  partners.bank = await partnerWith("Anna", 3, { country: "DE", payoutMethod: "bank", bank: { accountHolder: "Anna Bank", iban: "DE89 3704 0044 0532 0130 00", swift: "COBADEFFXXX" } });
  partners.paypal = await partnerWith("Paul", 2, { country: "US", payoutMethod: "paypal", paypalEmail: "paul@paypal.example" });
  partners.none = await partnerWith("Nina", 2, null);
  partners.small = await partnerWith("Sam", 1, { payoutMethod: "bank", bank: { accountHolder: "Sam", iban: "DE89370400440532013000" } });
  expect((await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId })).approved).toBe(8);
});
afterAll(() => sys.stop());

test("a run: preview, a stale confirmation refused, one run per period, files, paid and failed, reconcile", async () => {
  const preview = await runs("/preview?periodKey=2030-01");
  expect(preview.status).toBe(200);
  expect(preview.body).toMatchObject({ currency: "usd", periodKey: "2030-01", existingRunId: null, totalCents: 10_000 });
  expect(preview.body.payouts).toEqual([
    { partnerId: partners.bank.partnerId, partnerName: "Anna", method: "bank", amountCents: 6000, commissions: 3 },
    { partnerId: partners.paypal.partnerId, partnerName: "Paul", method: "paypal", amountCents: 4000, commissions: 2 },
  ]);
  expect(preview.body.skipped.map((s: { partnerId: number; code: string }) => [s.partnerId, s.code])).toEqual([
    [partners.none.partnerId, "no_payout_method"],
    [partners.small.partnerId, "below_minimum"],
  ]);

  const stale = await runs("", { method: "POST", body: { periodKey: "2030-01", expectedTotalCents: 9000 } });
  expect(stale.status).toBe(409);
  expect(stale.body.error).toMatchObject({ code: "payout_preview_changed", message: expect.stringMatching(/Preview the run again/) });
  expect((await runs()).body.data).toEqual([]);

  const started = await runs("", { method: "POST", body: { periodKey: "2030-01", expectedTotalCents: 10_000, trigger: "console" } });
  expect(started.status).toBe(200);
  expect(started.body).toMatchObject({ created: true, run: { periodKey: "2030-01", trigger: "console", status: "processing", totals: { payouts: 2, amountCents: 10_000, processing: 2 } } });
  const runId = started.body.run.id;
  const again = await runs("", { method: "POST", body: { periodKey: "2030-01" } });
  expect(again.body).toMatchObject({ created: false, run: { id: runId } });
  expect((await runs("/preview?periodKey=2030-01")).body).toMatchObject({ existingRunId: runId, payouts: [] });

  const detail = (await runs(`/${runId}`)).body;
  const payoutOf = (p: Bootstrap) => detail.payouts.find((x: { partnerId: number }) => x.partnerId === p.partnerId);
  expect(payoutOf(partners.bank)).toMatchObject({ partnerName: "Anna", method: "bank", status: "processing", amountCents: 6000 });
  expect(detail.skipped).toHaveLength(2);

  const bankFile = await runs(`/${runId}/bank.csv`);
  expect(bankFile.status).toBe(200);
  expect(bankFile.headers.get("content-type")).toMatch(/text\/csv/);
  const bankLines = String(bankFile.body)
    .replace(/^\uFEFF/, "")
    .trim()
    .split("\r\n");
  expect(bankLines).toEqual([
    "name,country,iban,account_number,routing_number,swift,amount,currency,reference",
    `Anna Bank,DE,DE89370400440532013000,,,COBADEFFXXX,60.00,USD,payout-${payoutOf(partners.bank).id}`,
  ]);
  const paypalLines = String((await runs(`/${runId}/paypal.csv`)).body)
    .replace(/^\uFEFF/, "")
    .trim()
    .split("\r\n");
  expect(paypalLines).toEqual([
    "email,amount,currency,reference,note",
    `paul@paypal.example,40.00,USD,payout-${payoutOf(partners.paypal).id},Commission payout payout-${payoutOf(partners.paypal).id}`,
  ]);

  // The bank file was uploaded; PayPal refused its payout.
  expect((await runs(`/${runId}/mark-paid`, { method: "POST", body: { method: "bank" } })).body).toEqual({ paid: 1 });
  expect((await runs(`/${runId}/mark-paid`, { method: "POST", body: { method: "bank" } })).body).toEqual({ paid: 0 });
  const failed = await sys.http("POST", `/api/admin/programs/${boot.programId}/withdrawals/${payoutOf(partners.paypal).id}/fail`, {
    key: ADMIN_TOKEN,
    body: { reason: "PayPal: receiver account is restricted" },
  });
  expect(failed.body).toMatchObject({ status: "failed", failureCode: "marked_failed", failureReason: "PayPal: receiver account is restricted" });

  expect(await balanceOf(partners.bank.partnerId)).toMatchObject({ balanceCents: 0, paidCents: 6000 });
  expect(await balanceOf(partners.paypal.partnerId)).toMatchObject({ balanceCents: 4000, paidCents: 0 });
  const commissions = await sys.admin("GET", `/commissions?programId=${boot.programId}&partnerId=${partners.bank.partnerId}`);
  expect(commissions.data.map((c: { status: string }) => c.status)).toEqual(["paid", "paid", "paid"]);

  const exported = String((await runs(`/${runId}/payouts.csv`)).body);
  expect(exported).toMatch(/,paypal,usd,4000,failed,,marked_failed,PayPal: receiver account is restricted,/);

  // Anna sees the payout with its commissions in the portal, and downloads her statement.
  const link = await sys.admin("POST", `/partners/${partners.bank.partnerId}/sign-in-links`, {});
  const signIn = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
  const cookie = { Cookie: signIn.headers.get("set-cookie")!.split(";")[0] };
  const mine = await sys.http("GET", `/api/partner/programs/${boot.programId}/withdrawals/${payoutOf(partners.bank).id}`, { headers: cookie });
  expect(mine.body).toMatchObject({ status: "paid", method: "bank", amountCents: 6000, commissions: [{ netCents: 2000, status: "paid" }, { netCents: 2000 }, { netCents: 2000 }] });
  expect((await sys.http("GET", `/api/partner/programs/${boot.programId}/withdrawals/${payoutOf(partners.paypal).id}`, { headers: cookie })).status).toBe(404);
  const statement = await sys.http("GET", `/api/partner/programs/${boot.programId}/statement.csv`, { headers: cookie });
  const statementLines = String(statement.body)
    .replace(/^\uFEFF/, "")
    .trim()
    .split("\r\n");
  expect(statementLines).toHaveLength(4);
  expect(statementLines[1]).toMatch(new RegExp(`^${payoutOf(partners.bank).id},paid,bank,.*,usd,6000,\\d+,sale,`));

  // The failed partner is payable again in the next period.
  const next = (await runs("/preview?periodKey=2030-02")).body;
  expect(next.payouts).toEqual([expect.objectContaining({ partnerId: partners.paypal.partnerId, amountCents: 4000, commissions: 2 })]);

  const report = await sys.admin("GET", "/reconcile");
  expect(report.violations).toEqual([]);
  expect(report.checked.withdrawals).toMatchObject({ paid: 1, failed: 1 });
});

test("the schedule: monthly or weekly with the next run, and a clear 400 for an incomplete one", async () => {
  const path = `/api/admin/programs/${boot.programId}/payout-schedule`;
  const key = ADMIN_TOKEN;
  expect((await sys.http("GET", path, { key })).body).toEqual({ programId: boot.programId, kind: "manual", dayOfMonth: null, weekday: null, nextRunAt: null });
  const monthly = await sys.http("PUT", path, { key, body: { kind: "monthly", dayOfMonth: 1 } });
  expect(monthly.body).toMatchObject({ kind: "monthly", dayOfMonth: 1, nextRunAt: expect.stringMatching(/-01T00:00:00.000Z$/) });
  const incomplete = await sys.http("PUT", path, { key, body: { kind: "weekly" } });
  expect(incomplete.status).toBe(400);
  expect(incomplete.body.error.message).toMatch(/weekday.*required for a weekly schedule/);
  expect((await sys.http("GET", path, { key })).body).toMatchObject({ kind: "monthly", dayOfMonth: 1 });
});

test("the CLI previews a run, then starts it with the preview's total", async () => {
  const cli = async (...args: string[]) => {
    const run = await runCli(sys.baseUrl, ADMIN_TOKEN, "payout-run", "--program", String(boot.programId), "--period", "2030-02", ...args);
    expect(run).toMatchObject({ code: 0 });
    return JSON.parse(run.stdout);
  };
  const preview = await cli();
  expect(preview).toMatchObject({ periodKey: "2030-02", existingRunId: null, totalCents: 4000 });
  const started = await cli("--yes");
  expect(started).toMatchObject({ created: true, run: { periodKey: "2030-02", trigger: "cli", totals: { payouts: 1, amountCents: 4000 } } });
  expect(await cli("--yes")).toMatchObject({ created: false, run: { id: started.run.id } });
});
