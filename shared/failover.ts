/**
 * Losing a node without waiting for the heartbeat timeout (NATS only).
 *
 * Moleculer learns that a node died without saying goodbye (kill -9, a crash,
 * the OOM killer) only when its heartbeats stop: `heartbeatTimeout`, 15 s.
 * Until then the balancer keeps sending it calls, and each one waits for the
 * request timeout. NATS knows at once: the dead process's connection closes,
 * its subscriptions go, and a NATS request to a subject nobody subscribes to
 * is answered "no responders" straight away.
 *
 * So when a call to a remote node is still unanswered after `probeAfterMs`,
 * this middleware asks NATS whether the node still subscribes to its own
 * PING subject (a real Moleculer PING, so a live node just answers PONG). No
 * responders: the node is gone, and it is removed from the registry exactly
 * as the heartbeat timeout would remove it, which rejects its pending calls
 * with REQUEST_REJECTED and sends new calls to the other instances. A call to
 * an action marked `idempotent: true` that was rejected that way is sent again
 * to another instance (up to `retries` times); any other call fails with
 * REQUEST_REJECTED, which the gateway answers 503 with Retry-After.
 *
 * A node that is alive but slow still subscribes, so the probe times out and
 * nothing happens. Just after this process reconnects to NATS, other nodes
 * may not have subscribed again yet, so "no responders" is not believed for
 * `settleMs` after a reconnect. The heartbeat timeout stays the backstop for
 * what NATS cannot see (a host that vanished without closing its sockets).
 * docs/reliability.md ("Losing a node") has the measurements.
 */
import { Transporters, type Context, type Middleware, type ServiceBroker } from "moleculer";
import { countMetric, METRICS } from "./metrics";

export interface FailoverOptions {
  /** A remote call unanswered for this long makes its node be probed. */
  probeAfterMs: number;
  /** How long a probe waits; a live node never answers on the NATS reply subject, so this is how long "alive" takes. */
  probeTimeoutMs: number;
  /** "No responders" is not believed this long after this process's own NATS connection came back. */
  settleMs: number;
  /** How many times an idempotent call rejected because its node was lost is sent again. */
  retries: number;
}

interface NatsClient {
  request(subject: string, data: Uint8Array, opts: { timeout: number }): Promise<unknown>;
  status(): AsyncIterable<{ type: string }>;
}

interface NatsTransporter {
  client?: NatsClient;
  getTopicName(cmd: string, nodeID?: string): string;
  serialize(packet: { type: string; payload: Record<string, unknown> }): Buffer;
}

interface NodeCatalog {
  get(nodeID: string): { available: boolean } | undefined;
  disconnected(nodeID: string, unexpected: boolean): void;
}

type FailoverContext = Context & { _failoverAttempts?: number };

export function failoverOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): FailoverOptions {
  const num = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, not '${env[name]}'.`);
    return value;
  };
  return {
    probeAfterMs: num("FAILOVER_PROBE_AFTER_MS", 500),
    probeTimeoutMs: num("FAILOVER_PROBE_TIMEOUT_MS", 1000),
    settleMs: num("FAILOVER_SETTLE_MS", 10_000),
    retries: num("FAILOVER_RETRIES", 2),
  };
}

export function failoverMiddleware(opts: FailoverOptions = failoverOptionsFromEnv()): Middleware {
  let broker: ServiceBroker;
  const probes = new Map<string, Promise<void>>();
  /** Changes whenever this process's NATS connection drops or comes back. */
  let connectionEpoch = 0;
  let reconnectedAt = 0;

  const natsTransporter = (): (NatsTransporter & { client: NatsClient }) | null => {
    // NATS only: "no responders" is a NATS answer (other transporters' clients may have a request() of their own).
    const tx = broker.transit?.tx as unknown as NatsTransporter | undefined;
    if (!(tx instanceof Transporters.NATS) || typeof tx.client?.request !== "function") return null;
    return tx as NatsTransporter & { client: NatsClient };
  };
  const nodes = () => (broker.registry as unknown as { nodes: NodeCatalog }).nodes;

  async function probe(nodeID: string, tx: NatsTransporter & { client: NatsClient }): Promise<void> {
    const epoch = connectionEpoch;
    const ping = tx.serialize({ type: "PING", payload: { time: Date.now(), id: broker.generateUid() } });
    try {
      await tx.client.request(tx.getTopicName("PING", nodeID), ping, { timeout: opts.probeTimeoutMs });
    } catch (err) {
      // Anything but "no responders" (a timeout: the node subscribes, so it lives) leaves the node alone.
      if (String((err as { code?: unknown }).code) !== "503") return;
      if (epoch !== connectionEpoch || Date.now() - reconnectedAt < opts.settleMs) return;
      if (!nodes().get(nodeID)?.available) return;
      broker.logger.warn(`Node '${nodeID}' is gone (NATS: no subscriber left for it); removing it now rather than at the heartbeat timeout.`);
      nodes().disconnected(nodeID, true);
      countMetric(broker, METRICS.failoverNodesRemoved);
    }
  }

  function probeSoon(nodeID: string): void {
    if (probes.has(nodeID)) return;
    const tx = natsTransporter();
    if (!tx || !nodes().get(nodeID)?.available) return;
    const running = probe(nodeID, tx)
      .catch((err) => broker.logger.debug(`Probing node '${nodeID}' failed.`, err))
      .finally(() => probes.delete(nodeID));
    probes.set(nodeID, running);
  }

  return {
    name: "Failover",

    created(this: ServiceBroker, b: ServiceBroker) {
      broker = b ?? this;
    },

    started() {
      // Shown as 0 from the start, so alerts on its increase work from the first removal.
      countMetric(broker, METRICS.failoverNodesRemoved, undefined, 0);
      const client = natsTransporter()?.client;
      if (!client) return;
      void (async () => {
        for await (const status of client.status()) {
          if (status.type === "disconnect" || status.type === "reconnect") connectionEpoch += 1;
          if (status.type === "reconnect") reconnectedAt = Date.now();
        }
      })().catch(() => undefined);
    },

    remoteAction(next: (ctx: Context) => Promise<unknown>, action: { name: string; idempotent?: boolean }) {
      const idempotent = action.idempotent === true;
      return function failover(ctx: FailoverContext): Promise<unknown> {
        const nodeID = ctx.nodeID;
        const timer = nodeID && opts.probeAfterMs > 0 ? setTimeout(() => probeSoon(nodeID), opts.probeAfterMs) : undefined;
        timer?.unref();
        return next(ctx).then(
          (result) => {
            clearTimeout(timer);
            return result;
          },
          (err: { type?: string }) => {
            clearTimeout(timer);
            const attempts = ctx._failoverAttempts ?? 0;
            // Sent again only when the node was lost (so no answer can still come), the action is safe to repeat,
            // and the caller did not ask for that very node.
            if (err?.type !== "REQUEST_REJECTED" || !idempotent || attempts >= opts.retries || ctx.options?.nodeID) throw err;
            broker.logger.warn(`'${action.name}' was lost with node '${nodeID}'; sending it to another instance (attempt ${attempts + 2}).`);
            countMetric(broker, METRICS.failoverRetries, { action: action.name });
            const again = ctx.copy() as FailoverContext;
            again._failoverAttempts = attempts + 1;
            return broker.call(action.name, ctx.params, { ctx: again } as never);
          },
        );
      };
    },
  } as unknown as Middleware;
}

declare module "moleculer/src/service" {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ActionSchema<TThis> {
    /** Safe to run twice: a caller whose call was lost with its node sends it to another instance (shared/failover.ts). */
    idempotent?: boolean;
  }
}
