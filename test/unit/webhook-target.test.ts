/**
 * Where webhooks may go (services/notifications/webhook-target.ts) and the delivery client that enforces it at the
 * connection (services/notifications/webhook-client.ts): every non-public range in every spelling a URL can carry,
 * a name checked against the addresses it resolves to and connected to those only, no redirects, the timeouts,
 * and the delivery log's excerpt. The HTTP side (422 at registration, a refused delivery in the log) is
 * test/http/webhook-targets.test.ts.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ServiceBroker } from "moleculer";
import { readyBanner } from "../../bin/start";
import { postWebhook, responseExcerpt, type WebhookClientOptions } from "../../services/notifications/webhook-client";
import { classifyAddress, hostOf, privateTargetsAllowed, refusalOfUrl, type ResolvedAddress, type TargetPolicy } from "../../services/notifications/webhook-target";

describe("classifyAddress", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.5", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
    ["100.64.0.1", "shared"],
    ["100.127.255.255", "shared"],
    ["255.255.255.255", "reserved"],
    // IPv4 in IPv6: mapped (both spellings), compatible, NAT64, 6to4.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:a00:5", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:0:0", "unspecified"],
    ["::7f00:1", "loopback"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["2002:7f00:1::", "loopback"],
    ["2002:a00:5::1", "private"],
  ])("%s is %s", (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  test.each(["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "169.255.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::"])("%s is public", (ip) => {
    expect(classifyAddress(ip)).toBeNull();
  });

  test("names are not addresses", () => {
    expect(classifyAddress("localhost")).toBeNull();
  });
});

test("hostOf: WHATWG URL parsing turns every IPv4 spelling into the dotted quad; brackets and trailing dots go", () => {
  const hosts = ["http://0x7f000001/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/", "http://127.0.0.1./", "http://2130706433./", "http://0x7f.0.0.1/"].map((u) =>
    hostOf(new URL(u)),
  );
  expect(new Set(hosts)).toEqual(new Set(["127.0.0.1"]));
  expect(hostOf(new URL("http://[::ffff:127.0.0.1]:9/"))).toBe("::ffff:7f00:1");
  expect(hostOf(new URL("http://[0:0:0:0:0:0:0:1]/"))).toBe("::1");
  expect(hostOf(new URL("http://LocalHost.:5432/"))).toBe("localhost");
  expect(hostOf(new URL("https://Hooks.Merchant.Example./x"))).toBe("hooks.merchant.example");
});

describe("refusalOfUrl", () => {
  const names: Record<string, ResolvedAddress[]> = {
    "db.internal.test": [{ address: "10.1.2.3", family: 4 }],
    "mixed.test": [
      { address: "93.184.215.14", family: 4 },
      { address: "::1", family: 6 },
    ],
    "public.test": [{ address: "93.184.215.14", family: 4 }],
  };
  const policy: TargetPolicy = {
    allowPrivate: false,
    resolve: async (host) => {
      if (host === "slow.test") return new Promise(() => undefined);
      if (!names[host]) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      return names[host];
    },
  };

  test("literals and loopback names are refused without a lookup, names by what they resolve to (any address counts)", async () => {
    const refused = async (url: string) => (await refusalOfUrl(url, policy))?.message ?? null;
    expect(await refused("http://0x7f000001:9/hook")).toBe(
      "The webhook URL's host 127.0.0.1 is a loopback address: webhooks are only sent to public internet addresses (an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=true).",
    );
    expect(await refused("http://[::ffff:127.0.0.1]/")).toMatch(/^The webhook URL's host \[::ffff:7f00:1\] is a loopback address:/);
    expect(await refused("http://foo.localhost/")).toMatch(/^The webhook URL's host foo.localhost is a loopback name:/);
    // The resolved address is not in the message (it would map the internal network for whoever registers names).
    expect(await refused("https://db.internal.test/hook")).toMatch(/^The webhook URL's host db.internal.test resolves to a private-network address:/);
    expect(await refused("https://db.internal.test/hook")).not.toContain("10.1.2.3");
    expect((await refusalOfUrl("https://db.internal.test/hook", policy))?.detail).toContain("db.internal.test -> 10.1.2.3");
    expect(await refused("https://mixed.test/")).toMatch(/resolves to a loopback address/);
    expect(await refused("https://public.test/")).toBeNull();
    expect(await refused("https://93.184.215.14/")).toBeNull();
  });

  test("a name that does not resolve (or not in time) is accepted: the delivery checks again", async () => {
    expect(await refusalOfUrl("https://unknown.test/", policy)).toBeNull();
    expect(await refusalOfUrl("https://slow.test/", policy, 50)).toBeNull();
  });

  test("WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows everything; anything else refuses", async () => {
    expect(await refusalOfUrl("http://127.0.0.1:9/", { ...policy, allowPrivate: true })).toBeNull();
    expect([undefined, "", "false", "0", "yes", "1"].map((v) => privateTargetsAllowed({ WEBHOOK_ALLOW_PRIVATE_TARGETS: v }))).toEqual([false, false, false, false, false, false]);
    expect(["true", "TRUE", " true "].map((v) => privateTargetsAllowed({ WEBHOOK_ALLOW_PRIVATE_TARGETS: v }))).toEqual([true, true, true]);
  });
});

describe("readyBanner", () => {
  const broker = {
    getLocalService: () => ({ server: { address: () => ({ address: "0.0.0.0", port: 3000, family: "IPv4" }) }, adminTokenOrigin: { source: "env" } }),
  } as unknown as ServiceBroker;
  const saved = process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  afterEach(() => {
    if (saved === undefined) delete process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS;
    else process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = saved;
  });

  test("says when webhooks may reach private addresses, and nothing otherwise", () => {
    delete process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS;
    expect(readyBanner(broker)!.text).not.toMatch(/Webhooks/);
    process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = "true";
    const banner = readyBanner(broker)!;
    expect(banner.text).toMatch(/^ {2}Webhooks: private targets allowed \(WEBHOOK_ALLOW_PRIVATE_TARGETS=true\)/m);
    expect(banner.fields.webhookPrivateTargets).toBe("allowed");
  });

  test("says when no mail server is configured, and nothing when one is", () => {
    const saved = { MAIL_URL: process.env.MAIL_URL, SMTP_URL: process.env.SMTP_URL };
    try {
      delete process.env.MAIL_URL;
      delete process.env.SMTP_URL;
      expect(readyBanner(broker)!.text).toMatch(/^ {2}Mail: no MAIL_URL \(or SMTP_URL\): emails to partners and sign-in links are written to the log, not sent\.$/m);
      process.env.MAIL_URL = "smtp://127.0.0.1:2525";
      expect(readyBanner(broker)!.text).not.toMatch(/Mail:/);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe("postWebhook", () => {
  const seen: string[] = [];
  let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.writeHead(204).end();
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => answer(req, res));
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
    answer = (_req, res) => res.writeHead(204).end();
  });

  const lookups: string[] = [];
  /** A resolver that says every name is 127.0.0.1 (as a hostile DNS server would at delivery time). */
  const toLoopback = async (host: string): Promise<ResolvedAddress[]> => {
    lookups.push(host);
    return [{ address: "127.0.0.1", family: 4 }];
  };
  const opts = (allowPrivate: boolean, over: Partial<WebhookClientOptions> = {}): WebhookClientOptions => ({
    policy: { allowPrivate, resolve: toLoopback },
    connectTimeoutMs: 1000,
    timeoutMs: 2000,
    ...over,
  });
  const post = (url: string, o: WebhookClientOptions) => postWebhook({ url, headers: { "Content-Type": "application/json" }, body: "{}" }, o);

  test("a name resolving to 127.0.0.1 is refused at the connection: nothing is sent, the failure is permanent", async () => {
    lookups.length = 0;
    const res = await post(`http://hooks.rebind.test:${port}/hook`, opts(false));
    expect(res).toMatchObject({ statusCode: null, responseExcerpt: null, permanent: true });
    expect(res.error).toMatch(/^refused: The webhook URL's host hooks.rebind.test resolves to a loopback address/);
    expect(res.detail).toContain("hooks.rebind.test -> 127.0.0.1");
    expect(lookups).toEqual(["hooks.rebind.test"]);
    expect(seen).toEqual([]);
  });

  test("every spelling of a private literal is refused before connecting", async () => {
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://2130706433:${port}/`,
      `http://127.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://localhost:${port}/`,
    ]) {
      const res = await post(url, opts(false));
      expect([url, res.permanent, res.error]).toEqual([url, true, expect.stringMatching(/^refused: /)]);
    }
    expect(seen).toEqual([]);
  });

  test("allowed: the connection goes to the address the resolver gave (once), and the answer is read", async () => {
    lookups.length = 0;
    answer = (_req, res) => res.writeHead(200, { "Content-Type": "text/plain" }).end("thanks");
    const res = await post(`http://hooks.rebind.test:${port}/hook`, opts(true));
    expect(res).toEqual({ statusCode: 200, error: null, responseExcerpt: "thanks", permanent: false });
    expect(lookups).toEqual(["hooks.rebind.test"]);
    expect(seen).toEqual(["POST /hook"]);
  });

  test("redirects are not followed", async () => {
    answer = (_req, res) => res.writeHead(302, { Location: `http://127.0.0.1:${port}/elsewhere` }).end();
    const res = await post(`http://127.0.0.1:${port}/hook`, opts(true));
    expect(res).toMatchObject({ statusCode: 302, error: "HTTP 302", permanent: false });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual(["POST /hook"]);
  });

  test("connect timeout (the lookup counts) and total timeout", async () => {
    const hanging: TargetPolicy = { allowPrivate: true, resolve: () => new Promise(() => undefined) };
    const t0 = Date.now();
    expect(await post(`http://hooks.slow.test:${port}/`, opts(true, { policy: hanging, connectTimeoutMs: 150 }))).toMatchObject({
      statusCode: null,
      error: "could not connect within 150 ms",
      permanent: false,
    });
    expect(Date.now() - t0).toBeLessThan(1000);
    answer = () => undefined; // never answers
    expect(await post(`http://127.0.0.1:${port}/`, opts(true, { timeoutMs: 200 }))).toMatchObject({ statusCode: null, error: "no answer within 200 ms" });
  });

  test("the delivery log keeps a short text excerpt of the answer, never a binary one", async () => {
    const body = `<html><body><h1>Oops</h1>\u0007\r\n<p>${"x".repeat(5000)}</p></body></html>`;
    answer = (_req, res) => res.writeHead(500, { "Content-Type": "text/html; charset=utf-8" }).end(body);
    const res = await post(`http://127.0.0.1:${port}/`, opts(true));
    expect(res.statusCode).toBe(500);
    expect(res.responseExcerpt).toMatch(/^Oops x+…$/);
    expect(Array.from(res.responseExcerpt!)).toHaveLength(200);

    answer = (_req, res) => res.writeHead(500, { "Content-Type": "application/octet-stream" }).end(Buffer.from([1, 2, 3, 0, 255]));
    expect((await post(`http://127.0.0.1:${port}/`, opts(true))).responseExcerpt).toBeNull();
  });
});

test("responseExcerpt: one line of text; control, invisible and bidi characters become spaces; a cut character is dropped", () => {
  expect(responseExcerpt("application/json", Buffer.from('{"error":"bad\\nthing"}\n\t'))).toBe('{"error":"bad\\nthing"}');
  expect(responseExcerpt("text/plain", Buffer.from("a\u202eb\u200bc\u0000d\r\ne"))).toBe("a b c d e");
  expect(responseExcerpt("text/plain", Buffer.from(""))).toBeNull();
  expect(responseExcerpt("image/png", Buffer.from("PNG"))).toBeNull();
  expect(responseExcerpt(undefined, Buffer.from("plain words"))).toBe("plain words");
  expect(responseExcerpt(undefined, Buffer.from([0x41, 0, 0x42]))).toBeNull();
  const euro = Buffer.from("price: €");
  expect(responseExcerpt("text/plain", euro.subarray(0, euro.length - 1))).toBe("price:");
});
