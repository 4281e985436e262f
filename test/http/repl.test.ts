/**
 * The operator REPL's custom commands (bin/repl-commands.ts): their lookups
 * through a broker running the real services, the `reconcile` fallback when
 * the commissions service has no such action, and the real moleculer-repl
 * driven through `npm start -- --repl` (tsx bin/start.ts --repl) on stdin.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ServiceBroker } from "moleculer";
import { replCommands, replLists, replLookups, replRates, runReplCommand } from "../../bin/repl-commands";
import { ecbXml, startEcbDouble, type EcbDouble } from "../support/ecb-double";
import { waitFor } from "../support/notifications";
import { freePort, outputOf, printedJson, replCommand, startNode, stopNode, type ChildNode } from "../support/processes";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";

describe("REPL commands over a broker", () => {
  let sys: TestSystem;
  let boot: Bootstrap;
  let commissionId: number;

  beforeAll(async () => {
    sys = await startSystem();
    boot = await sys.bootstrap();
    const { body } = await attributedSale(sys, boot, { transactionId: "repl-order-1" });
    commissionId = body.commission_id;
    const refund = await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: "repl-order-1", refund_amount_cents: 3000, refund_id: "re_repl" } });
    expect(refund.body.status).toBe("refunded");
  });
  afterAll(() => sys?.stop());

  it("sale: a sale by program and transaction id", async () => {
    const sale = (await replLookups.sale(sys.broker, String(boot.programId), "repl-order-1")) as Record<string, unknown>;
    expect(sale).toMatchObject({ programId: boot.programId, transactionId: "repl-order-1", amountCents: 10000, partnerId: boot.partnerId, commissionId });
  });

  it("commission: a commission with its refunds and outbox entries", async () => {
    const c = (await replLookups.commission(sys.broker, String(commissionId))) as { id: number; status: string; refunds: unknown[]; outbox: Array<{ type: string }> };
    expect(c).toMatchObject({ id: commissionId, status: "refunded" });
    expect(c.refunds).toHaveLength(1);
    expect(c.outbox.map((e) => e.type).sort()).toEqual(["commission.created", "commission.refunded"]);
  });

  it("balance: a partner's balance and withdrawals", async () => {
    const b = await replLookups.balance(sys.broker, boot.programId, boot.partnerId);
    expect(b).toMatchObject({ programId: boot.programId, partnerId: boot.partnerId, currency: "usd", balanceCents: 0, withdrawals: [] });
    expect(await replLookups.balance(sys.broker, boot.programId, boot.partnerId, "eur")).toMatchObject({ currency: "eur", balanceCents: 0 });
  });

  it("outbox: the backlog and the relays delivering it", async () => {
    const o = await replLookups.outbox(sys.broker);
    expect(o).toEqual({ pending: expect.any(Number), relays: [sys.broker.nodeID] });
  });

  it("rates-fetch: says the job is off where EXCHANGE_RATE_FEED_URL is (as in every test system)", async () => {
    expect(await replRates.fetch(sys.broker)).toEqual({ ok: false, url: null, error: expect.stringMatching(/^EXCHANGE_RATE_FEED_URL is off on this instance/) });
  });

  it("reconcile: runs commissions.reconcile when the service has it", async () => {
    const r = await replLookups.reconcile(sys.broker);
    expect(r).toMatchObject({ available: true, report: { ok: true } });
  });

  it("prints JSON, a usage error, or the stable error code", async () => {
    const printed: string[] = [];
    const print = (l: string) => printed.push(l);
    await runReplCommand(() => replLookups.sale(sys.broker, boot.programId, "repl-order-1"), print);
    expect(JSON.parse(printed[0])).toMatchObject({ transactionId: "repl-order-1" });
    await runReplCommand(() => replLookups.sale(sys.broker, boot.programId, "no-such-order"), print);
    expect(printed[1]).toBe(">> ERROR (not_found): No sale with transaction_id 'no-such-order' in this program.");
    await runReplCommand(() => replLookups.commission(sys.broker, "seven"), print);
    expect(printed[2]).toBe(">> ERROR (usage): <commissionId> must be a positive integer, not 'seven'.");
  });

  it("declares each command in moleculer-repl's format", () => {
    const commands = replCommands().map((c) => c.command);
    expect(commands).toEqual([
      "sale <programId> <transactionId>",
      "commission <commissionId>",
      "balance <programId> <partnerId>",
      "outbox",
      "reconcile",
      "list-programs",
      "list-sales <programId>",
      "list-commissions <programId>",
      "list-withdrawals <programId>",
      "list-customers <programId>",
      "list-partners <programId>",
      "rates",
      "rates-load <file>",
      "rates-fetch",
      "currency-mismatches",
    ]);
  });

  it("list-*: one page of the operator's list, with its filters and cursor", async () => {
    await attributedSale(sys, boot, { transactionId: "repl-order-2" });
    const first = (await replLists.commissions(sys.broker, String(boot.programId), { limit: 1, partner: String(boot.partnerId) })) as { data: any[]; nextCursor: string };
    expect(first.data).toHaveLength(1);
    const second = (await replLists.commissions(sys.broker, boot.programId, { limit: 1, cursor: first.nextCursor })) as { data: any[]; nextCursor: string | null };
    expect([...first.data, ...second.data].map((c) => c.transactionId)).toEqual(["repl-order-2", "repl-order-1"]);
    expect(second.data[0].refunds).toEqual([expect.objectContaining({ refundId: "re_repl", amountCents: 3000 })]);
    expect(second.nextCursor).toBeNull();
    expect(((await replLists.commissions(sys.broker, boot.programId, { status: "refunded" })) as { data: unknown[] }).data).toHaveLength(1);
    expect(((await replLists.sales(sys.broker, boot.programId, { test: "false", limit: 5 })) as { data: unknown[] }).data).toHaveLength(2);
    expect(((await replLists.customers(sys.broker, boot.programId, { partner: boot.partnerId })) as { data: unknown[] }).data).toHaveLength(2);
    expect(((await replLists.withdrawals(sys.broker, boot.programId)) as { data: unknown[] }).data).toEqual([]);
    expect(((await replLists.programs(sys.broker, { limit: 10 })) as { data: Array<{ id: number }> }).data.map((p) => p.id)).toContain(boot.programId);
    const partners = (await replLists.partners(sys.broker, boot.programId, { status: "approved" })) as { data: Array<{ partnerId: number; totals: { sales: number } }> };
    expect(partners.data).toEqual([expect.objectContaining({ partnerId: boot.partnerId, totals: expect.objectContaining({ sales: 2 }) })]);
    const printed: string[] = [];
    await runReplCommand(
      () => replLists.commissions(sys.broker, boot.programId, { status: "lost" }),
      (l) => printed.push(l),
    );
    await runReplCommand(
      () => replLists.sales(sys.broker, boot.programId, { cursor: "nope" }),
      (l) => printed.push(l),
    );
    expect(printed).toEqual([expect.stringMatching(/^>> ERROR \(invalid_request\): Invalid 'status': /), expect.stringMatching(/^>> ERROR \(invalid_request\): Invalid 'cursor': /)]);
  });
});

describe("REPL reference-rate commands: rates, rates-load, rates-fetch", () => {
  let sys: TestSystem;
  let ecb: EcbDouble;
  let dir = "";
  const write = (name: string, content: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    return file;
  };
  const days = async (options: Record<string, unknown> = {}) =>
    ((await replRates.list(sys.broker, options)) as { data: Array<{ source: string; day: string }> }).data.map((t) => `${t.source} ${t.day}`);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "repl-rates-"));
    ecb = await startEcbDouble([{ day: "2026-11-27", rates: { usd: "1.0823", jpy: "161.45" } }]);
    sys = await startSystem({ env: { EXCHANGE_RATE_FEED_URL: ecb.url } });
    // The job's fetch at start, done before the tests serve other days.
    await waitFor(days, (d) => d.length === 1);
  });
  afterAll(async () => {
    await sys?.stop();
    await ecb?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("rates-fetch: runs the job now and says what it saved, or why nothing", async () => {
    ecb.serveDays([
      { day: "2026-11-26", rates: { usd: "1.0801" } },
      { day: "2026-11-27", rates: { usd: "1.0823", jpy: "161.45" } },
    ]);
    expect(await replRates.fetch(sys.broker)).toEqual({ ok: true, url: ecb.url, saved: 2, firstDay: "2026-11-26", lastDay: "2026-11-27" });
    ecb.serveRaw("Bad gateway", 502);
    expect(await replRates.fetch(sys.broker)).toEqual({ ok: false, url: ecb.url, error: "the feed answered HTTP 502." });
    expect(await days()).toEqual(["ecb 2026-11-27", "ecb 2026-11-26"]);
  });

  it("rates-load: the ECB's XML or JSON from the operator's disk, long files in parts, in day order", async () => {
    // 300 days of ECB XML: two calls of the action, the days in order.
    const history = Array.from({ length: 300 }, (_, i) => ({ day: new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10), rates: { usd: `1.${1000 + i}` } }));
    expect(await replRates.load(sys.broker, write("hist.xml", ecbXml(history)))).toEqual({
      file: path.join(dir, "hist.xml"),
      saved: 300,
      source: "ecb",
      base: "eur",
      firstDay: "2020-01-01",
      lastDay: "2020-10-26",
      calls: 2,
    });
    expect(await days({ from: "2020-10-25", to: "2020-12-31" })).toEqual(["ecb 2020-10-26", "ecb 2020-10-25"]);
    const json = { base: "usd", tables: [{ day: "2026-12-01", rates: { eur: "0.92" } }] };
    expect(await replRates.load(sys.broker, write("rates.json", JSON.stringify(json)))).toMatchObject({ saved: 1, source: "manual", base: "usd", firstDay: "2026-12-01", calls: 1 });
    expect(await replRates.load(sys.broker, write("body.json", JSON.stringify({ ecbXml: ecbXml([{ day: "2026-12-02", rates: { usd: "1.09" } }]) })))).toMatchObject({
      saved: 1,
      source: "ecb",
    });
    expect(await days({ source: "manual", limit: "5" })).toEqual(["manual 2026-12-01"]);
  });

  it("rates-load: refuses a file it cannot use, naming why, and saves none of it", async () => {
    const printed: string[] = [];
    const print = (l: string) => printed.push(l);
    await runReplCommand(() => replRates.load(sys.broker, path.join(dir, "missing.xml")), print);
    await runReplCommand(() => replRates.load(sys.broker, write("bad.xml", ecbXml([{ day: "2027-03-01", rates: { usd: "x" } }]))), print);
    await runReplCommand(() => replRates.load(sys.broker, write("bad.txt", "usd 1.08")), print);
    await runReplCommand(() => replRates.load(sys.broker, write("bad.json", JSON.stringify({ base: "eur", tables: [{ day: "2027-03-01", rates: { usd: "1,08" } }] }))), print);
    expect(printed).toEqual([
      expect.stringMatching(/^>> ERROR \(usage\): Cannot read '.*missing\.xml': ENOENT/),
      expect.stringMatching(/^>> ERROR \(usage\): '.*bad\.xml': The reference-rate feed's USD rate on 2027-03-01 is 'x'/),
      expect.stringMatching(/^>> ERROR \(usage\): '.*bad\.txt' is neither XML/),
      expect.stringMatching(/^>> ERROR \(invalid_request\): Invalid 'tables\.0\.rates\.usd': must be a positive decimal/),
    ]);
    expect(await days({ from: "2027-01-01" })).toEqual([]);
  });
});

describe("REPL reconcile against a commissions service without the action", () => {
  let broker: ServiceBroker;

  beforeAll(async () => {
    broker = new ServiceBroker({ logger: false, transporter: null });
    broker.createService({ name: "commissions", actions: { outboxBacklog: () => ({ pending: 3 }) } });
    await broker.start();
  });
  afterAll(() => broker?.stop());

  it("says so instead of failing", async () => {
    const r = await replLookups.reconcile(broker);
    expect(r).toEqual({ available: false, message: expect.stringMatching(/has no 'reconcile' action/) });
    expect(await replLookups.outbox(broker)).toEqual({ pending: 3, relays: [broker.nodeID] });
  });
});

describe("the real REPL: npm start -- --repl", () => {
  let node: ChildNode | undefined;
  let dataDir = "";
  let failed = false;

  afterAll(async () => {
    if (node) await stopNode(node);
    if (failed && node) console.error(outputOf([node]));
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 20_000);

  it("runs the custom commands on the embedded system, and exits cleanly at end of input", async () => {
    try {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "repl-"));
      const port = await freePort();
      node = startNode(
        "repl",
        { DATABASE_URL: "pglite://memory", PORT: String(port), HOST: "127.0.0.1", ADMIN_TOKEN, DATA_DIR: dataDir, LOG_LEVEL: "warn" },
        { args: ["--repl"], stdin: true },
      );
      await node.waitFor(/affiliate \$/, 60_000);

      // Data through the HTTP API of the same process.
      const base = `http://127.0.0.1:${port}`;
      const call = async (method: string, p: string, body?: unknown, key: string | null = ADMIN_TOKEN) => {
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (key) headers.Authorization = `Bearer ${key}`;
        const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const json = (await res.json()) as any;
        if (res.status !== 200) throw new Error(`${method} ${p} -> ${res.status} ${JSON.stringify(json)}`);
        return json;
      };
      const program = await call("POST", "/api/admin/programs", { name: "REPL", commissionRule: { type: "percentage", basisPoints: 2000 } });
      const key = (await call("POST", `/api/admin/programs/${program.id}/api-keys`)).apiKey;
      const { partner, enrollment } = await call("POST", `/api/admin/programs/${program.id}/partners`, { name: "P" });
      const click = await call("POST", "/api/v1/track/click", { program_id: program.id, referral_code: enrollment.referralCode }, null);
      await call("POST", "/api/v1/track/lead", { customer_key: "repl-c", click_id: click.click_id }, key);
      const sale = await call("POST", "/api/v1/track/sale", { transaction_id: "order-1001", amount_cents: 10000, customer_key: "repl-c" }, key);
      expect(sale.commission_status).toBe("pending");

      expect(printedJson(await replCommand(node, `sale ${program.id} order-1001`))).toMatchObject({ transactionId: "order-1001", commissionId: sale.commission_id });
      const commission = printedJson(await replCommand(node, `commission ${sale.commission_id}`));
      expect(commission).toMatchObject({ id: sale.commission_id, amountCents: 2000, refunds: [] });
      expect(commission.outbox.map((e: { type: string }) => e.type)).toEqual(["commission.created"]);
      expect(printedJson(await replCommand(node, `balance ${program.id} ${partner.id} --currency usd`))).toMatchObject({ partnerId: partner.id, currency: "usd", balanceCents: 0 });
      expect(printedJson(await replCommand(node, "outbox"))).toEqual({ pending: expect.any(Number), relays: [expect.any(String)] });
      expect(printedJson(await replCommand(node, "reconcile"))).toMatchObject({ available: true, report: { ok: true } });
      expect(printedJson(await replCommand(node, `list-commissions ${program.id} --partner ${partner.id} --limit 5`))).toEqual({
        data: [expect.objectContaining({ id: sale.commission_id, refunds: [] })],
        nextCursor: null,
      });
      expect(await replCommand(node, `sale ${program.id} nope`)).toMatch(/>> ERROR \(not_found\): No sale with transaction_id 'nope'/);
      // The built-in commands are still there.
      expect(await replCommand(node, "services")).toMatch(/commissions/);

      node.child.stdin!.end();
      const exit = await Promise.race([node.exited, new Promise((r) => setTimeout(() => r("timeout"), 15_000).unref())]);
      expect(exit).toEqual({ code: 0, signal: null });
    } catch (err) {
      failed = true;
      throw err;
    }
  }, 120_000);
});
