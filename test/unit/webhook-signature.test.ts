import { createHmac } from "node:crypto";
import { generateWebhookSecret, signWebhook, verifyWebhookSignature } from "../../shared/webhook-signature";

const secret = "whsec_test_secret";
const body = '{"id":42,"type":"commission.reversed","data":{"amountCents":2000}}';
const t = 1_900_000_000;

describe("webhook signatures", () => {
  it("signs t.body with HMAC-SHA256, hex, in the documented header format", () => {
    const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
    expect(signWebhook(secret, body, t)).toBe(`t=${t},v1=${expected}`);
  });

  it("accepts its own signature, from a string or the raw bytes, within the window", () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature({ secret, body, header, nowSeconds: t })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhookSignature({ secret, body: Buffer.from(body), header, nowSeconds: t + 300 })).toEqual({ ok: true, timestamp: t });
    expect(verifyWebhookSignature({ secret, body, header, nowSeconds: t - 300 }).ok).toBe(true);
  });

  it("refuses a changed body, another secret, or a re-signed timestamp", () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature({ secret, body: body.replace("2000", "20000"), header, nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" });
    expect(verifyWebhookSignature({ secret: "whsec_other", body, header, nowSeconds: t })).toEqual({ ok: false, reason: "signature_mismatch" });
    // Replaying with a fresh timestamp: the signature covers the old one.
    const replayed = header.replace(`t=${t}`, `t=${t + 1000}`);
    expect(verifyWebhookSignature({ secret, body, header: replayed, nowSeconds: t + 1000 })).toEqual({ ok: false, reason: "signature_mismatch" });
  });

  it("refuses timestamps outside the replay window (5 minutes by default, configurable)", () => {
    const header = signWebhook(secret, body, t);
    expect(verifyWebhookSignature({ secret, body, header, nowSeconds: t + 301 })).toEqual({ ok: false, reason: "timestamp_out_of_window" });
    expect(verifyWebhookSignature({ secret, body, header, nowSeconds: t - 301 })).toEqual({ ok: false, reason: "timestamp_out_of_window" });
    expect(verifyWebhookSignature({ secret, body, header, nowSeconds: t + 600, toleranceSeconds: 600 }).ok).toBe(true);
  });

  it("accepts any of several v1 signatures (secret rotation)", () => {
    const mine = signWebhook(secret, body, t).split(",")[1];
    const other = signWebhook("whsec_old", body, t).split(",")[1];
    expect(verifyWebhookSignature({ secret, body, header: `t=${t},${other},${mine}`, nowSeconds: t }).ok).toBe(true);
    expect(verifyWebhookSignature({ secret, body, header: `t=${t},${other}`, nowSeconds: t }).ok).toBe(false);
  });

  it("signs with several secrets at once (during a rotation), one v1 each in order; a receiver with either verifies", () => {
    const both = signWebhook([secret, "whsec_old"], body, t);
    expect(both).toBe(`${signWebhook(secret, body, t)},${signWebhook("whsec_old", body, t).split(",")[1]}`);
    expect(signWebhook([secret], body, t)).toBe(signWebhook(secret, body, t));
    for (const s of [secret, "whsec_old"]) expect(verifyWebhookSignature({ secret: s, body, header: both, nowSeconds: t }).ok).toBe(true);
    expect(verifyWebhookSignature({ secret: "whsec_older", body, header: both, nowSeconds: t }).ok).toBe(false);
  });

  it.each([undefined, null, "", "v1=abc", `t=${t}`, `t=abc,v1=${"0".repeat(64)}`, `t=${t},v1=xyz`, `t=${t},v0=${"0".repeat(64)}`])("refuses the malformed header %j", (header) => {
    expect(verifyWebhookSignature({ secret, body, header, nowSeconds: t })).toEqual({ ok: false, reason: "malformed_header" });
  });

  it("generates distinct 256-bit secrets", () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});
