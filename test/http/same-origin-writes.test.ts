/**
 * Browser writes are same-origin only (docs/security.md, "Same-origin
 * writes"): a state-changing request authenticated by a session cookie whose
 * Origin (or, without one, Referer) is not this service's own answers 403
 * cross_origin_write and changes nothing; reads, our own pages and clients
 * that send neither header are unaffected. And sign-in spraying from one
 * client across many emails is throttled.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";

let sys: TestSystem;
let boot: Bootstrap;
let cookie: string;
let pendingPartner: number;

const approve = (headers: Record<string, string>) => sys.http("POST", `/api/programs/${boot.programId}/partners/${pendingPartner}/approve`, { headers: { Cookie: cookie, ...headers } });
const statusOf = async () => (await sys.admin("GET", `/programs/${boot.programId}/partners?status=pending`)).data.map((r: { partnerId: number }) => r.partnerId);

beforeAll(async () => {
  sys = await startSystem();
  const owner = await sys.dashboardUser("owner");
  cookie = await sys.login(owner.email, owner.password);
  boot = await sys.bootstrap({ workspaceId: owner.workspaceId });
  pendingPartner = (await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Pending", status: "pending" })).partner.id;
});
afterAll(() => sys.stop());

test("a write with the session cookie from another site's page is refused and changes nothing", async () => {
  const foreign: Array<Record<string, string>> = [
    { Origin: "https://evil.example" },
    { Referer: "https://evil.example/page" },
    { Origin: "null" },
    { Origin: sys.baseUrl.replace("127.0.0.1", "localhost") },
  ];
  for (const headers of foreign) {
    const res = await approve(headers);
    expect({ headers, status: res.status, code: res.body.error?.code }).toEqual({ headers, status: 403, code: "cross_origin_write" });
    expect(res.body.error.message).toContain("not from this service's pages");
  }
  expect(await statusOf()).toEqual([pendingPartner]);
});

test("reads from anywhere, and writes from our own origin or from no page at all, go through", async () => {
  expect((await sys.http("GET", `/api/programs/${boot.programId}/partners`, { headers: { Cookie: cookie, Origin: "https://evil.example" } })).status).toBe(200);
  expect((await approve({ Origin: sys.baseUrl })).status).toBe(200);
  expect(await statusOf()).toEqual([]);
  const again = await sys.http("POST", `/api/programs/${boot.programId}/partners/${pendingPartner}/decline`, { headers: { Cookie: cookie, Referer: `${sys.baseUrl}/dashboard` } });
  expect(again.status).toBe(200);
  expect((await sys.http("POST", `/api/programs/${boot.programId}/partners/${pendingPartner}/approve`, { headers: { Cookie: cookie } })).status).toBe(200);
});

test("sign-in, sign-out and the partner portal's writes are same-origin too", async () => {
  const evil = { Origin: "https://evil.example" };
  const login = await sys.http("POST", "/api/auth/login", { headers: evil, body: { email: "someone@example.com", password: "whatever it is" } });
  expect([login.status, login.body.error.code]).toEqual([403, "cross_origin_write"]);
  expect((await sys.http("POST", "/api/auth/logout", { headers: { ...evil, Cookie: cookie } })).status).toBe(403);
  // Still signed in.
  expect((await sys.http("GET", `/api/programs/${boot.programId}/partners`, { headers: { Cookie: cookie } })).status).toBe(200);
  const link = await sys.http("POST", "/api/partner/auth/sign-in", { headers: evil, body: { token: "x".repeat(43) } });
  expect([link.status, link.body.error.code]).toEqual([403, "cross_origin_write"]);
});

test("one client trying many emails is throttled after 10 failures", async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await sys.http("POST", "/api/auth/login", { body: { email: `spray-${i}@example.com`, password: "Winter2026!" } })).status);
  expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
});
