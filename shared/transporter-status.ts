import type { ServiceBroker } from "moleculer";

export type TransporterState = "in-process" | "connected" | "disconnected";

/**
 * Whether the broker's transporter reaches its server right now, for
 * readiness. Moleculer's NATS transporter keeps `transit.connected` true
 * while its client is reconnecting after losing the server (it only logs the
 * client's status events), so for NATS the client is asked: `rtt()` fails at
 * once while disconnected and otherwise makes a PING/PONG round trip.
 * Other transporters keep Moleculer's own flag.
 */
export async function transporterState(broker: ServiceBroker, timeoutMs = 2000): Promise<TransporterState> {
  const transit = broker.transit;
  if (!transit) return "in-process";
  if (!transit.connected) return "disconnected";
  const client = (transit.tx as unknown as { client?: { rtt?: () => Promise<number> } } | undefined)?.client;
  if (typeof client?.rtt !== "function") return "connected";
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.rtt(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no PONG")), timeoutMs);
      }),
    ]);
    return "connected";
  } catch {
    return "disconnected";
  } finally {
    clearTimeout(timer);
  }
}
