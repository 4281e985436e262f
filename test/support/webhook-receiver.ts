import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookSignature } from "../../shared/webhook-signature";

/**
 * How a route answers a verified request: "ok" applies the event once per Svc-Event-Id and answers 200;
 * "fail-first" applies it, then answers 500 the first time (a receiver that crashed after its work: the retry
 * must not apply it again); "always-500" never applies it; "hang-first" never answers the first time (the
 * sender's timeout ends it), then applies it.
 */
export type ReceiverBehaviour = "ok" | "fail-first" | "always-500" | "hang-first";

export interface ReceivedEvent {
  path: string;
  /** The Svc-Event-Id header. */
  eventId: string;
  type: string;
  body: any;
  /** The Svc-Signature header. */
  signature: string;
  verified: boolean;
  answered: number | "hung";
}

/**
 * A merchant's receiving HTTP server, as the docs describe one: it verifies
 * each request's signature on the raw body with the endpoint's secret
 * (400 when it does not verify), then applies the event once per
 * Svc-Event-Id (counted in `effects`) and answers as its route's behaviour says.
 */
export class WebhookReceiver {
  readonly requests: ReceivedEvent[] = [];
  /** "path eventId" to the times the event was applied. */
  readonly effects = new Map<string, number>();
  private readonly routes = new Map<string, { secret: string; behaviour: ReceiverBehaviour }>();
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

  route(p: string, secret: string, behaviour: ReceiverBehaviour = "ok"): void {
    this.routes.set(p, { secret, behaviour });
  }

  on(p: string): ReceivedEvent[] {
    return this.requests.filter((r) => r.path === p);
  }

  /** Event id to the times it was applied, for one path. */
  effectsOn(p: string): Map<string, number> {
    return new Map([...this.effects].filter(([k]) => k.startsWith(`${p} `)).map(([k, v]) => [k.slice(p.length + 1), v]));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const p = req.url ?? "";
      const route = this.routes.get(p);
      const signature = String(req.headers["svc-signature"] ?? "");
      const verified = route !== undefined && verifyWebhookSignature({ secret: route.secret, body: raw, header: signature }).ok;
      const eventId = String(req.headers["svc-event-id"] ?? "");
      const request: ReceivedEvent = {
        path: p,
        eventId,
        type: String(req.headers["svc-event-type"] ?? ""),
        body: JSON.parse(raw.toString("utf8")),
        signature,
        verified,
        answered: 0,
      };
      this.requests.push(request);
      const answer = (status: number) => {
        request.answered = status;
        res.writeHead(status).end();
      };
      if (!route || !verified) return answer(400);
      const key = `${p} ${eventId}`;
      const firstTime = !this.effects.has(key);
      switch (route.behaviour) {
        case "always-500":
          return answer(500);
        case "hang-first":
          if (firstTime) {
            this.effects.set(key, 0); // seen, not applied
            request.answered = "hung";
            return; // never answers: the sender's timeout ends it
          }
          this.effects.set(key, (this.effects.get(key) ?? 0) + 1);
          return answer(200);
        case "ok":
        case "fail-first":
          if (firstTime) this.effects.set(key, 1); // the event's one effect
          return answer(firstTime && route.behaviour === "fail-first" ? 500 : 200);
      }
    });
  }
}
