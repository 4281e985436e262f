/**
 * Spec 2.4 `connectionDate`: set when a program's processor connection first
 * becomes `connected`, kept on later updates, whoever writes the connection:
 * the admin API, `cli set-processor` or the processor's `account.updated`.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { deliver, event, processorId } from "../support/processor";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";

let sys: TestSystem;
let owner: { workspaceId: number; email: string; password: string };
let cookie: string;

beforeAll(async () => {
  sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: "whsec_test_secret" } });
  owner = await sys.dashboardUser("owner");
  cookie = await sys.login(owner.email, owner.password);
});
afterAll(() => sys.stop());

async function newProgram() {
  return (await sys.bootstrap({ workspaceId: owner.workspaceId, paymentTrackingMode: "processor_connect" })).programId;
}

async function payments(programId: number) {
  const res = await sys.http("GET", `/api/tracking/status/${programId}`, { headers: { Cookie: cookie } });
  expect(res.status).toBe(200);
  return res.body.data.statistics.payments as { processorConnectionStatus: string; isProcessorConnected: boolean; connectionDate: string | null };
}

const setProcessor = (programId: number, body: Record<string, unknown>) => sys.admin("PUT", `/programs/${programId}/processor`, body);

const cli = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join("node_modules", "tsx", "dist", "cli.mjs"), path.join("cli", "index.ts"), ...args], {
    env: { ...process.env, NODE_OPTIONS: "", ADMIN_URL: sys.baseUrl, ADMIN_TOKEN },
  });
  return JSON.parse(stdout);
};

/** An `account.updated` event for `account` at `seconds` (Unix time). */
const accountUpdated = (account: string, chargesEnabled: boolean, seconds: number) =>
  deliver(
    sys,
    event("account.updated", { id: account, object: "account", charges_enabled: chargesEnabled, payouts_enabled: chargesEnabled, details_submitted: true }, { account, created: seconds }),
  );

const secondsAgo = (s: number) => Math.floor(Date.now() / 1000) - s;
const isoAt = (seconds: number) => new Date(seconds * 1000).toISOString();

describe("admin API", () => {
  test("marking the connection connected sets the date; later updates keep it", async () => {
    const programId = await newProgram();
    await setProcessor(programId, { connectionStatus: "onboarding", accountId: processorId("acct") });
    expect((await payments(programId)).connectionDate).toBeNull();

    const before = Date.now();
    await setProcessor(programId, { connectionStatus: "connected", chargesEnabled: true });
    const after = Date.now();
    const { connectionDate, isProcessorConnected } = await payments(programId);
    expect(isProcessorConnected).toBe(true);
    expect(connectionDate).not.toBeNull();
    expect(Date.parse(connectionDate!)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(connectionDate!)).toBeLessThanOrEqual(after + 1000);
    expect((await sys.admin("GET", `/programs/${programId}`)).processor.connectedAt).toBe(connectionDate);

    // Marked connected again, with another date, or another field changed: the first date stays.
    await setProcessor(programId, { connectionStatus: "connected", connectedAt: "2030-01-01T00:00:00.000Z" });
    await setProcessor(programId, { payoutsEnabled: true });
    expect((await payments(programId)).connectionDate).toBe(connectionDate);

    // Disconnected: null (spec: null if not connected); connected again: the first date is back.
    await setProcessor(programId, { connectionStatus: "disconnected" });
    expect((await payments(programId)).connectionDate).toBeNull();
    await setProcessor(programId, { connectionStatus: "connected" });
    expect((await payments(programId)).connectionDate).toBe(connectionDate);
  });

  test("connectedAt given with the first connection is the date", async () => {
    const programId = await newProgram();
    await setProcessor(programId, { connectionStatus: "connected", connectedAt: "2026-05-06T07:08:09+02:00" });
    expect((await payments(programId)).connectionDate).toBe("2026-05-06T05:08:09.000Z");
  });

  test("connecting another account starts a new connection date", async () => {
    const programId = await newProgram();
    await setProcessor(programId, { connectionStatus: "connected", accountId: processorId("acct"), connectedAt: "2026-01-01T00:00:00.000Z" });
    await setProcessor(programId, { connectionStatus: "connected", accountId: processorId("acct"), connectedAt: "2026-02-01T00:00:00.000Z" });
    expect((await payments(programId)).connectionDate).toBe("2026-02-01T00:00:00.000Z");
  });

  test("a null or malformed connectedAt is a 400 and changes nothing", async () => {
    const programId = await newProgram();
    for (const connectedAt of [null, "yesterday", 1_700_000_000]) {
      const res = await sys.http("PUT", `/api/admin/programs/${programId}/processor`, { key: ADMIN_TOKEN, body: { connectionStatus: "connected", connectedAt } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: { code: "invalid_request", message: expect.stringContaining("connectedAt") } });
    }
    expect(await payments(programId)).toMatchObject({ processorConnectionStatus: "not_connected", connectionDate: null });
  });
});

describe("cli set-processor", () => {
  test("--status connected sets the date once; a later set-processor keeps it", async () => {
    const programId = await newProgram();
    const before = Date.now();
    const first = await cli("set-processor", "--program", String(programId), "--status", "connected", "--account-id", processorId("acct"));
    expect(first.processor.connectionStatus).toBe("connected");
    const connectedAt = first.processor.connectedAt;
    expect(Date.parse(connectedAt)).toBeGreaterThanOrEqual(before - 1000);

    await new Promise((r) => setTimeout(r, 20));
    const again = await cli("set-processor", "--program", String(programId), "--status", "connected", "--payouts-enabled");
    expect(again.processor).toMatchObject({ payoutsEnabled: true, connectedAt });
    expect((await payments(programId)).connectionDate).toBe(connectedAt);
  });
});

describe("account.updated", () => {
  test("the event that first connects the account sets the date to its time; later events keep it", async () => {
    const programId = await newProgram();
    const account = processorId("acct");
    await setProcessor(programId, { accountId: account, connectionStatus: "onboarding" });

    await accountUpdated(account, false, secondsAgo(300));
    expect((await payments(programId)).connectionDate).toBeNull();
    const connectedAt = secondsAgo(200);
    await accountUpdated(account, true, connectedAt);
    expect(await payments(programId)).toMatchObject({ isProcessorConnected: true, connectionDate: isoAt(connectedAt) });
    await accountUpdated(account, true, secondsAgo(100));
    expect((await payments(programId)).connectionDate).toBe(isoAt(connectedAt));

    // Charges disabled (restricted), then enabled again: still the first date.
    await accountUpdated(account, false, secondsAgo(50));
    expect((await payments(programId)).processorConnectionStatus).toBe("restricted");
    await accountUpdated(account, true, secondsAgo(10));
    expect((await payments(programId)).connectionDate).toBe(isoAt(connectedAt));
  });

  test("an operator's earlier connection date is kept when the processor reports the account connected", async () => {
    const programId = await newProgram();
    const account = processorId("acct");
    await setProcessor(programId, { accountId: account, connectionStatus: "connected", connectedAt: "2026-03-04T05:06:07.000Z" });
    await accountUpdated(account, true, secondsAgo(5));
    expect((await payments(programId)).connectionDate).toBe("2026-03-04T05:06:07.000Z");
  });
});
