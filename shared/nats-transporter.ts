import { Transporters, type BrokerOptions } from "moleculer";

interface NatsClient {
  publish(subject: string, data: Uint8Array): void;
  isClosed(): boolean;
  info?: { max_payload?: number };
}

/**
 * Moleculer's NATS transporter, with the messages a process publishes in one
 * event-loop turn written to the socket together.
 *
 * The nats client flushes its outbound buffer in a microtask, so every
 * message published from its own I/O callback (one per HTTP request at the
 * gateway, one per reply at a service) costs a socket write of its own: at
 * saturation those writes were 12-15 % of a process's CPU and most of
 * nats-server's. Publishing from a setImmediate queue lets everything a turn
 * produced share one write; at low load the cost is one loop turn (tens of
 * microseconds). Measured in docs/performance.md ("Third pass").
 *
 * What publish would refuse at once (a closed connection, a message above the
 * server's max_payload) is still refused at once, so the caller gets the error
 * rather than a timeout.
 */
export class CoalescingNatsTransporter extends Transporters.NATS {
  private queued: Array<[topic: string, data: Buffer]> = [];
  private flushScheduled = false;

  override send(topic: string, data: Buffer): Promise<void> {
    const client = this.client as NatsClient | null;
    if (!client) return Promise.resolve();
    if (client.isClosed()) return Promise.reject(new Error(`NATS connection is closed; '${topic}' was not sent.`));
    const maxPayload = client.info?.max_payload;
    if (maxPayload && data.length > maxPayload) {
      return Promise.reject(new Error(`Message on '${topic}' is ${data.length} bytes, above the NATS server's max_payload of ${maxPayload}.`));
    }
    this.queued.push([topic, data]);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.publishQueued());
    }
    return Promise.resolve();
  }

  override disconnect(): Promise<void> {
    // The DISCONNECT packet Moleculer sends first, and anything before it, leave with the connection's last flush.
    this.publishQueued();
    return super.disconnect();
  }

  private publishQueued(): void {
    this.flushScheduled = false;
    const queued = this.queued;
    if (queued.length === 0) return;
    this.queued = [];
    const client = this.client as NatsClient | null;
    for (const [topic, data] of queued) {
      try {
        client?.publish(topic, data);
      } catch (err) {
        // The connection closed within the turn: the caller's request times out or fails over like a lost reply.
        this.logger.warn(`NATS publish on '${topic}' failed: ${(err as Error).message}`);
      }
    }
  }
}

/**
 * The TRANSPORTER setting: NATS URLs get the coalescing transporter above,
 * anything else is handed to Moleculer as it is; unset keeps calls in-process.
 */
export function transporterFromEnv(value: string | undefined): BrokerOptions["transporter"] {
  if (!value) return null;
  if (/^nats:\/\//i.test(value.trim())) return new CoalescingNatsTransporter(value.trim());
  return value as BrokerOptions["transporter"];
}
