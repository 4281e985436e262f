/**
 * The NATS transporter every process runs with TRANSPORTER=nats://...
 * (shared/nats-transporter.ts): messages published in one event-loop turn
 * share a socket write, without losing order, a refusal, or what is queued
 * when the broker stops. Two brokers over the real nats-server of NATS_URL.
 */
import { ServiceBroker, type Transporters } from "moleculer";
import { CoalescingNatsTransporter, transporterFromEnv } from "../../shared/nats-transporter";

const NATS_URL = process.env.NATS_URL;
if (!NATS_URL) console.warn("NATS TRANSPORTER TEST SKIPPED: NATS_URL is not set; the coalescing NATS transporter was NOT tested in this run.");
const describeNats = NATS_URL ? describe : describe.skip;

const namespace = `coalescing-${process.pid}-${Date.now()}`;
const broker = (nodeID: string) =>
  new ServiceBroker({ logger: false, namespace, nodeID, transporter: transporterFromEnv(NATS_URL), retryPolicy: { enabled: false }, requestTimeout: 10_000 });

/** nats.js internals: every write of the client's outbound buffer to the socket goes through transport.send. */
function countSocketWrites(b: ServiceBroker): { count: number } {
  const transport = ((b.transit!.tx as Transporters.NATS).client as { protocol: { transport: { send(frame: Uint8Array): void } } }).protocol.transport;
  const counter = { count: 0 };
  const send = transport.send.bind(transport);
  transport.send = (frame) => {
    counter.count++;
    send(frame);
  };
  return counter;
}

describeNats("CoalescingNatsTransporter over nats-server", () => {
  let server: ServiceBroker;
  let client: ServiceBroker;
  const received: number[] = [];

  beforeAll(async () => {
    server = broker("server");
    server.createService({
      name: "echo",
      actions: { twice: (ctx) => (ctx.params as { n: number }).n * 2 },
      events: { "echo.seen": (ctx) => void received.push((ctx.params as { n: number }).n) },
    });
    client = broker("client");
    await Promise.all([server.start(), client.start()]);
    await client.waitForServices("echo");
  });
  afterAll(async () => {
    await client?.stop();
    await server?.stop();
  });

  test("TRANSPORTER=nats://... selects it; other values go to Moleculer unchanged", () => {
    expect(transporterFromEnv("nats://127.0.0.1:4222")).toBeInstanceOf(CoalescingNatsTransporter);
    expect(transporterFromEnv("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
    expect(transporterFromEnv(undefined)).toBeNull();
  });

  test("requests made in one loop turn, each from its own callback, leave in one write and are all answered", async () => {
    const writes = countSocketWrites(client);
    // Like requests arriving on 100 sockets: each call is made from its own callback of the same loop phase,
    // so the nats client alone would flush once per callback.
    const calls = Array.from(
      { length: 100 },
      (_, n) => new Promise<number>((resolve, reject) => setImmediate(() => client.call<number, { n: number }>("echo.twice", { n }).then(resolve, reject))),
    );
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 100 }, (_, n) => n * 2));
    // Nothing else is sent meanwhile but a heartbeat or two.
    expect(writes.count).toBeLessThanOrEqual(3);
  });

  test("events keep their order", async () => {
    received.length = 0;
    for (let n = 0; n < 500; n++) {
      await (n % 50 === 0 ? new Promise((r) => setImmediate(r)) : undefined); // spread over several turns
      client.emit("echo.seen", { n });
    }
    await waitUntil(() => received.length === 500);
    expect(received).toEqual(Array.from({ length: 500 }, (_, n) => n));
  });

  test("a message above the server's max_payload is refused at once, not by the request timeout", async () => {
    const startedAt = Date.now();
    await expect(client.call("echo.twice", { n: 1, padding: "x".repeat(2 * 1024 * 1024) })).rejects.toThrow(/max_payload/);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    // The connection is unharmed.
    expect(await client.call("echo.twice", { n: 4 })).toBe(8);
  });

  test("what is queued when the broker stops is still sent, and the other node learns of the stop at once", async () => {
    const leaving = broker("leaving");
    await leaving.start();
    await leaving.waitForServices("echo");
    await waitUntil(() => server.registry.nodes.get("leaving")?.available === true);
    received.length = 0;
    leaving.emit("echo.seen", { n: 42 });
    await leaving.stop();
    await waitUntil(() => received.includes(42));
    await waitUntil(() => server.registry.nodes.get("leaving")?.available === false);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met within 5 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}
