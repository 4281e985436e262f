/**
 * Reference exchange rates (docs/currencies.md) through the real system: the sales service's job fetches a local double of
 * the ECB's feed (real eurofxref XML on 127.0.0.1) and stores its tables; the admin routes list them, answer the rate
 * of a sale's day (a weekend uses Friday's table, a holiday the day before, a day too long after the last table is
 * 503 exchange_rate_unavailable with Retry-After) and load tables by hand (all or nothing, a bad body named). A feed
 * the job cannot use leaves the stored tables as they were. One system for the file.
 */
import { startExchangeRateJob } from "../../services/sales/exchange-rate-job";
import type { RateTableStore } from "../../services/sales/rate-tables";
import { crossRate } from "../../shared/domain/exchange-rates";
import { ecbXml, startEcbDouble, type EcbDay, type EcbDouble } from "../support/ecb-double";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";

// Tuesday the 24th, Thursday the 26th and Friday the 27th of November 2026: Wednesday the 25th a holiday.
const FEED: EcbDay[] = [
  { day: "2026-11-24", rates: { usd: "1.0779", jpy: "160.5", gbp: "0.856", chf: "0.9352" } },
  { day: "2026-11-26", rates: { usd: "1.0801", jpy: "160.98", gbp: "0.8551", chf: "0.9365" } },
  { day: "2026-11-27", rates: { usd: "1.0823", jpy: "161.45", gbp: "0.8544", chf: "0.9371" } },
];
const perEuro = (day: string) => FEED.find((d) => d.day === day)!.rates;

let ecb: EcbDouble;
let sys: TestSystem;

const admin = (method: string, path: string, body?: unknown) => sys.http(method, `/api/admin${path}`, { key: ADMIN_TOKEN, body });
const rateOf = (from: string, to: string, day: string) => admin("GET", `/exchange-rates/rate?from=${from}&to=${to}&day=${day}`);
const daysStored = async (query = "") => ((await admin("GET", `/exchange-rates${query}`)).body.data as Array<{ source: string; day: string }>).map((t) => `${t.source} ${t.day}`);

beforeAll(async () => {
  ecb = await startEcbDouble(FEED);
  sys = await startSystem({ env: { EXCHANGE_RATE_FEED_URL: ecb.url } });
  // The job fetches at start, without holding the start up.
  await waitFor(
    () => daysStored(),
    (days) => days.length === 3,
  );
});
afterAll(async () => {
  await sys?.stop();
  await ecb?.close();
});

describe("the feed's tables", () => {
  it("are fetched and stored at start: the admin list shows them newest first, as published", async () => {
    expect(ecb.requests).toBeGreaterThanOrEqual(1);
    const res = await admin("GET", "/exchange-rates?source=ecb&limit=10");
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([...FEED].reverse().map((d) => ({ source: "ecb", day: d.day, base: "eur", rates: d.rates, loadedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) })));
    expect(await daysStored("?from=2026-11-25&to=2026-11-26")).toEqual(["ecb 2026-11-26"]);
    expect(await daysStored("?limit=1")).toEqual(["ecb 2026-11-27"]);
    expect((await admin("GET", "/exchange-rates?from=2026-11-27&to=2026-11-26")).body.error.message).toMatch(/^Invalid 'to': /);
  });

  it("give a sale of a Saturday or Sunday Friday's rate, crossed through the euro", async () => {
    const gbpUsd = crossRate(perEuro("2026-11-27"), "eur", "gbp", "usd");
    for (const day of ["2026-11-27", "2026-11-28", "2026-11-29"]) {
      const res = await rateOf("gbp", "usd", day);
      expect({ day, status: res.status, body: res.body }).toEqual({ day, status: 200, body: { rate: gbpUsd, source: "ecb", rateDay: "2026-11-27" } });
    }
    expect(gbpUsd).toBe("1.266736891386");
    // From and to the base itself, over the bus as the REPL calls it.
    expect(await sys.broker.call("sales.exchangeRate", { from: "EUR", to: "jpy", day: "2026-11-28" })).toEqual({ rate: "161.45", source: "ecb", rateDay: "2026-11-27" });
    expect((await rateOf("usd", "eur", "2026-11-29")).body).toEqual({ rate: "0.923958237088", source: "ecb", rateDay: "2026-11-27" });
  });

  it("give a sale of a holiday (no table that day) the day before's", async () => {
    expect((await rateOf("eur", "usd", "2026-11-25")).body).toEqual({ rate: "1.0779", source: "ecb", rateDay: "2026-11-24" });
    expect((await rateOf("chf", "jpy", "2026-11-26")).body).toEqual({ rate: crossRate(perEuro("2026-11-26"), "eur", "chf", "jpy"), source: "ecb", rateDay: "2026-11-26" });
  });

  it("answer 503 exchange_rate_unavailable with Retry-After for a day more than EXCHANGE_RATE_MAX_AGE_DAYS after the last table, or before the first", async () => {
    expect((await rateOf("eur", "usd", "2026-12-01")).body.rateDay).toBe("2026-11-27"); // four days: still Friday's
    const late = await rateOf("eur", "usd", "2026-12-02");
    expect(late.status).toBe(503);
    expect(late.headers.get("retry-after")).toBe("3600");
    expect(late.body).toEqual({
      success: false,
      error: {
        code: "exchange_rate_unavailable",
        message:
          "No exchange rate from EUR to USD for 2026-12-02: no reference rates were published on that day or in the 4 days before it. Retry in 60 minutes, when newer rates may be in, or ask the operator to load rates for 2026-12-02.",
      },
    });
    expect((await rateOf("eur", "usd", "2026-11-23")).status).toBe(503);
    // A currency the tables do not quote is no rate either.
    expect((await rateOf("eur", "brl", "2026-11-27")).body.error.code).toBe("exchange_rate_unavailable");
    await expect(sys.broker.call("sales.exchangeRate", { from: "eur", to: "usd", day: "2026-12-02" })).rejects.toMatchObject({
      type: "exchange_rate_unavailable",
      data: { from: "eur", to: "usd", day: "2026-12-02", maxAgeDays: 4, retryAfterSeconds: 3600 },
    });
  });

  it("refuse a bad lookup naming the field", async () => {
    expect((await rateOf("usd", "usd", "2026-11-27")).body.error.message).toBe("Invalid 'to': must be another currency than 'from'");
    expect((await rateOf("usd", "xyz", "2026-11-27")).body.error.message).toBe("Invalid 'to': is not an ISO 4217 currency code");
    const bad = await rateOf("eur", "usd", "2026-02-30");
    expect([bad.status, bad.body.error.message]).toEqual([400, "Invalid 'day': must be a day of the calendar written YYYY-MM-DD"]);
    expect((await admin("GET", "/exchange-rates/rate?from=eur&to=usd")).body.error.message).toMatch(/^Invalid 'day': /);
  });
});

describe("a feed the job cannot use", () => {
  const stored = async () => (await admin("GET", "/exchange-rates?limit=50")).body.data;
  const refresh = () => sys.broker.call("sales.refreshExchangeRates", {}) as Promise<{ ok: boolean; error?: string; saved?: number }>;

  it("leaves the stored tables as they were: broken XML, a bad rate on one day, a maintenance page, an error status", async () => {
    const before = await stored();
    const monday = { day: "2026-11-30", rates: { usd: "1.0811", jpy: "161.1" } };

    ecb.serveRaw(ecbXml([...FEED, monday]).replace("</gesmes:Envelope>", ""));
    expect(await refresh()).toEqual({ ok: false, url: ecb.url, error: expect.stringMatching(/^The reference-rate feed is not well-formed XML/) });

    ecb.serveDays([...FEED.slice(0, 2), { day: "2026-11-27", rates: { ...perEuro("2026-11-27"), usd: "-1.0823" } }, monday]);
    expect(await refresh()).toEqual({ ok: false, url: ecb.url, error: "The reference-rate feed's USD rate on 2026-11-27 is '-1.0823': not a positive decimal." });

    ecb.serveRaw("<html><body>Maintenance</body></html>");
    expect((await refresh()).error).toMatch(/not the ECB's eurofxref format/);

    ecb.serveRaw("Service Unavailable", 503);
    expect((await refresh()).error).toBe("the feed answered HTTP 503.");

    expect(await stored()).toEqual(before);
    expect((await rateOf("eur", "usd", "2026-12-02")).status).toBe(503);
  });

  it("is fetched again once it is good: its new days are stored, the others replaced", async () => {
    ecb.serveDays([...FEED, { day: "2026-11-30", rates: { usd: "1.0811", jpy: "161.1" } }]);
    expect(await refresh()).toEqual({ ok: true, url: ecb.url, saved: 4, firstDay: "2026-11-24", lastDay: "2026-11-30" });
    expect((await rateOf("eur", "usd", "2026-12-02")).body).toEqual({ rate: "1.0811", source: "ecb", rateDay: "2026-11-30" });
    expect(await daysStored("?source=ecb")).toEqual(["ecb 2026-11-30", "ecb 2026-11-27", "ecb 2026-11-26", "ecb 2026-11-24"]);
  });
});

describe("PUT /api/admin/exchange-rates", () => {
  it("loads an operator's tables against any base, answering the count; a table the same day as the ECB's is preferred", async () => {
    const res = await admin("PUT", "/exchange-rates", { base: "USD", tables: [{ day: "2026-12-10", rates: { EUR: "0.92", gbp: "0.79" } }] });
    expect([res.status, res.body]).toEqual([200, { saved: 1, source: "manual", base: "usd", firstDay: "2026-12-10", lastDay: "2026-12-10" }]);
    expect((await admin("GET", "/exchange-rates?source=manual")).body.data).toEqual([
      { source: "manual", day: "2026-12-10", base: "usd", rates: { eur: "0.92", gbp: "0.79" }, loadedAt: expect.any(String) },
    ]);
    expect((await rateOf("eur", "gbp", "2026-12-12")).body).toEqual({ rate: "0.858695652174", source: "manual", rateDay: "2026-12-10" });
    expect((await rateOf("usd", "eur", "2026-12-10")).body).toEqual({ rate: "0.92", source: "manual", rateDay: "2026-12-10" });

    // A manual table of Friday the 27th wins over the ECB's of that day; a newer ECB table wins over an older manual one.
    await admin("PUT", "/exchange-rates", { base: "eur", tables: [{ day: "2026-11-27", rates: { usd: "1.1" } }] });
    expect((await rateOf("eur", "usd", "2026-11-29")).body).toEqual({ rate: "1.1", source: "manual", rateDay: "2026-11-27" });
    expect((await rateOf("eur", "usd", "2026-11-30")).body).toEqual({ rate: "1.0811", source: "ecb", rateDay: "2026-11-30" });
    // The manual table has no yen: the ECB's of the same day answers.
    expect((await rateOf("eur", "jpy", "2026-11-29")).body).toEqual({ rate: "161.45", source: "ecb", rateDay: "2026-11-27" });
  });

  it("loads the ECB's XML as published (source ecb by default)", async () => {
    const xml = ecbXml([{ day: "2026-12-14", rates: { usd: "1.07", jpy: "159.9" } }]);
    const res = await admin("PUT", "/exchange-rates", { ecbXml: xml });
    expect(res.body).toEqual({ saved: 1, source: "ecb", base: "eur", firstDay: "2026-12-14", lastDay: "2026-12-14" });
    expect((await rateOf("jpy", "usd", "2026-12-15")).body).toEqual({ rate: crossRate({ usd: "1.07", jpy: "159.9" }, "eur", "jpy", "usd"), source: "ecb", rateDay: "2026-12-14" });
  });

  it("refuses a bad body with 400 naming the field, and saves none of it", async () => {
    const good = { day: "2027-01-04", rates: { usd: "1.05" } };
    const refused: Array<[unknown, string]> = [
      [{ base: "eur", tables: [good, { day: "2027-01-05", rates: { usd: "1,05" } }] }, "Invalid 'tables.1.rates.usd': must be a positive decimal such as 1.0823"],
      [{ base: "eur", tables: [good, { day: "2027-01-05", rates: { usd: "0" } }] }, "Invalid 'tables.1.rates.usd': must be a positive decimal"],
      [{ base: "eur", tables: [good, { day: "2027-01-05", rates: { xyz: "1.2" } }] }, "Invalid 'tables.1.rates.xyz': is not an ISO 4217 currency code"],
      [{ base: "eur", tables: [good, { day: "2027-01-05", rates: {} }] }, "Invalid 'tables.1.rates': must quote at least one currency"],
      [{ base: "eur", tables: [good, { day: "2027-01-32", rates: { usd: "1" } }] }, "Invalid 'tables.1.day': must be a day of the calendar"],
      [{ base: "eur", tables: [good, { ...good }] }, "Invalid 'tables.1.day': gives 2027-01-04 a second time"],
      [{ base: "eur", tables: [{ day: "2027-01-04", rates: { usd: "1.05", EUR: "1" } }] }, "Invalid 'tables.0.rates.eur': is the base"],
      [{ tables: [good] }, "Invalid 'base': is required with tables"],
      [{ base: "eur" }, "Invalid 'tables': send either tables (with base) or ecbXml"],
      [{ base: "eur", tables: [good], ecbXml: ecbXml(FEED) }, "Invalid 'ecbXml': send either tables (with base) or ecbXml"],
      [{ base: "eur", tables: [good], source: "bank" }, "Invalid 'source': must be ecb or manual"],
      [{ base: "eur", tables: [good], note: "x" }, "Invalid 'note': is not a field of this request"],
      [{ ecbXml: ecbXml([good]).replace("rate='1.05'", "rate='1.05.1'") }, "Invalid 'ecbXml': The reference-rate feed's USD rate on 2027-01-04 is '1.05.1'"],
      [{ ecbXml: "<html>Maintenance</html>" }, "Invalid 'ecbXml': The reference-rate feed has no <Cube> of days"],
    ];
    for (const [body, message] of refused) {
      const res = await admin("PUT", "/exchange-rates", body);
      expect({ body, status: res.status, code: res.body.error?.code, message: res.body.error?.message?.slice(0, message.length) }).toEqual({
        body,
        status: 400,
        code: "invalid_request",
        message,
      });
    }
    expect(await daysStored("?from=2027-01-01")).toEqual([]);
  });
});

describe("the job on its own", () => {
  const noStore: RateTableStore = {
    saveTables: async () => {
      throw new Error("nothing to save");
    },
    findTable: async () => null,
    listTables: async () => [],
  };

  it("gives up a fetch that gets no answer within the timeout, with one warning, and stops at once", async () => {
    const hung = await startEcbDouble();
    hung.hang();
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (message: unknown) => void warnings.push(String(message)) };
    const job = startExchangeRateJob({ logger }, noStore, { feedUrl: hung.url, refreshMinutes: 60, maxAgeDays: 4, fetchTimeoutMs: 300 });
    try {
      expect(await job.runOnce()).toEqual({ ok: false, url: hung.url, error: "no complete answer within 0.3 s." });
      expect(warnings).toEqual([`Reference exchange rates not refreshed from ${hung.url}: no complete answer within 0.3 s. The stored tables are kept; next attempt in 60 minutes.`]);
    } finally {
      const stopped = Date.now();
      await job.stop();
      expect(Date.now() - stopped).toBeLessThan(1000);
      await hung.close();
    }
  });

  it("says it is off, and fetches nothing, with EXCHANGE_RATE_FEED_URL=off", async () => {
    const infos: string[] = [];
    const job = startExchangeRateJob({ logger: { info: (m: unknown) => void infos.push(String(m)), warn: () => undefined } }, noStore, {
      feedUrl: null,
      refreshMinutes: 360,
      maxAgeDays: 4,
      fetchTimeoutMs: 10_000,
    });
    expect(await job.runOnce()).toEqual({ ok: false, url: null, error: expect.stringMatching(/^EXCHANGE_RATE_FEED_URL is off on this instance/) });
    expect(infos).toEqual([expect.stringMatching(/^Reference exchange rates: EXCHANGE_RATE_FEED_URL is off/)]);
    await job.stop();
  });
});
