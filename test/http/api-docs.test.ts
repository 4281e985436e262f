/**
 * The API reference as a reader meets it: /api/openapi.json carries a summary
 * and a description on every operation, a description on every field a caller
 * sends, examples that the validating schemas accept, documented error
 * envelopes, and text fit for users (no Markdown code spans, no internal file,
 * spec or service names). /api/docs serves the viewer from this server with a
 * tight Content-Security-Policy. (test/http/openapi.test.ts checks that the
 * document covers every route; test/browser/api-docs.test.ts renders the page.)
 */
import fs from "node:fs";
import { z } from "zod";
import { viewerBundlePath } from "../../services/gateway/api-docs";
import { OPERATIONS, toOpenApiPath } from "../../services/gateway/openapi";
import { startSystem, type TestSystem } from "../support/system";

type Json = Record<string, any>;

/** Text that points at the implementation rather than the API: spec sections, source files, internal names. */
const INTERNAL_REFERENCE = [
  /\bspec\s*\d/i,
  /\.(ts|md|tsx)\b/,
  /\b(services|shared|docs|test|bin)\//,
  /\bservice\./i,
  /\b(programs|attribution|sales|commissions|notifications|accounts|processor|gateway|status)\.[a-z]\w*/,
  /\b(moleculer|broker|transporter|zod|repository|ledger|outbox|ctx|REPL)\b/i,
];
const TEXT_KEYS = new Set(["summary", "description", "title"]);

/** Every [path, value] of a JSON tree. */
function* walk(node: unknown, at: string[] = []): Generator<[string[], unknown]> {
  yield [at, node];
  if (Array.isArray(node)) for (const [i, v] of node.entries()) yield* walk(v, [...at, String(i)]);
  else if (node && typeof node === "object") for (const [k, v] of Object.entries(node)) yield* walk(v, [...at, k]);
}

/** Every property of a JSON Schema (nested objects, array items and union variants included), with its path. */
function* schemaProperties(schema: Json | undefined, at: string): Generator<[string, Json]> {
  if (!schema || typeof schema !== "object") return;
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    yield [`${at}.${name}`, prop];
    yield* schemaProperties(prop, `${at}.${name}`);
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) for (const [i, variant] of ((schema[key] ?? []) as Json[]).entries()) yield* schemaProperties(variant, `${at}[${key} ${i}]`);
  if (schema.items) yield* schemaProperties(schema.items, `${at}[]`);
}

/** Every zod schema inside one (object fields, union options, wrappers, pipes), to find the examples in their metadata. */
function* zodNodes(schema: z.ZodType, at: string): Generator<[string, z.ZodType]> {
  yield [at, schema];
  const def = (schema as unknown as { _zod: { def: Record<string, any> } })._zod.def;
  if (def.shape) for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>)) yield* zodNodes(v, `${at}.${k}`);
  for (const option of (def.options ?? []) as z.ZodType[]) yield* zodNodes(option, `${at}|`);
  for (const key of ["innerType", "element", "in", "out"]) if (def[key]) yield* zodNodes(def[key], at);
}

describe("API reference content", () => {
  let sys: TestSystem;
  let doc: Json;
  const operations = () =>
    Object.entries(doc.paths as Record<string, Json>).flatMap(([p, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${p}`, op: op as Json })));

  beforeAll(async () => {
    sys = await startSystem();
    const res = await sys.http("GET", "/api/openapi.json");
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => sys?.stop());

  it("gives every operation a summary and a description of its own", () => {
    expect(operations().length).toBe(Object.keys(OPERATIONS).length);
    for (const { key, op } of operations()) {
      expect({ key, summary: typeof op.summary === "string" && op.summary.length > 3 }).toEqual({ key, summary: true });
      expect({ key, description: typeof op.description === "string" && op.description.length > 10 && op.description !== op.summary }).toEqual({ key, description: true });
    }
  });

  it("describes every field a caller sends: body properties (nested too) and path and query parameters", () => {
    let bodyFields = 0;
    for (const { key, op } of operations()) {
      for (const [where, prop] of schemaProperties(op.requestBody?.content?.["application/json"]?.schema, "body")) {
        bodyFields++;
        expect({ key, where, description: typeof prop.description === "string" && prop.description.length > 0 }).toEqual({ key, where, description: true });
      }
      for (const param of (op.parameters as Json[]).filter((x) => !x.$ref)) {
        expect({ key, param: param.name, description: typeof param.description === "string" && param.description.length > 0 }).toEqual({ key, param: param.name, description: true });
      }
    }
    expect(bodyFields).toBeGreaterThan(40);
    // The descriptions and examples are the schemas' own (their metadata), not a copy kept elsewhere.
    const sale = doc.paths["/api/v1/track/sale"].post.requestBody.content["application/json"].schema;
    expect(sale.properties.amount_cents).toMatchObject({ description: expect.stringMatching(/minor units/), example: 10000 });
    const rule = doc.paths["/api/admin/programs"].post.requestBody.content["application/json"].schema.properties.commissionRule;
    expect(rule.oneOf ?? rule.anyOf).toEqual(
      expect.arrayContaining([expect.objectContaining({ properties: expect.objectContaining({ basisPoints: expect.objectContaining({ example: 2000 }) }) })]),
    );
    const limit = doc.paths["/api/admin/processor/events"].get.parameters.find((x: Json) => x.name === "limit");
    expect(limit).toMatchObject({ in: "query", description: expect.any(String), example: 20, schema: { type: "integer", maximum: 500 } });
  });

  it("has examples the validating schemas accept: every field example and every operation example (the body and parameter examples)", () => {
    let checked = 0;
    for (const [key, spec] of Object.entries(OPERATIONS)) {
      if (spec.input === "none" || "raw" in spec.input) continue;
      for (const [where, node] of zodNodes(spec.input, key)) {
        const example = node.meta()?.example;
        if (example === undefined) continue;
        checked++;
        const parsed = node.safeParse(example);
        expect({ where, example, valid: parsed.success }).toEqual({ where, example, valid: true });
      }
      const parsed = spec.input.safeParse(spec.example);
      expect({ key, valid: parsed.success }).toEqual({ key, valid: true });
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("uses plain text: no backticks anywhere, no internal references in what readers read", () => {
    const backticks: string[] = [];
    const internal: string[] = [];
    for (const [at, value] of walk(doc)) {
      if (typeof value !== "string") continue;
      if (value.includes("`")) backticks.push(`${at.join("/")}: ${value}`);
      if (TEXT_KEYS.has(at[at.length - 1]) && INTERNAL_REFERENCE.some((re) => re.test(value))) internal.push(`${at.join("/")}: ${value}`);
    }
    expect(backticks).toEqual([]);
    expect(internal).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/"x-action"/);
  });

  it("the patterns catch what they are for", () => {
    for (const text of ["Reduces the commission (spec 2.1).", "See docs/security.md.", "Calls sales.refund.", "The health service.action", "Status of the transporter"]) {
      expect({ text, caught: INTERNAL_REFERENCE.some((re) => re.test(text)) }).toEqual({ text, caught: true });
    }
    for (const text of ["The account.updated events of the processor.", "Only events in this state.", "https://shop.example/?via=jane", "commission.refunded"]) {
      expect({ text, caught: INTERNAL_REFERENCE.some((re) => re.test(text)) }).toEqual({ text, caught: false });
    }
  });

  it("documents every error answer with its envelope, a description and an example per code", () => {
    for (const { key, op } of operations()) {
      const [method, p] = key.split(" ");
      const spec = Object.entries(OPERATIONS).find(([k]) => k.split(" ")[0] === method && toOpenApiPath(k.split(" ")[1]) === p)![1];
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (Number(status) < 400 || spec.otherResponses?.[status]) continue;
        const content = response.content?.["application/json"];
        const refs = JSON.stringify(content?.schema ?? {});
        expect({ key, status, envelope: /#\/components\/schemas\/(Error|TypedError)/.test(refs) }).toEqual({ key, status, envelope: true });
        expect({ key, status, description: /^Error: /.test(response.description) }).toEqual({ key, status, description: true });
        const examples = Object.entries((content.examples ?? {}) as Record<string, Json>);
        expect(examples.length).toBeGreaterThan(0);
        for (const [code, { value }] of examples) {
          expect(response.description).toContain(code);
          expect(value.error).toMatchObject({ code, message: expect.any(String) });
        }
      }
    }
  });

  it("serves the viewer bundle from this server: the installed file, JavaScript, cached for a year", async () => {
    const res = await fetch(`${sys.baseUrl}/api/docs/scalar.js?v=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toMatch(/max-age=31536000/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(fs.readFileSync(viewerBundlePath()))).toBe(true);
    expect(body.length).toBeGreaterThan(1_000_000);
  });

  it("serves the page with a policy that allows this origin's scripts and nothing from elsewhere", async () => {
    const res = await fetch(`${sys.baseUrl}/api/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = Object.fromEntries(
      res.headers
        .get("content-security-policy")!
        .split(";")
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...sources]) => [name, sources]),
    );
    expect(csp["default-src"]).toEqual(["'none'"]);
    expect(csp["script-src"][0]).toBe("'self'");
    expect(csp["script-src"].slice(1)).toEqual([expect.stringMatching(/^'sha256-[A-Za-z0-9+/]+=*'$/)]);
    expect(csp["connect-src"]).toEqual(["'self'"]);
    expect(csp["frame-ancestors"]).toEqual(["'none'"]);
    const allSources = Object.values(csp).flat() as string[];
    expect(allSources.filter((s) => /^(https?:|\*|'unsafe-eval')/.test(s) || s.includes("."))).toEqual([]);
    const html = await res.text();
    expect(html).toContain("/docs/scalar.js?v=");
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
  });
});
