/**
 * The SDK's verifyWebhook against the service's own signer
 * (shared/webhook-signature.ts): what the service signs, the SDK accepts.
 */
import { verifyWebhook, WebhookVerificationError } from "../../sdk/src";
import { signWebhook } from "../../shared/webhook-signature";

const secret = "whsec_test_secret";
const body = JSON.stringify({ id: 42, type: "commission.reversed", createdAt: "2026-01-01T00:00:00.000Z", workspaceId: 1, data: { commissionId: 7, deductionCents: 2000 } });
const t = 1_900_000_000;
const now = t * 1000;

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.code;
    throw e;
  }
  return undefined;
};

test("accepts the service's signature on the raw body (string or bytes) and returns the event", () => {
  const signature = signWebhook(secret, body, t);
  expect(verifyWebhook({ payload: body, signature, secret, now })).toEqual({ ...JSON.parse(body), signedAt: t });
  expect(verifyWebhook({ payload: Buffer.from(body), signature, secret, now: now + 300_000 }).id).toBe(42);
  expect(verifyWebhook({ payload: new Uint8Array(Buffer.from(body)), signature: [signature], secret, now: now - 300_000 }).type).toBe("commission.reversed");
});

test("secret rotation: several v1 values, several secrets; any match is enough", () => {
  const oldAndNew = `${signWebhook("whsec_old", body, t)},v1=${signWebhook(secret, body, t).split("v1=")[1]}`;
  expect(verifyWebhook({ payload: body, signature: oldAndNew, secret, now }).id).toBe(42);
  expect(verifyWebhook({ payload: body, signature: signWebhook("whsec_old", body, t), secret: [secret, "whsec_old"], now }).id).toBe(42);
});

test("refusals carry a stable code", () => {
  const signature = signWebhook(secret, body, t);
  expect(codeOf(() => verifyWebhook({ payload: body, signature: undefined, secret, now }))).toBe("missing_signature");
  expect(codeOf(() => verifyWebhook({ payload: body, signature: "", secret, now }))).toBe("missing_signature");
  for (const bad of ["garbage", `t=${t}`, `v1=${"a".repeat(64)}`, `t=abc,v1=${"a".repeat(64)}`, `t=${t},v1=short`, `t=${t},v0=${"a".repeat(64)}`]) {
    expect([bad, codeOf(() => verifyWebhook({ payload: body, signature: bad, secret, now }))]).toEqual([bad, "malformed_signature"]);
  }
  expect(codeOf(() => verifyWebhook({ payload: body, signature, secret, now: now + 301_000 }))).toBe("timestamp_out_of_window");
  expect(codeOf(() => verifyWebhook({ payload: body, signature, secret, now: now - 301_000 }))).toBe("timestamp_out_of_window");
  expect(codeOf(() => verifyWebhook({ payload: body, signature, secret, now: now + 301_000, toleranceSeconds: 600 }))).toBeUndefined();
  expect(codeOf(() => verifyWebhook({ payload: body.replace("2000", "20000"), signature, secret, now }))).toBe("signature_mismatch");
  expect(codeOf(() => verifyWebhook({ payload: body, signature, secret: "whsec_other", now }))).toBe("signature_mismatch");
  // Re-serialised JSON is other bytes.
  expect(codeOf(() => verifyWebhook({ payload: JSON.stringify(JSON.parse(body), null, 1), signature, secret, now }))).toBe("signature_mismatch");
  // A fresh timestamp on a captured signature does not verify.
  expect(codeOf(() => verifyWebhook({ payload: body, signature: signature.replace(`t=${t}`, `t=${t + 1000}`), secret, now: now + 1_000_000 }))).toBe("signature_mismatch");
  // Signed, but not an event.
  expect(codeOf(() => verifyWebhook({ payload: "not json", signature: signWebhook(secret, "not json", t), secret, now }))).toBe("invalid_payload");
  expect(codeOf(() => verifyWebhook({ payload: "[1]", signature: signWebhook(secret, "[1]", t), secret, now }))).toBe("invalid_payload");
});

test("a missing secret is a programming error, not a refusal", () => {
  expect(() => verifyWebhook({ payload: body, signature: signWebhook(secret, body, t), secret: "", now })).toThrow(TypeError);
});
