/**
 * A deterministic (seeded) generator of bad requests for every public
 * endpoint. Each case is invalid by construction (a field of the wrong type
 * or out of its domain, a missing required field, malformed or oversized
 * JSON, a wrong content type, a bad credential, a bad signature, a bad path),
 * so none may change any state; "noise" (unicode, deep JSON, unknown and
 * prototype-polluting keys) is mixed into the other fields.
 */
import { createHmac } from "node:crypto";

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface FuzzCase {
  endpoint: string;
  method: string;
  /** Sent verbatim (may hold malformed percent-encoding). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What makes it bad, for the failure message. */
  note: string;
}

export interface FuzzContext {
  programId: number;
  referralCode: string;
  apiKey: string;
  retiredKey: string;
  transactionId: string;
  sessionCookie: string;
  webhookSecret: string;
  maxBodyBytes: number;
}

type FieldType = "id" | "string" | "int+" | "int0" | "bool" | "email" | "datetime" | "currency" | "enum" | "object" | "code";

interface Field {
  type: FieldType;
  required?: boolean;
  /** null is a valid value (zod nullish). */
  nullable?: boolean;
  max?: number;
}

interface Template {
  endpoint: string;
  path: string;
  auth: "key" | "none" | "optional-key" | "session-login";
  valid: (c: FuzzContext) => Record<string, unknown>;
  fields: Record<string, Field>;
}

const TEMPLATES: Template[] = [
  {
    endpoint: "click",
    path: "/api/v1/track/click",
    auth: "none",
    valid: (c) => ({ program_id: c.programId, referral_code: c.referralCode, test: false, url: "https://shop.example/landing", referrer: "https://blog.example" }),
    fields: {
      program_id: { type: "id", required: true },
      referral_code: { type: "code", required: true, max: 64 },
      test: { type: "bool" },
      url: { type: "string", max: 2048 },
      referrer: { type: "string", max: 2048 },
      timestamp: { type: "datetime" },
    },
  },
  {
    endpoint: "lead",
    path: "/api/v1/track/lead",
    auth: "optional-key",
    valid: () => ({ customer_key: "fuzz-customer", email: "fuzz@example.com", test: true }),
    fields: {
      customer_key: { type: "string", required: true, max: 256 },
      email: { type: "email" },
      click_id: { type: "string", max: 128 },
      test: { type: "bool" },
      timestamp: { type: "datetime" },
      program_id: { type: "id" },
    },
  },
  {
    endpoint: "sale",
    path: "/api/v1/track/sale",
    auth: "key",
    valid: () => ({ transaction_id: "fuzz-new-sale", amount_cents: 1000, currency: "usd", customer_key: "fuzz-customer" }),
    fields: {
      transaction_id: { type: "string", required: true, max: 255 },
      amount_cents: { type: "int+", required: true },
      currency: { type: "currency" },
      customer_key: { type: "string", max: 256 },
      click_id: { type: "string", max: 128 },
      email: { type: "email" },
      additional_data: { type: "object" },
      is_recurring: { type: "bool" },
      sale_type: { type: "string", max: 64 },
      subscription_id: { type: "string", max: 255 },
    },
  },
  {
    endpoint: "refund",
    path: "/api/v1/track/refund",
    auth: "key",
    valid: (c) => ({ transaction_id: c.transactionId, refund_amount_cents: 100, refund_id: "fuzz-refund", reason: "refund" }),
    fields: {
      transaction_id: { type: "string", required: true, max: 255 },
      refund_amount_cents: { type: "int0", nullable: true },
      refund_id: { type: "string", nullable: true, max: 255 },
      refund_reason: { type: "string", nullable: true, max: 1000 },
      reason: { type: "enum", nullable: true },
    },
  },
  {
    endpoint: "login",
    path: "/api/auth/login",
    auth: "session-login",
    valid: () => ({ email: "nobody-fuzz@example.com", password: "a wrong password" }),
    fields: {
      email: { type: "email", required: true },
      password: { type: "string", required: true, max: 1024 },
    },
  },
];

const UNICODE = ["𝕏𝕐ℤ", "ü@例え.jp", "\u202Eevil", "Ω≈ç√∫", "🏳️‍🌈👩‍👩‍👧", "\u0000nul", "\ufeffbom", "ﷺ", "\ud83d", "e\u0301", "a\u200bb"];

/** Values outside the field's domain (each one alone makes the request invalid). */
function breakingValues(f: Field): unknown[] {
  const notNull = f.nullable ? [] : [null];
  const tooLong = f.max ? ["x".repeat(f.max + 1), "é".repeat(f.max + 1)] : [];
  switch (f.type) {
    case "id":
      return ["abc", -1, 0, 1.5, 2 ** 31, 2 ** 53 + 2, 1e308, -1e308, "", "0x", {}, null, "1e999", "-5"];
    case "int+":
      return ["100", 0, -1, 1.5, 2 ** 53, 2 ** 60, 1e308, -1e308, true, [], {}, "", ...notNull, "1e3"];
    case "int0":
      return ["100", -1, 1.5, 2 ** 53, 2 ** 60, 1e308, -1e308, true, [], {}, "", "NaN"];
    case "string":
      return [42, true, [], {}, ["a"], ...notNull, ...(f.required ? ["", "   "] : []), ...tooLong];
    case "code":
      return [42, true, [], {}, null, "", "bad code!", "üñí", "x".repeat(65), "a/b"];
    case "bool":
      return ["true", 1, 0, null, [], {}, "yes"];
    case "email":
      return ["not-an-email", "a@", "@b.c", 42, true, [], {}, ...notNull, `${"x".repeat(330)}@example.com`, "a b@c.d"];
    case "datetime":
      return ["yesterday", "2026-13-45T00:00:00Z", 1_767_225_600, true, "2026-01-01", "", null, {}];
    case "currency":
      return ["dollars", "US", "12$", 840, true, null, [], ""];
    case "enum":
      return ["fraud", "REFUND", "", 1, true, [], {}];
    case "object":
      return ["x", 1, true, null, [1, 2], { test_mode: "yes" }, { test_mode: 1 }];
  }
}

/** Valid-looking noise for a field (may be valid or not: only added next to a breaking change). */
function noiseValue(r: () => number, f: Field): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  if (f.type === "object") return pick([{ nested: deep(r, 50 + Math.floor(r() * 500)) }, { test_mode: false, __proto__: { admin: true } }, {}]);
  if (f.type === "string" || f.type === "code" || f.type === "email") return pick(UNICODE);
  return pick([pick(UNICODE), 1, null, deep(r, 20)]);
}

function deep(r: () => number, depth: number): unknown {
  let v: unknown = r() < 0.5 ? 1 : "leaf";
  for (let i = 0; i < depth; i++) v = r() < 0.5 ? [v] : { d: v };
  return v;
}

/** A JSON text nested `depth` levels (built as text: JSON.stringify would overflow first). */
function deepJsonText(depth: number, open = "[", close = "]"): string {
  return open.repeat(depth) + close.repeat(depth);
}

const MALFORMED = [
  "{",
  '{"transaction_id": }',
  "{'single': 'quotes'}",
  '{"a": 1,}',
  '{"a": NaN}',
  '{"a": Infinity}',
  "nul",
  '"just a string"',
  "42",
  "true",
  "null",
  '{"a": "\\x41"}',
  '{"a": "\\ud800"',
  "\u0000",
  '{"a":1}{"b":2}',
  "<xml/>",
  "program_id=1&referral_code=x",
  "\ufeff{}",
];

export function generateCases(seed: number, count: number, ctx: FuzzContext): FuzzCase[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const cases: FuzzCase[] = [];
  const json = (v: unknown) => Buffer.from(JSON.stringify(v), "utf8");
  const authHeaders = (t: Template): Record<string, string> => (t.auth === "key" || (t.auth === "optional-key" && r() < 0.7) ? { Authorization: `Bearer ${ctx.apiKey}` } : {});
  const JSON_TYPE = { "Content-Type": "application/json" };

  const makers: Array<[number, () => FuzzCase]> = [
    // A field of the wrong type or out of range, with noise in the others.
    [
      40,
      () => {
        const t = pick(TEMPLATES);
        const body: Record<string, unknown> = t.valid(ctx);
        const names = Object.keys(t.fields);
        const broken = pick(names);
        const value = pick(breakingValues(t.fields[broken]));
        body[broken] = value;
        for (const other of names) if (other !== broken && r() < 0.3) body[other] = noiseValue(r, t.fields[other]);
        if (r() < 0.2) body[pick(["__proto__", "constructor", "extra_field", "💥"])] = pick([{ polluted: true }, { prototype: { polluted: true } }, 1]);
        // A browser lead without program_id is refused before anything else: keep the key so the field check is reached.
        const headers: Record<string, string> = { ...JSON_TYPE, ...authHeaders(t) };
        if (t.endpoint === "lead" && !headers.Authorization) body.program_id = broken === "program_id" ? value : ctx.programId;
        if (t.endpoint === "lead" && !headers.Authorization && broken !== "click_id" && broken !== "program_id") delete body.click_id;
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers, body: json(body), note: `${broken} = ${JSON.stringify(value)?.slice(0, 80)}` };
      },
    ],
    // A required field missing.
    [
      10,
      () => {
        const t = pick(TEMPLATES);
        const body = t.valid(ctx);
        const required = Object.entries(t.fields)
          .filter(([, f]) => f.required)
          .map(([k]) => k);
        const missing = pick(required);
        delete body[missing];
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers: { ...JSON_TYPE, ...authHeaders(t) }, body: json(body), note: `missing ${missing}` };
      },
    ],
    // Malformed JSON, or JSON that is not an object.
    [
      10,
      () => {
        const t = pick(TEMPLATES);
        const text = r() < 0.5 ? pick(MALFORMED) : JSON.stringify(t.valid(ctx)).slice(0, 1 + Math.floor(r() * 20));
        return {
          endpoint: t.endpoint,
          method: "POST",
          path: t.path,
          headers: { ...JSON_TYPE, ...authHeaders(t) },
          body: Buffer.from(text, "utf8"),
          note: `malformed ${JSON.stringify(text).slice(0, 60)}`,
        };
      },
    ],
    // The body as an array or a scalar.
    [
      3,
      () => {
        const t = pick(TEMPLATES);
        const v = pick([[t.valid(ctx)], [], [1, 2, 3], "string", 0]);
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers: { ...JSON_TYPE, ...authHeaders(t) }, body: json(v), note: `body ${JSON.stringify(v).slice(0, 60)}` };
      },
    ],
    // A valid body under the wrong content type.
    [
      8,
      () => {
        const t = pick(TEMPLATES);
        const type = pick([
          "text/plain",
          "text/plain;charset=UTF-8",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=xyz",
          "application/xml",
          "application/octet-stream",
          "application/json; charset=utf-16",
          "application/json; charset=latin1",
          "",
          "application/jsonx",
        ]);
        const headers: Record<string, string> = { ...authHeaders(t) };
        if (type) headers["Content-Type"] = type;
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers, body: json(t.valid(ctx)), note: `content type '${type}'` };
      },
    ],
    // Oversized bodies.
    [
      2,
      () => {
        const t = pick(TEMPLATES);
        const body = { ...t.valid(ctx), padding: "x".repeat(ctx.maxBodyBytes + 1 + Math.floor(r() * 1000)) };
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers: { ...JSON_TYPE, ...authHeaders(t) }, body: json(body), note: "oversized body" };
      },
    ],
    // Deeply nested JSON, as the body or inside an invalid one.
    [
      4,
      () => {
        const t = pick(TEMPLATES);
        const depth = pick([100, 1000, 5000, 20_000]);
        const text = r() < 0.5 ? deepJsonText(depth) : `{"${Object.keys(t.fields)[0]}": ${deepJsonText(depth, '{"a":', "}").replace(/\{"a":\}/, '{"a":1}')}}`;
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers: { ...JSON_TYPE, ...authHeaders(t) }, body: Buffer.from(text), note: `deep JSON (${depth})` };
      },
    ],
    // Bad credentials: even a valid body changes nothing.
    [
      8,
      () => {
        const t = pick(TEMPLATES.filter((x) => x.auth === "key" || x.auth === "optional-key"));
        const auth = pick([
          "Bearer",
          "Bearer ",
          "Basic dXNlcjpwYXNz",
          `Bearer ${ctx.retiredKey}`,
          `Bearer ${ctx.apiKey}x`,
          `Bearer ${ctx.apiKey.slice(0, -1)}`,
          `Bearer svc_sk_0123456789abcdef_${"A".repeat(43)}`,
          `Bearer ${"A".repeat(5000)}`,
          "Bearer é",
          "bearer  \t",
          `Bearer ${ctx.apiKey} ${ctx.apiKey}`,
        ]);
        return { endpoint: t.endpoint, method: "POST", path: t.path, headers: { ...JSON_TYPE, Authorization: auth }, body: json(t.valid(ctx)), note: `auth '${auth.slice(0, 40)}'` };
      },
    ],
    // Processor webhooks with bad signatures (or bodies too large).
    [
      8,
      () => {
        const now = Math.floor(Date.now() / 1000);
        const event = {
          id: `evt_fuzz_${Math.floor(r() * 1e9)}`,
          object: "event",
          type: pick(["checkout.session.completed", "charge.refunded", "account.updated", "x"]),
          account: "acct_fuzz",
          livemode: true,
          created: now,
          data: { object: { id: "x", metadata: { svc_click_id: pick(UNICODE) } } },
        };
        const text = r() < 0.8 ? JSON.stringify(event) : pick(MALFORMED);
        const sign = (secret: string, t: number) => `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${text}`).digest("hex")}`;
        const kind = pick(["missing", "forged", "stale", "future", "wrong secret", "garbage", "empty", "oversized", "signed other body"]);
        const headers: Record<string, string> = { "Content-Type": pick(["application/json", "text/plain", "application/octet-stream"]) };
        let body = Buffer.from(text);
        if (kind === "forged") headers["Stripe-Signature"] = `t=${now},v1=${"0".repeat(64)}`;
        if (kind === "stale") headers["Stripe-Signature"] = sign(ctx.webhookSecret, now - 3600);
        if (kind === "future") headers["Stripe-Signature"] = sign(ctx.webhookSecret, now + 3600);
        if (kind === "wrong secret") headers["Stripe-Signature"] = sign("whsec_not_the_secret", now);
        if (kind === "garbage") headers["Stripe-Signature"] = pick(["t=abc,v1=", ",,,", "v1=zz", "t=1", "é=é", "t=1,v1=1,v0=2,".repeat(50)]);
        if (kind === "empty") headers["Stripe-Signature"] = "";
        if (kind === "signed other body") headers["Stripe-Signature"] = `t=${now},v1=${createHmac("sha256", ctx.webhookSecret).update(`${now}.{}`).digest("hex")}`;
        if (kind === "oversized") {
          body = Buffer.alloc(1024 * 1024 + 10, 0x61);
          headers["Stripe-Signature"] = sign(ctx.webhookSecret, now);
        }
        return { endpoint: "processor-webhook", method: "POST", path: "/api/v1/webhooks/processor", headers, body, note: `signature ${kind}` };
      },
    ],
    // The status endpoint: bad ids, no or bad session, API keys.
    [
      5,
      () => {
        const id = pick(["abc", "-1", "0", "1.5", "99999999999", "%00", "%F0%9F%92%A9", "..%2Fadmin", "9".repeat(400), "%20", "null", "2147483648", "%E0%A4%A"]);
        const auth = pick<Record<string, string>>([
          { Cookie: ctx.sessionCookie },
          {},
          { Cookie: "svc_session=forged" },
          { Cookie: `svc_session=${"%".repeat(10)}` },
          { Authorization: `Bearer ${ctx.apiKey}` },
          { Authorization: `Bearer ${ctx.apiKey}`, Cookie: ctx.sessionCookie },
          { Cookie: `svc_session=${"a".repeat(5000)}` },
        ]);
        return { endpoint: "status", method: "GET", path: `/api/tracking/status/${id}`, headers: auth, note: `id '${id.slice(0, 20)}' with ${Object.keys(auth).join("+") || "nothing"}` };
      },
    ],
    // Health, wrong methods, unknown and malformed paths.
    [
      4,
      () => {
        const v = pick([
          { method: "GET", path: `/api/health?${pick(["x=1", "%ZZ", "a[b][c]=1", "__proto__[x]=1", "=".repeat(100)])}` },
          { method: "POST", path: "/api/health" },
          { method: "GET", path: "/api/v1/track/sale" },
          { method: "PUT", path: "/api/v1/track/refund" },
          { method: "DELETE", path: "/api/v1/track/click" },
          { method: "GET", path: "/api/v1/track/%E0%A4%A" },
          { method: "POST", path: "/api/v1/track/sale/../refund" },
          { method: "POST", path: "/api/v1/track/" },
          { method: "GET", path: "/api/auth/login" },
          { method: "GET", path: `/api/${"a/".repeat(200)}` },
          { method: "POST", path: "/api/v1/webhooks/processor/extra" },
          { method: "PATCH", path: "/api/tracking/status/1" },
        ]);
        return { endpoint: "routing", method: v.method, path: v.path, headers: {}, note: `${v.method} ${v.path.slice(0, 40)}` };
      },
    ],
  ];

  const total = makers.reduce((s, [w]) => s + w, 0);
  while (cases.length < count) {
    let x = r() * total;
    for (const [w, make] of makers) {
      x -= w;
      if (x < 0) {
        cases.push(make());
        break;
      }
    }
  }
  return cases;
}
