/**
 * The gateway's click forwarding (services/gateway/click-forwarder.ts): the
 * clicks of a few milliseconds cross the bus in one attribution.trackClicks
 * call, and each request still gets the answer (or the error) it would have
 * got alone. Forced on in one process here (CLICK_FORWARDING=on, with a
 * wide time window instead of one call in flight, so concurrent requests
 * share a batch); across processes over NATS
 * it is on by default (test/e2e/click-batching.test.ts).
 */
import type { Context, Middleware } from "moleculer";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";

let sys: TestSystem;
let shop: Bootstrap;
let other: Bootstrap;
/** The clicks of each attribution.trackClicks call, and how many single trackClick calls were made. */
const batches: number[] = [];
let singleCalls = 0;

const countClickCalls: Middleware = {
  localAction(handler, action) {
    const next = handler as (ctx: Context) => Promise<unknown>;
    if (action.name === "attribution.trackClicks") {
      return (ctx: Context) => {
        batches.push((ctx.params as { clicks: unknown[] }).clicks.length);
        return next(ctx);
      };
    }
    if (action.name === "attribution.trackClick") {
      return (ctx: Context) => {
        singleCalls++;
        return next(ctx);
      };
    }
    return handler;
  },
};

beforeAll(async () => {
  sys = await startSystem({
    env: { CLICK_FORWARDING: "on", CLICK_FORWARD_IN_FLIGHT: "0", CLICK_FORWARD_WAIT_MS: "300", STATUS_CACHE_TTL_MS: "600000" },
    broker: { middlewares: [countClickCalls] },
  });
  shop = await sys.bootstrap({ allowedOrigins: ["https://shop.example"] });
  other = await sys.bootstrap({ name: "Other program" });
});
afterAll(async () => {
  await sys?.stop();
});

async function storedUserAgent(clickId: string): Promise<string | null | undefined> {
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    if (db.kind !== "sql") throw new Error("reads clicks with SQL");
    return (await db.sql.query<{ user_agent: string | null }>("SELECT user_agent FROM clicks WHERE click_id = $1", [clickId]))[0]?.user_agent;
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
}

test("clicks sent together cross the bus in one call, and each request gets its own answer", async () => {
  const click = (body: Record<string, unknown>, headers: Record<string, string> = {}, key?: string) =>
    sys.http("POST", "/api/v1/track/click", { body: { program_id: shop.programId, referral_code: shop.referralCode, ...body }, headers, key });
  const fromShop = { Origin: "https://shop.example" };
  batches.length = 0;
  singleCalls = 0;

  const [good, testClick, unknownCode, unknownField, otherKey, wrongOrigin] = await Promise.all([
    click({}, { ...fromShop, "User-Agent": "agent-of-the-good-click" }),
    click({ test: true }, { ...fromShop, "User-Agent": "agent-of-the-test-click" }),
    click({ referral_code: "nobody-has-this-code" }, fromShop),
    click({ colour: "blue" }, fromShop),
    // A key of another program naming this one.
    click({}, {}, other.apiKey),
    click({}, { Origin: "https://evil.example" }),
  ]);

  expect(batches).toEqual([6]);
  expect(singleCalls).toBe(0);

  expect(good.status).toBe(200);
  expect(good.body).toMatchObject({ success: true, test: false, click_id: expect.stringMatching(/^clk_/), id: expect.any(Number) });
  expect(testClick.status).toBe(200);
  expect(testClick.body).toMatchObject({ success: true, test: true });
  expect(good.body.click_id).not.toBe(testClick.body.click_id);
  // Each stored with its own request's User-Agent.
  expect(await storedUserAgent(good.body.click_id)).toBe("agent-of-the-good-click");
  expect(await storedUserAgent(testClick.body.click_id)).toBe("agent-of-the-test-click");

  expect(unknownCode.status).toBe(404);
  expect(unknownCode.body).toEqual({
    success: false,
    error: { code: "not_found", message: "No approved partner with referral code 'nobody-has-this-code' in program " + shop.programId + "." },
  });
  expect(unknownField.status).toBe(400);
  expect(unknownField.body.error.code).toBe("invalid_request");
  expect(unknownField.body.error.message).toContain("colour");
  expect(otherKey.status).toBe(400);
  expect(otherKey.body.error.message).toBe("Invalid 'program_id': it does not match the program of the API key.");
  expect(wrongOrigin.status).toBe(403);
  expect(wrongOrigin.body.error).toEqual({
    code: "forbidden",
    message: `Origin 'https://evil.example' is not allowed for program ${shop.programId}. Add it to the program's allowed origins.`,
  });
});

test("a forwarded test click shows on the integration status before it is answered", async () => {
  const owner = await sys.dashboardUser("owner");
  const cookie = await sys.login(owner.email, owner.password);
  const p = await sys.bootstrap({ workspaceId: owner.workspaceId });
  const pageview = async () => (await sys.http("GET", `/api/tracking/status/${p.programId}`, { headers: { Cookie: cookie } })).body.data.statistics.pageview;
  // Primes the status cache (its TTL is 10 minutes here): only the confirmed broadcast can change the next answer.
  expect(await pageview()).toMatchObject({ testEventCount: 0 });
  const clicked = await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: p.referralCode, test: true } });
  expect(clicked.status).toBe(200);
  expect(await pageview()).toMatchObject({ testEventCount: 1, hasTestEvents: true });
});
