/**
 * The SDK as a user gets it: `npm pack` in sdk/ (which builds dist/), the
 * tarball installed into a fresh project without a registry, then imported
 * by plain `node` (no loader, no TypeScript) as ES module and as CommonJS,
 * calling trackSale against the real server and verifyWebhook on a real
 * outbound webhook the server signed. The package's types are checked the
 * same way a TypeScript user's project would see them.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { waitFor } from "../support/notifications";
import { ROOT } from "../support/processes";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const run = promisify(execFile);
const SDK = path.join(ROOT, "sdk");
const NODE = path.join(ROOT, "node_modules", ".bin", "node");
const TSC = path.join(ROOT, "node_modules", ".bin", "tsc");
/** A second Node (the system's, often an older major) checks that `engines` is not a Node 22-only claim. */
const OTHER_NODE = ["/usr/bin/node"].find((p) => fs.existsSync(p) && fs.realpathSync(p) !== fs.realpathSync(NODE));

/** No loader and no jest settings leak into the children. */
const plainEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith("JEST") || k.startsWith("npm_")) delete env[k];
  return env;
};

let tmp: string;
let project: string;
let packed: { filename: string; files: { path: string }[] };
let sys: TestSystem;
let boot: Bootstrap;
let secret: string;
let customer: string;
const deliveries: { body: Buffer; signature: string; type: string }[] = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    deliveries.push({ body: Buffer.concat(chunks), signature: String(req.headers["svc-signature"] ?? ""), type: String(req.headers["svc-event-type"] ?? "") });
    res.writeHead(200).end();
  });
});

const CONSUMER = `
const [op, input] = [process.argv[2], JSON.parse(process.argv[3])];
async function main(sdk) {
  if (op === "sale") {
    const client = new sdk.AffiliateClient({ apiKey: input.apiKey, baseUrl: input.baseUrl });
    const first = await client.trackSale({ customerExternalId: input.customer, amount: input.amount, invoiceId: input.invoiceId });
    const again = await client.trackSale({ customerExternalId: input.customer, amount: input.amount, invoiceId: input.invoiceId });
    const refused = await new sdk.AffiliateClient({ apiKey: "svc_sk_wrong", baseUrl: input.baseUrl, retry: false })
      .trackSale({ customerExternalId: input.customer, amount: 1, invoiceId: "x" })
      .catch((e) => ({ isApiError: e instanceof sdk.AffiliateApiError, status: e.status, code: e.code }));
    return { first, again, refused };
  }
  if (op === "verify") {
    const payload = Buffer.from(input.payloadBase64, "base64");
    const event = sdk.verifyWebhook({ payload, signature: input.signature, secret: input.secret });
    let tampered;
    try {
      sdk.verifyWebhook({ payload: Buffer.concat([payload, Buffer.from(" ")]), signature: input.signature, secret: input.secret });
    } catch (e) {
      tampered = { isVerificationError: e instanceof sdk.WebhookVerificationError, code: e.code };
    }
    return { event, tampered };
  }
  throw new Error("unknown op " + op);
}
`;

/** Runs a consumer script with plain node; it prints one JSON line. */
async function consumer(node: string, file: "esm.mjs" | "cjs.cjs", op: string, input: Record<string, unknown>): Promise<any> {
  const { stdout } = await run(node, [path.join(project, file), op, JSON.stringify(input)], { cwd: project, env: plainEnv() });
  return JSON.parse(stdout);
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "svc-sdk-"));
  // npm pack runs the package's prepack script: the tsc builds into sdk/dist.
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: SDK, env: plainEnv(), maxBuffer: 16 * 1024 * 1024 });
  packed = JSON.parse(stdout.slice(stdout.indexOf("[")))[0];

  project = path.join(tmp, "consumer");
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  // The SDK has no dependencies: installing its tarball needs no registry.
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", path.join(tmp, packed.filename)], { cwd: project, env: plainEnv() });
  fs.writeFileSync(path.join(project, "esm.mjs"), `import * as sdk from "@svc/affiliate-sdk";\n${CONSUMER}\nconsole.log(JSON.stringify(await main(sdk)));\n`);
  fs.writeFileSync(path.join(project, "cjs.cjs"), `const sdk = require("@svc/affiliate-sdk");\n${CONSUMER}\nmain(sdk).then((r) => console.log(JSON.stringify(r)));\n`);

  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  sys = await startSystem({ env: { WEBHOOK_INTERVAL_MS: "100" } });
  const workspace = await sys.admin("POST", "/workspaces", { name: "SDK merchant" });
  boot = await sys.bootstrap({ workspaceId: workspace.id });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
    eventTypes: ["commission.created"],
  });
  secret = endpoint.secret;
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  customer = uniqueId("sdk-user");
  await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
}, 240_000);

afterAll(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await sys?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("the tarball holds the build, the browser snippet and the README; no TypeScript sources", () => {
  const files = packed.files.map((f) => f.path).sort();
  expect(files.filter((f) => !/^dist\/(esm|cjs)\/[a-z-]+\.(js|d\.ts)$/.test(f) && !/^dist\/(esm|cjs)\/package\.json$/.test(f))).toEqual(["README.md", "browser/svc.js", "package.json"]);
  for (const dir of ["esm", "cjs"]) {
    expect(files).toEqual(expect.arrayContaining([`dist/${dir}/index.js`, `dist/${dir}/index.d.ts`, `dist/${dir}/package.json`]));
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(project, "node_modules/@svc/affiliate-sdk/package.json"), "utf8"));
  expect(manifest.engines).toEqual({ node: ">=18" });
  expect(manifest.dependencies ?? {}).toEqual({});
});

describe.each([
  ["ES module (import)", "esm.mjs"],
  ["CommonJS (require)", "cjs.cjs"],
] as const)("%s with plain node", (_label, file) => {
  const nodes = [NODE, ...(OTHER_NODE ? [OTHER_NODE] : [])];

  test.each(nodes)("trackSale against the running server (%s)", async (node) => {
    const invoiceId = uniqueId(`in-${file}`);
    const out = await consumer(node, file, "sale", { apiKey: boot.apiKey, baseUrl: sys.baseUrl, customer, amount: 4900, invoiceId });
    expect(out.first).toEqual({
      status: "recorded",
      saleId: expect.any(Number),
      invoiceId,
      amount: 4900,
      currency: "usd",
      conversion: null,
      test: false,
      attributed: true,
      partnerId: boot.partnerId,
      attributionMethod: expect.any(String),
      commissionId: expect.any(Number),
      commissionStatus: expect.any(String),
    });
    expect(out.again).toEqual({ status: "already_recorded", invoiceId });
    expect(out.refused).toEqual({ isApiError: true, status: 401, code: "unauthorized" });
    expect(await sys.admin("GET", `/programs/${boot.programId}/sales/${invoiceId}`)).toMatchObject({ amountCents: 4900, customerKey: customer });
  });

  test.each(nodes)("verifyWebhook on the server's signed commission.created delivery (%s)", async (node) => {
    const invoiceId = uniqueId(`hook-${file}`);
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: invoiceId, amount_cents: 1000, customer_key: customer } });
    const delivery = await waitFor(
      async () => deliveries.find((d) => d.type === "commission.created" && JSON.parse(d.body.toString("utf8")).data.transactionId === invoiceId),
      (d) => d !== undefined,
    );
    expect(delivery).toBeDefined();
    const out = await consumer(node, file, "verify", { payloadBase64: delivery!.body.toString("base64"), signature: delivery!.signature, secret });
    expect(out.event).toMatchObject({
      type: "commission.created",
      workspaceId: expect.any(Number),
      data: { transactionId: invoiceId, commissionId: sale.body.commission_id },
      signedAt: expect.any(Number),
    });
    expect(out.tampered).toEqual({ isVerificationError: true, code: "signature_mismatch" });
  });
});

test("TypeScript users get the declarations, for import and for require (node16 resolution)", async () => {
  const check = `
import { AffiliateClient, verifyWebhook, type TrackSaleResult, type RetryPolicy } from "@svc/affiliate-sdk";
const client = new AffiliateClient({ apiKey: "k", retry: { maxAttempts: 2 } satisfies Partial<RetryPolicy> });
export async function f(): Promise<number | null> {
  const r: TrackSaleResult = await client.trackSale({ customerExternalId: "u", amount: 1, invoiceId: "i", test: true });
  // @ts-expect-error results are camelCase: there is no sale_id
  r.sale_id;
  const e = verifyWebhook<{ commissionId: number }>({ payload: "", signature: "", secret: "s" });
  e.data.commissionId satisfies number;
  return r.status === "recorded" ? r.commissionId : null;
}
`;
  fs.writeFileSync(path.join(project, "check-esm.mts"), check);
  fs.writeFileSync(path.join(project, "check-cjs.cts"), check);
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { module: "node16", moduleResolution: "node16", target: "ES2022", strict: true, noEmit: true, types: ["node"], typeRoots: [path.join(ROOT, "node_modules/@types")] },
      files: ["check-esm.mts", "check-cjs.cts"],
    }),
  );
  const result = await run(NODE, [TSC, "-p", project], { cwd: project, env: plainEnv() }).catch((e) => e);
  expect(result.stdout).toBe("");
  // Both resolutions were used: the ESM and the CJS declarations.
  const { stdout } = await run(NODE, [TSC, "-p", project, "--listFilesOnly"], { cwd: project, env: plainEnv() });
  expect(stdout).toMatch(/affiliate-sdk\/dist\/esm\/index\.d\.ts/);
  expect(stdout).toMatch(/affiliate-sdk\/dist\/cjs\/index\.d\.ts/);
});
