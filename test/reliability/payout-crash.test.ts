/**
 * A payout batch survives its process being killed (docs/payouts.md, "Stripe Connect"). The gateway, commissions
 * and the other services run as separate processes over a real nats-server and PostgreSQL; Stripe is the local
 * double. A run pays partners by Stripe transfer; the commissions process is killed with SIGKILL at the worst
 * moments: the instant Stripe has made a transfer, before its answer can reach the process (so the process never
 * learns of it), and again later in the batch. Started again, the worker takes the stalled payouts up: every
 * payout ends paid by exactly one transfer, none twice, none lost, and reconcile agrees.
 *
 * Needs nats-server and the PostgreSQL server binaries (CI installs both); skipped with a warning otherwise.
 */
import { randomBytes } from "node:crypto";
import { clusterSkipReason, NatsServer, PgCluster, sleep, startSplitSystem, until, type SplitSystem } from "./support/cluster";
import { requestJson } from "../support/processes";
import { startStripeDouble, type StripeDouble } from "../support/stripe-double";
import { expectNoViolations } from "./support/scale";

const skipReason = clusterSkipReason();
if (skipReason) console.warn(`PAYOUT CRASH TEST SKIPPED: ${skipReason}; a payout batch killed mid-way was NOT exercised in this run.`);
const describeCluster = skipReason ? describe.skip : describe;

const ADMIN_TOKEN = `payout-crash-${randomBytes(16).toString("hex")}`;
const STRIPE_KEY = `rk_test_${randomBytes(12).toString("hex")}`;
const PARTNERS = 6;
/** Kill the commissions process when Stripe has made this many transfers (before it answers the last one). */
const KILL_AT = [2, 4];

describeCluster("a payout batch killed mid-way over a real nats-server and PostgreSQL", () => {
  let nats: NatsServer;
  let pg: PgCluster;
  let stripe: StripeDouble;
  let system: SplitSystem;

  const http = (method: string, urlPath: string, opts: { body?: unknown; key?: string; cookie?: string } = {}) =>
    requestJson(system.baseUrl + urlPath, method, { timeoutMs: 15_000, body: opts.body, key: opts.key, headers: opts.cookie ? { Cookie: opts.cookie } : undefined });

  async function admin(method: string, urlPath: string, body?: unknown): Promise<any> {
    for (let attempt = 1; ; attempt++) {
      const res = await http(method, `/api/admin${urlPath}`, { body, key: ADMIN_TOKEN }).catch((err: Error) => ({ status: 599, body: err.message }));
      if (res.status < 300) return res.body;
      if (res.status < 500 || attempt >= 30) throw new Error(`${method} ${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
      await sleep(500);
    }
  }

  beforeAll(async () => {
    [pg, nats, stripe] = await Promise.all([PgCluster.create(), NatsServer.start(), startStripeDouble()]);
    stripe.keys.set(STRIPE_KEY, { canRead: true, canPay: true });
    system = await startSplitSystem({
      name: "payouts",
      pg,
      nats,
      adminToken: ADMIN_TOKEN,
      processes: { others: "accounts,programs,attribution,processor,rewards,status,notifications,sales,portal", commissions: "commissions" },
      env: {
        STRIPE_API_URL: stripe.url,
        // A pass every 300 ms; a payout claimed by a process that died is taken up again 2 s after its claim.
        PAYOUT_INTERVAL_MS: "300",
        PAYOUT_CLAIM_MS: "2000",
        APPROVAL_INTERVAL_MS: "3600000",
      },
    });
  }, 150_000);

  afterAll(async () => {
    await system?.stop();
    await Promise.all([nats?.stop(), pg?.destroy(), stripe?.close()]);
  }, 60_000);

  test("every payout is paid by exactly one transfer, whatever moment the process dies", async () => {
    try {
      const program = await admin("POST", "/programs", { name: "Payout crash", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 0 });
      await admin("PUT", `/programs/${program.id}/processor/api-key`, { restrictedKey: STRIPE_KEY });
      const key = await admin("POST", `/programs/${program.id}/api-keys`);
      for (let i = 0; i < PARTNERS; i++) {
        const { partner, enrollment } = await admin("POST", `/programs/${program.id}/partners`, { name: `Partner ${i}`, email: `p${i}-${randomBytes(3).toString("hex")}@example.com` });
        // A sale through a referral click: a commission of 2000 + 100 * i.
        const click = await http("POST", "/api/v1/track/click", { body: { program_id: program.id, referral_code: enrollment.referralCode } });
        const customer = `c-${i}-${randomBytes(3).toString("hex")}`;
        await http("POST", "/api/v1/track/lead", { key: key.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
        const sale = await http("POST", "/api/v1/track/sale", { key: key.apiKey, body: { transaction_id: `t-${i}`, amount_cents: 10_000 + 500 * i, customer_key: customer } });
        expect(sale.status).toBe(200);
        // The partner chooses Stripe and finishes onboarding in the portal.
        const link = await admin("POST", `/partners/${partner.id}/sign-in-links`, {});
        const signIn = await http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
        const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
        expect((await http("PATCH", "/api/partner/profile", { cookie, body: { payoutMethod: "stripe" } })).status).toBe(200);
        const onboarding = await http("POST", `/api/partner/programs/${program.id}/stripe-onboarding`, { cookie });
        expect(onboarding.status).toBe(200);
        const accountId = [...stripe.accounts.keys()].at(-1)!;
        stripe.completeOnboarding(accountId);
        expect((await http("GET", `/api/partner/programs/${program.id}/payout-account`, { cookie })).body).toMatchObject({ stripe: { ready: true } });
      }
      await admin("POST", "/commissions/approve-due", { programId: program.id });

      // SIGKILL the instant Stripe records the KILL_AT[k]-th transfer, before its answer leaves the double.
      const kills: Array<Promise<void>> = [];
      const record = stripe.transfers.push.bind(stripe.transfers);
      stripe.transfers.push = (...made) => {
        const count = record(...made);
        if (KILL_AT.includes(count)) kills.push(system.nodes.commissions.kill("SIGKILL").then(() => system.nodes.commissions.start()));
        return count;
      };

      const preview = await admin("GET", `/programs/${program.id}/payout-runs/preview?periodKey=crash`);
      expect(preview.payouts).toHaveLength(PARTNERS);
      const { run } = await admin("POST", `/programs/${program.id}/payout-runs`, { periodKey: "crash", expectedTotalCents: preview.totalCents });

      const done = await until(async () => (await admin("GET", `/programs/${program.id}/payout-runs/${run.id}`)).status === "completed", 90_000, 500);
      await Promise.all(kills);
      const detail = await admin("GET", `/programs/${program.id}/payout-runs/${run.id}`);
      expect({ done, kills: kills.length }).toEqual({ done: true, kills: KILL_AT.length });
      expect(detail.totals).toMatchObject({ payouts: PARTNERS, paid: PARTNERS, paidCents: preview.totalCents, failed: 0 });
      for (const payout of detail.payouts) {
        expect({ payout: payout.id, transfers: stripe.transfersCreatedIn(`payout-${payout.id}`) }).toEqual({ payout: payout.id, transfers: 1 });
        expect(payout.transferId).toBe(stripe.transfers.find((t) => t.transfer_group === `payout-${payout.id}`)!.id);
      }
      expect(stripe.transfers).toHaveLength(PARTNERS);
      // Starting the period again pays nobody twice.
      expect(await admin("POST", `/programs/${program.id}/payout-runs`, { periodKey: "crash" })).toMatchObject({ created: false });
      expectNoViolations(await admin("GET", "/reconcile"), "after the killed payout batch");
    } catch (err) {
      console.error(`Payout crash processes:\n${system.logs()}`);
      throw err;
    }
  }, 240_000);
});
