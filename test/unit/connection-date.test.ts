import { connectedAtAfter } from "../../services/programs/connection-date";
import type { ProcessorConnection } from "../../services/programs/repository";

const now = new Date("2026-06-01T12:00:00.000Z");
const first = new Date("2026-05-01T08:00:00.000Z");
const eventTime = new Date("2026-05-20T10:00:00.000Z");

const connection = (over: Partial<ProcessorConnection> = {}): ProcessorConnection => ({
  connectionStatus: "not_connected",
  accountId: null,
  chargesEnabled: false,
  payoutsEnabled: false,
  detailsSubmitted: false,
  connectedAt: null,
  ...over,
});

describe("connectedAtAfter", () => {
  it("stays null while the connection is not connected", () => {
    expect(connectedAtAfter(connection(), { connectionStatus: "onboarding", accountId: "acct_1" }, now)).toBeNull();
    expect(connectedAtAfter(connection({ connectionStatus: "restricted" }), { detailsSubmitted: true }, now)).toBeNull();
    // A date given with an update that does not connect is not a connection date.
    expect(connectedAtAfter(connection(), { connectionStatus: "restricted", connectedAt: eventTime }, now)).toBeNull();
  });

  it("the first update that connects sets it: to the given time, else now", () => {
    expect(connectedAtAfter(connection(), { connectionStatus: "connected" }, now)).toEqual(now);
    expect(connectedAtAfter(connection(), { connectionStatus: "connected", connectedAt: eventTime }, now)).toEqual(eventTime);
    // Already connected (status set before dates were recorded) and another field changes: the date is filled in.
    expect(connectedAtAfter(connection({ connectionStatus: "connected" }), { payoutsEnabled: true }, now)).toEqual(now);
  });

  it("later updates keep the first date, whatever they say", () => {
    const connected = connection({ connectionStatus: "connected", accountId: "acct_1", connectedAt: first });
    expect(connectedAtAfter(connected, { connectionStatus: "connected", connectedAt: eventTime }, now)).toEqual(first);
    expect(connectedAtAfter(connected, { connectionStatus: "connected", accountId: "acct_1" }, now)).toEqual(first);
    expect(connectedAtAfter(connected, { chargesEnabled: true }, now)).toEqual(first);
  });

  it("a disconnect and a reconnect of the same account keep the first date", () => {
    const disconnected = connection({ connectionStatus: "disconnected", accountId: "acct_1", connectedAt: first });
    expect(connectedAtAfter(connection({ connectionStatus: "connected", accountId: "acct_1", connectedAt: first }), { connectionStatus: "disconnected" }, now)).toEqual(first);
    expect(connectedAtAfter(disconnected, { connectionStatus: "connected" }, now)).toEqual(first);
  });

  it("linking an account to a connection without one is the same connection", () => {
    const connected = connection({ connectionStatus: "connected", connectedAt: first });
    expect(connectedAtAfter(connected, { accountId: "acct_1" }, now)).toEqual(first);
  });

  it("another account is a new connection: its own date, or none until it connects", () => {
    const connected = connection({ connectionStatus: "connected", accountId: "acct_1", connectedAt: first });
    expect(connectedAtAfter(connected, { accountId: "acct_2" }, now)).toEqual(now);
    expect(connectedAtAfter(connected, { accountId: "acct_2", connectionStatus: "onboarding" }, now)).toBeNull();
  });
});
