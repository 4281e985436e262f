/**
 * The operator token and the admin API's throttle (docs/security.md): a token
 * shorter than 32 characters stops the gateway at start; failed tokens and
 * requests are limited per client address, and an address past its failed
 * attempts is refused before its token is compared.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { requestFrom } from "../support/from-address";
import { freePort, startNode, stopNode } from "../support/processes";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";

const rateLimited = (message: RegExp) => ({ error: { type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.stringMatching(message) } });

describe("throttle per client address", () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem({ env: { ADMIN_AUTH_FAILURES_PER_MINUTE: "3", ADMIN_RATE_LIMIT_PER_MINUTE: "40" } });
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const admin = (from: string, token: string) => requestFrom(sys.baseUrl, from, "GET", "/api/admin/outbox", { headers: { Authorization: `Bearer ${token}` } });

  test("after 3 wrong tokens an address is refused, even with the right token; other addresses are not", async () => {
    const guesser = "127.0.0.41";
    for (let i = 0; i < 3; i++) expect((await admin(guesser, `${ADMIN_TOKEN}-${i}`)).status).toBe(401);
    for (const token of ["another guess", ADMIN_TOKEN]) {
      const res = await admin(guesser, token);
      expect({ status: res.status, body: res.body }).toEqual({ status: 429, body: rateLimited(/^Too many failed operator-token attempts from this client address\. Retry after \d+ s\.$/) });
      expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    }
    expect((await admin("127.0.0.42", ADMIN_TOKEN)).status).toBe(200);
  });

  test("every address has a request rate on the admin API", async () => {
    const busy = "127.0.0.43";
    const statuses: number[] = [];
    for (let i = 0; i < 41; i++) statuses.push((await admin(busy, ADMIN_TOKEN)).status);
    expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
    const last = await admin(busy, ADMIN_TOKEN);
    expect({ status: last.status, body: last.body }).toEqual({ status: 429, body: rateLimited(/^Too many admin API requests from this client address\./) });
    expect((await admin("127.0.0.44", ADMIN_TOKEN)).status).toBe(200);
  });
});

describe("operator token length", () => {
  test("a gateway given an ADMIN_TOKEN shorter than 32 characters does not start, and says why", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "short-token-"));
    const node = startNode("short-token", {
      DATABASE_URL: "pglite://memory",
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      ADMIN_TOKEN: "x".repeat(31),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
    });
    try {
      const exit = await Promise.race([node.exited, new Promise<null>((r) => setTimeout(() => r(null), 60_000).unref())]);
      expect(exit?.code).not.toBe(0);
      expect(node.output.join("\n")).toMatch(/The operator token from ADMIN_TOKEN has 31 characters; it needs at least 32/);
    } finally {
      if (!node.exit) await stopNode(node);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
