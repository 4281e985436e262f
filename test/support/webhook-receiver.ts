import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookSignature } from "../../shared/webhook-signature";

export interface ReceivedEvent {
  path: string;
  /** The Svc-Event-Id header. */
  eventId: string;
  type: string;
  body: any;
  verified: boolean;
}

/**
 * A merchant's receiving HTTP server, as the docs describe one: it verifies
 * each request's signature on the raw body with the endpoint's secret and
 * answers 200 (400 when the signature does not verify).
 */
export class WebhookReceiver {
  readonly requests: ReceivedEvent[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly server = http.createServer((req, res) => this.handle(req, res));
  url = "";

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  route(p: string, secret: string): void {
    this.secrets.set(p, secret);
  }

  on(p: string): ReceivedEvent[] {
    return this.requests.filter((r) => r.path === p);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const p = req.url ?? "";
      const secret = this.secrets.get(p);
      const verified = secret !== undefined && verifyWebhookSignature({ secret, body: raw, header: String(req.headers["svc-signature"] ?? "") }).ok;
      this.requests.push({
        path: p,
        eventId: String(req.headers["svc-event-id"] ?? ""),
        type: String(req.headers["svc-event-type"] ?? ""),
        body: JSON.parse(raw.toString("utf8")),
        verified,
      });
      res.writeHead(verified ? 200 : 400).end();
    });
  }
}
