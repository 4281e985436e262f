/**
 * Paddle's notification signature (shared/paddle-signature.ts) against the vectors Paddle publishes in its Node SDK
 * (PaddleHQ/paddle-node-sdk, src/__tests__/notifications/webhooks-validator.node.test.ts, commit 06639b55, Apache-2.0),
 * each body, header and secret as published, at the SDK tests' clock (2023-11-01T00:00:00Z = 1698796800); then what
 * this verifier does differently on purpose: a window both ways instead of the SDK's 5 s, several `h1` in any order.
 */
import { signPaddleNotification, verifyPaddleSignature } from "../../shared/paddle-signature";

const NOW = 1698796800;
const H1 = "a300428748dce5c70e4da19bffd60769591ea969c99dea3105d0ec9612cf43f9";

test.each([
  ["a valid signature", '{"data": ["1", "2"]}', `ts=1698796800;h1=${H1}`, "VALID_SECRET", { ok: true, timestamp: NOW }],
  [
    "a valid signature among several hashes",
    '{"data": "value"}',
    "ts=1698796800;h1=28981e941fae76e53db32f3d2a83cb69db41476595e84e1970a1b5d98f62b261;h1=28981e941fae76e53db32f3d2a83cb69db41476595e84e1970a1b5d98f62b261;h2=RANDOM_HASH",
    "VALID_SECRET",
    { ok: true, timestamp: NOW },
  ],
  ["another secret", '{"data": ["1", "2"]}', `ts=1698796800;h1=${H1}`, "INVALID_VALID_SECRET", { ok: false, reason: "signature_mismatch" }],
  ["an old timestamp", '{"data": ["1", "2"]}', `ts=9876;h1=${H1}`, "VALID_SECRET", { ok: false, reason: "timestamp_out_of_window" }],
  ["the body with more spaces (bytes, not JSON, are signed)", '{ "data": [ "1", "2" ]}', `ts=1698796800;h1=${H1}`, "VALID_SECRET", { ok: false, reason: "signature_mismatch" }],
  ["a hash that is not hex", '{"data": ["1", "2"]}', "ts=1234;h1=invalid_signature", "VALID_SECRET", { ok: false, reason: "malformed_header" }],
  ["no ts and no h1", '{"data": ["1", "2"]}', "invalid_header", "VALID_SECRET", { ok: false, reason: "malformed_header" }],
  ["no ts", '{"data": ["1", "2"]}', "h1=invalid_header", "VALID_SECRET", { ok: false, reason: "malformed_header" }],
  ["no h1", '{"data": ["1", "2"]}', "ts=1234;h2=invalid_header", "VALID_SECRET", { ok: false, reason: "malformed_header" }],
])("Paddle's vector: %s", (_, body, header, secret, expected) => {
  expect(verifyPaddleSignature({ secret, body, header, nowSeconds: NOW })).toEqual(expected);
});

test("the window holds both ways (300 s by default, or the tolerance given); two ts are refused", () => {
  const check = (nowSeconds: number, toleranceSeconds?: number) =>
    verifyPaddleSignature({ secret: "VALID_SECRET", body: '{"data": ["1", "2"]}', header: `ts=${NOW};h1=${H1}`, nowSeconds, toleranceSeconds }).ok;
  expect([check(NOW + 300), check(NOW - 300), check(NOW + 301), check(NOW - 301)]).toEqual([true, true, false, false]);
  expect([check(NOW + 5, 5), check(NOW + 6, 5)]).toEqual([true, false]);
  expect(verifyPaddleSignature({ secret: "VALID_SECRET", body: '{"data": ["1", "2"]}', header: `ts=${NOW};ts=${NOW};h1=${H1}`, nowSeconds: NOW })).toEqual({
    ok: false,
    reason: "malformed_header",
  });
});

test("signing gives Paddle's published hash, and one h1 per secret during a rotation, either verifying", () => {
  expect(signPaddleNotification("VALID_SECRET", '{"data": ["1", "2"]}', NOW)).toBe(`ts=${NOW};h1=${H1}`);
  const header = signPaddleNotification(["pdl_ntfset_new", "pdl_ntfset_old"], "{}", NOW);
  for (const secret of ["pdl_ntfset_new", "pdl_ntfset_old"]) expect(verifyPaddleSignature({ secret, body: Buffer.from("{}"), header, nowSeconds: NOW }).ok).toBe(true);
  expect(verifyPaddleSignature({ secret: "pdl_ntfset_other", body: "{}", header, nowSeconds: NOW }).ok).toBe(false);
});
