/**
 * The gateway remembers authenticated API keys for API_KEY_CACHE_TTL_MS
 * (docs/performance.md); a retired key must still be refused at once.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;

beforeAll(async () => {
  // A long TTL: only the retirement event can make the gateway forget the key in this test.
  sys = await startSystem({ env: { API_KEY_CACHE_TTL_MS: "600000" } });
  boot = await sys.bootstrap();
});
afterAll(() => sys.stop());

test("a key in use (so cached by the gateway) is refused right after it is retired", async () => {
  const key = await sys.admin("POST", `/programs/${boot.programId}/api-keys`);
  const { transactionId } = await attributedSale(sys, boot, { key: key.apiKey });
  expect((await refund(sys, key.apiKey, { transaction_id: transactionId, refund_amount_cents: 100, refund_id: "c-1" })).status).toBe(200);

  await sys.admin("POST", `/api-keys/${key.id}/retire`);
  const res = await refund(sys, key.apiKey, { transaction_id: transactionId, refund_amount_cents: 100, refund_id: "c-2" });
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: { type: "authentication_error", code: "api_key_retired", message: expect.any(String) } });
});

test("retiring one key leaves the program's other keys working", async () => {
  const other = await sys.admin("POST", `/programs/${boot.programId}/api-keys`);
  const { transactionId } = await attributedSale(sys, boot);
  await sys.admin("POST", `/api-keys/${other.id}/retire`);
  expect((await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 100, refund_id: "c-3" })).status).toBe(200);
});

test("a wrong secret with a cached key's prefix is still refused", async () => {
  const { transactionId } = await attributedSale(sys, boot);
  const forged = boot.apiKey.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
  const res = await refund(sys, forged, { transaction_id: transactionId, refund_amount_cents: 100 });
  expect(res.status).toBe(401);
});
