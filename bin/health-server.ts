/**
 * Liveness and readiness of one process, for orchestrators, on HEALTH_PORT
 * (off when unset). Every process can run it, including those without the
 * gateway (the gateway's own /api/health and /api/health/live are on its HTTP
 * port):
 *
 *   GET /live   200 while the broker runs (no dependency is checked)
 *   GET /ready  200 when the broker is started (not starting or stopping), connected to its
 *               transporter, and every local service with a `health` action
 *               answers it (so its database does); 503 otherwise
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ServiceBroker } from "moleculer";
import type { StorageServiceName } from "../shared/service-storage";
import { call, healthAction } from "../services/bus";
import { transporterState } from "../shared/transporter-status";

export interface ProcessHealth {
  status: "ok" | "unavailable" | "starting" | "stopping";
  nodeID: string;
  transporter: "connected" | "disconnected" | "in-process";
  services: Record<string, "ok" | "unavailable">;
}

type BrokerState = ServiceBroker & { stopping?: boolean; started?: boolean };

/** Readiness of this process's own services (each `health` action called on this node). */
export async function processReadiness(broker: ServiceBroker): Promise<ProcessHealth> {
  const b = broker as BrokerState;
  // Asks the NATS client itself (Moleculer's flag stays true while it reconnects), like the gateway's /api/health.
  const transporter = await transporterState(broker);
  const phase = b.stopping === true ? "stopping" : b.started !== true ? "starting" : null;
  // Each storage service's `health` pings its database; the gateway's checks the whole system and is left to /api/health.
  // Found at run time: every local service with the storage mixin's `health` action (typed as one of them).
  const local = phase ? [] : broker.services.filter((s) => !s.name.startsWith("$") && s.name !== "gateway" && s.actions && "health" in s.actions).map((s) => s.name as StorageServiceName);
  const checks = await Promise.all(
    local.map(async (name) => {
      try {
        await call(broker, healthAction(name), {}, { nodeID: broker.nodeID, timeout: 2000 });
        return [name, "ok"] as const;
      } catch {
        return [name, "unavailable"] as const;
      }
    }),
  );
  const ok = !phase && transporter !== "disconnected" && checks.every(([, s]) => s === "ok");
  return { status: phase ?? (ok ? "ok" : "unavailable"), nodeID: broker.nodeID, transporter, services: Object.fromEntries(checks) };
}

/** Starts the health listener; resolves with its server once listening. */
export function startHealthServer(broker: ServiceBroker, port: number, host = "0.0.0.0"): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, { status: "method_not_allowed" });
    if (path === "/live") return send(200, { status: "ok", nodeID: broker.nodeID, uptimeSeconds: Math.round(process.uptime()) });
    if (path === "/ready") {
      processReadiness(broker).then(
        (r) => send(r.status === "ok" ? 200 : 503, r),
        () => send(503, { status: "unavailable", nodeID: broker.nodeID }),
      );
      return;
    }
    send(404, { status: "not_found", endpoints: ["/live", "/ready"] });
  });
  // Never keep the process alive on its own, nor hold a shutdown.
  server.unref();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      broker.logger.info(`Health endpoints on http://${host}:${bound}/live and /ready`);
      resolve(server);
    });
  });
}
