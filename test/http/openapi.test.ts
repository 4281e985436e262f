/**
 * The OpenAPI 3.1 document is generated from the zod schemas the actions
 * validate with, and covers every route of the gateway: this test reads the
 * gateway's route aliases at runtime and fails when one has no operation (or
 * an operation no route), when an input schema or example is missing or
 * invalid, or when the document does not hold together.
 */
import { z } from "zod";
import { ERROR_CODES } from "../../shared/errors";
import { OPERATIONS, pathParams, routeAliasKeys, toOpenApiPath, type OperationSpec } from "../../services/gateway/openapi";
import { startSystem, type TestSystem } from "../support/system";

type Json = Record<string, any>;

describe("OpenAPI document", () => {
  let sys: TestSystem;
  let doc: Json;
  let routes: Array<{ path?: string; aliases?: Record<string, unknown> }>;

  beforeAll(async () => {
    sys = await startSystem();
    const res = await sys.http("GET", "/api/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    doc = res.body;
    routes = (sys.broker.getLocalService("gateway") as unknown as { settings: { routes: typeof routes } }).settings.routes;
  });
  afterAll(() => sys?.stop());

  // A raw body's endpoint (a program's own processor webhook) may still have path parameters, with their schema.
  const zodInput = (op: OperationSpec) => (op.input === "none" ? null : "raw" in op.input ? (op.input.params ?? null) : op.input);

  it("has an operation for every route alias of the running gateway, and none for a route that does not exist", () => {
    const aliases = routeAliasKeys(routes);
    expect(aliases.length).toBeGreaterThan(30);
    const missing = aliases.filter((key) => !OPERATIONS[key]);
    expect({ routesWithoutOperation: missing }).toEqual({ routesWithoutOperation: [] });
    const stale = Object.keys(OPERATIONS).filter((key) => !aliases.includes(key));
    expect({ operationsWithoutRoute: stale }).toEqual({ operationsWithoutRoute: [] });
    for (const key of aliases) {
      const [method, p] = key.split(" ");
      expect({ key, inDocument: Boolean(doc.paths[toOpenApiPath(p)]?.[method.toLowerCase()]) }).toEqual({ key, inDocument: true });
    }
  });

  it("detects a route without an operation", () => {
    const withExtra = [...routes, { path: "/api/admin", aliases: { "POST brand-new-thing": "programs.create" } }];
    expect(routeAliasKeys(withExtra).filter((key) => !OPERATIONS[key])).toEqual(["POST /api/admin/brand-new-thing"]);
  });

  it("names, for each alias, the action the gateway routes it to", () => {
    for (const route of routes) {
      for (const [alias, target] of Object.entries(route.aliases ?? {})) {
        const [key] = routeAliasKeys([{ path: route.path, aliases: { [alias]: target } }]);
        expect({ key, action: OPERATIONS[key].action }).toEqual({ key, action: typeof target === "string" ? target : null });
      }
    }
  });

  it("gives every route that takes input its zod schema, and a valid example of it", () => {
    for (const [key, op] of Object.entries(OPERATIONS)) {
      const [method, p] = key.split(" ");
      const operation = doc.paths[toOpenApiPath(p)][method.toLowerCase()];
      const schema = zodInput(op);
      // Path parameters always have a schema: a route with one cannot say it takes no input.
      if (pathParams(p).length) expect({ key, hasSchema: schema !== null }).toEqual({ key, hasSchema: true });
      if (!schema) continue;
      expect({ key, example: op.example !== undefined }).toEqual({ key, example: true });
      const parsed = schema.safeParse(op.example);
      expect({ key, valid: parsed.success, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ key, valid: true, issues: [] });

      const fields = Object.keys((z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json).properties ?? {});
      const params = (operation.parameters as Json[]).filter((x) => !x.$ref);
      const body = operation.requestBody?.content?.["application/json"]?.schema;
      for (const field of fields) {
        const where = pathParams(p).includes(field) ? "path" : method === "GET" ? "query" : "body";
        const documented = where === "body" ? body?.properties?.[field] : params.find((x) => x.name === field && x.in === where)?.schema;
        expect({ key, field, where, documented: documented !== undefined && typeof documented === "object" }).toEqual({ key, field, where, documented: true });
      }
      expect(operation.responses["400"]).toBeDefined();
    }
  });

  it("is generated from the schemas the actions validate with (one source of truth)", () => {
    // A change to a validation schema shows in the document: the refund's amount has the validator's bounds.
    const refund = doc.paths["/api/v1/track/refund"].post.requestBody.content["application/json"].schema;
    expect(refund.required).toEqual(["transaction_id"]);
    expect(refund.properties.refund_amount_cents.anyOf).toEqual(expect.arrayContaining([expect.objectContaining({ type: "integer", minimum: 0 }), { type: "null" }]));
    const sale = doc.paths["/api/v1/track/sale"].post.requestBody.content["application/json"].schema;
    // No fixed default: an omitted currency is the program's (docs/architecture.md, "Currencies"); unknown keys are refused.
    expect(sale.properties.currency).toMatchObject({ pattern: "^[a-z]{3}$" });
    expect(sale.properties.currency.default).toBeUndefined();
    expect(sale.additionalProperties).toBe(false);
    const status = doc.paths["/api/tracking/status/{programId}"].get.parameters.find((x: Json) => x.name === "programId");
    expect(status).toMatchObject({ in: "path", required: true, schema: { type: "integer", exclusiveMinimum: 0 } });
  });

  it("lists each operation's errors with their status and envelope, and a success response", () => {
    for (const [key, op] of Object.entries(OPERATIONS)) {
      const [method, p] = key.split(" ");
      const responses = doc.paths[toOpenApiPath(p)][method.toLowerCase()].responses as Json;
      expect({ key, success: Object.keys(responses).some((s) => /^2\d\d$/.test(s)) }).toEqual({ key, success: true });
      for (const code of op.errors ?? []) {
        const response = responses[String(ERROR_CODES[code].status)];
        expect({ key, code, documented: Boolean(response?.content?.["application/json"]?.examples?.[code]) }).toEqual({ key, code, documented: true });
        const example = response.content["application/json"].examples[code].value;
        if (ERROR_CODES[code].envelope === "typed") expect(example.error).toMatchObject({ code, type: expect.any(String) });
        else expect(example).toMatchObject({ success: false, error: { code } });
      }
      if (op.auth === "apiKey") expect(Object.keys(responses)).toEqual(expect.arrayContaining(["401", "429"]));
    }
  });

  it("holds together: OpenAPI 3.1, unique operation ids, declared path parameters, resolvable references", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const ids = new Set<string>();
    const refs: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [k, v] of Object.entries(node)) {
          if (k === "$ref" && typeof v === "string") refs.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    for (const ref of refs) {
      const target = ref
        .replace(/^#\//, "")
        .split("/")
        .reduce<any>((o, k) => o?.[k], doc);
      expect({ ref, resolves: target !== undefined }).toEqual({ ref, resolves: true });
    }
    for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
      expect(p.startsWith("/")).toBe(true);
      for (const [method, operation] of Object.entries(item)) {
        expect(["get", "post", "put", "delete", "patch"]).toContain(method);
        expect(ids.has(operation.operationId)).toBe(false);
        ids.add(operation.operationId);
        const templated = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
        const declared = (operation.parameters as Json[])
          .filter((x) => x.in === "path")
          .map((x) => x.name)
          .sort();
        expect({ p, method, declared }).toEqual({ p, method, declared: templated });
        for (const scheme of (operation.security ?? []).flatMap((s: Json) => Object.keys(s))) expect(doc.components.securitySchemes[scheme]).toBeDefined();
      }
    }
  });

  it("serves a readable page rendering the document, with no external resources", async () => {
    const res = await sys.http("GET", "/api/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    const html = String(res.body);
    expect(html).toMatch(/<title>[^<]*API reference<\/title>/);
    expect(html).toMatch(/openapi\.json/);
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?(https?:)?\/\//i);
  });
});
