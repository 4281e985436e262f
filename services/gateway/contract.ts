import type { ParamsOf, ResultOf, StorageServiceName } from "../../shared/bus";

/**
 * The gateway's own actions (reached over HTTP only; listed so every service
 * has its contract). Results are as the bus delivers them.
 */
export interface GatewayContract {
  /** The session token goes into a cookie, never into the body. */
  "gateway.login": { params: ParamsOf<"accounts.login">; result: { success: true; user: ResultOf<"accounts.login">["user"] } };
  "gateway.logout": { params: Record<string, never>; result: { success: true } };
  /** The partner session token goes into the svc_partner_session cookie, never into the body. */
  "gateway.partnerSignIn": { params: ParamsOf<"accounts.signInPartner">; result: { success: true; partnerId: number } };
  "gateway.partnerSignOut": { params: Record<string, never>; result: { success: true } };
  /** The raw body (`body`, a Buffer from the raw body parser); the signature comes from `ctx.meta`. */
  "gateway.processorWebhook": { params: { body?: Buffer }; result: ResultOf<"processor.handleWebhook"> };
  "gateway.live": { params: Record<string, never>; result: { status: "ok"; nodeID: string; uptimeSeconds: number } };
  "gateway.health": {
    params: Record<string, never>;
    result: { status: "ok" | "unavailable" | "stopping"; transporter: string; services: Partial<Record<StorageServiceName, "ok" | "unavailable">> };
  };
}
