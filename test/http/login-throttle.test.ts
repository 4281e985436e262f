/**
 * The sign-in throttle through HTTP (docs/security.md, "Sign-in throttle"),
 * with the clients on several loopback addresses: parallel guesses count each
 * other, each 429 names what was limited, and an attacker's failures keep
 * the owner out of their account for seconds at most, never for the window.
 */
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { requestFrom } from "../support/from-address";
import { startSystem, type TestSystem } from "../support/system";

let sys: TestSystem;

beforeAll(async () => {
  sys = await startSystem();
});
afterAll(async () => {
  await sys?.stop();
});

const login = (from: string, email: string, password: string, headers?: Record<string, string>) =>
  requestFrom(sys.baseUrl, from, "POST", "/api/auth/login", { body: { email, password }, headers });

const rateLimited = (message: RegExp) => ({ error: { type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.stringMatching(message) } });

async function failuresRecorded(key: string): Promise<number> {
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    if (db.kind !== "sql") throw new Error("reads login_failures with SQL");
    const [row] = await db.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM login_failures WHERE key = $1", [key]);
    return row.n;
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
}

test("100 parallel guesses from one address: at most 5 have their password checked; the owner still signs in from elsewhere", async () => {
  const owner = await sys.dashboardUser("viewer");
  const attacker = "127.0.0.11";
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => login(attacker, owner.email, `wrong guess number ${i}`)));
  const checked = results.filter((r) => r.status === 401).length;
  const refused = results.filter((r) => r.status === 429);
  expect(checked).toBeLessThanOrEqual(5);
  expect(checked + refused.length).toBe(100);
  for (const r of refused) {
    expect(r.body).toEqual(rateLimited(/^Too many failed sign-ins for this email from this client address\. Retry after \d+ s\.$/));
    expect(Number(r.headers["retry-after"])).toBeGreaterThan(0);
  }
  // Fewer than 5 may have been checked (parallel attempts count each other): the rest of the allowance, one by one.
  for (let i = checked; i < 5; i++) expect((await login(attacker, owner.email, `wrong guess ${i}`)).status).toBe(401);
  // Only checked attempts are failures: the refused ones left nothing that would lengthen the wait.
  expect(await failuresRecorded(`email:${owner.email}|address:${attacker}`)).toBe(5);

  // From the attacker's address even the right password is refused (the answer tells nothing about a guess)...
  expect((await login(attacker, owner.email, owner.password)).status).toBe(429);
  // ...and a forged X-Forwarded-For does not make it another address (TRUST_PROXY is off).
  expect((await login(attacker, owner.email, owner.password, { "X-Forwarded-For": "203.0.113.9" })).status).toBe(429);
  // The owner, from their own address, signs in at once.
  const own = await login("127.0.0.12", owner.email, owner.password);
  expect(own.status).toBe(200);
  expect(own.headers["set-cookie"]?.[0]).toMatch(/^svc_session=/);
});

test("one address guessing across many emails is slowed down; other addresses are not", async () => {
  const user = await sys.dashboardUser("viewer");
  const sprayer = "127.0.0.21";
  for (let i = 0; i < 10; i++) expect((await login(sprayer, `nobody-${i}-${process.pid}@example.com`, "Winter2026!")).status).toBe(401);
  const refused = await login(sprayer, user.email, user.password);
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual(rateLimited(/^Too many failed sign-ins from this client address\. Retry after \d+ s\.$/));
  expect((await login("127.0.0.22", user.email, user.password)).status).toBe(200);
});

test("guesses spread over many addresses hold the owner back for seconds, then the right password works", async () => {
  const owner = await sys.dashboardUser("viewer");
  for (let i = 1; i <= 10; i++) expect((await login(`127.0.1.${i}`, owner.email, `distributed guess ${i}`)).status).toBe(401);
  const held = await login("127.0.1.50", owner.email, owner.password);
  expect(held.status).toBe(429);
  expect(held.body).toEqual(rateLimited(/^Too many failed sign-ins for this email\. Retry after \d+ s\.$/));
  const wait = Number(held.headers["retry-after"]);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(5);
  // The refused attempt was not a failure: after the announced wait, the owner is in.
  await new Promise((r) => setTimeout(r, wait * 1000 + 200));
  expect((await login("127.0.1.50", owner.email, owner.password)).status).toBe(200);
}, 30_000);

test("a successful sign-in clears its own address's failures for that email", async () => {
  const owner = await sys.dashboardUser("viewer");
  const from = "127.0.0.31";
  for (let i = 0; i < 4; i++) expect((await login(from, owner.email, `typo ${i}`)).status).toBe(401);
  expect((await login(from, owner.email, owner.password)).status).toBe(200);
  expect(await failuresRecorded(`email:${owner.email}|address:${from}`)).toBe(0);
  // So four more typos later are still within the allowance.
  for (let i = 0; i < 4; i++) expect((await login(from, owner.email, `typo again ${i}`)).status).toBe(401);
  expect((await login(from, owner.email, owner.password)).status).toBe(200);
});
