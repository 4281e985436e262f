/** EXCHANGE_RATE_* (services/sales/exchange-rate.ts): read once at the sales service's start, a bad value stopping it with a message naming the variable. */
import { readExchangeRateSettings } from "../../services/sales/exchange-rate";

test("defaults: the ECB's 90-day feed, every 6 hours, tables up to 4 days old, 10 s per fetch", () => {
  expect(readExchangeRateSettings({})).toEqual({
    feedUrl: "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml",
    refreshMinutes: 360,
    maxAgeDays: 4,
    fetchTimeoutMs: 10_000,
  });
  expect(readExchangeRateSettings({ EXCHANGE_RATE_FEED_URL: "", EXCHANGE_RATE_MAX_AGE_DAYS: " ", EXCHANGE_RATE_REFRESH_MINUTES: "" }).maxAgeDays).toBe(4);
});

test("values: a feed URL or off, whole minutes from 1, whole days from 0", () => {
  expect(readExchangeRateSettings({ EXCHANGE_RATE_FEED_URL: "off" }).feedUrl).toBeNull();
  expect(readExchangeRateSettings({ EXCHANGE_RATE_FEED_URL: "OFF" }).feedUrl).toBeNull();
  expect(readExchangeRateSettings({ EXCHANGE_RATE_FEED_URL: "http://mirror.internal:8080/eurofxref-daily.xml" }).feedUrl).toBe("http://mirror.internal:8080/eurofxref-daily.xml");
  expect(readExchangeRateSettings({ EXCHANGE_RATE_MAX_AGE_DAYS: "0", EXCHANGE_RATE_REFRESH_MINUTES: "1" })).toMatchObject({ maxAgeDays: 0, refreshMinutes: 1 });
  expect(readExchangeRateSettings({ EXCHANGE_RATE_MAX_AGE_DAYS: "7" }).maxAgeDays).toBe(7);
});

test("a bad value throws, naming the variable, what it takes and the default", () => {
  for (const bad of ["-1", "4.5", "four", "1e1", "367"]) {
    expect(() => readExchangeRateSettings({ EXCHANGE_RATE_MAX_AGE_DAYS: bad })).toThrow(
      `EXCHANGE_RATE_MAX_AGE_DAYS must be a whole number from 0 to 366 (got '${bad}'): how many days older than a sale's day its reference-rate table may be (default 4).`,
    );
  }
  expect(() => readExchangeRateSettings({ EXCHANGE_RATE_REFRESH_MINUTES: "0" })).toThrow(/^EXCHANGE_RATE_REFRESH_MINUTES must be a whole number from 1 to 525600 \(got '0'\)/);
  for (const bad of ["ftp://example.com/feed.xml", "www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml", "no"]) {
    expect(() => readExchangeRateSettings({ EXCHANGE_RATE_FEED_URL: bad })).toThrow(/^EXCHANGE_RATE_FEED_URL must be an http\(s\) URL of a feed in the ECB's eurofxref format, or off/);
  }
});
