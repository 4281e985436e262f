import type { StorageServiceName } from "../../shared/service-storage";
import type { AccountsContract } from "../accounts/contract";
import type { ProcessorContract } from "../processor/contract";

/**
 * The gateway's own actions (reached over HTTP only; listed so every service
 * has its contract). Results are as the bus delivers them.
 */
export interface GatewayContract {
  /** The session token goes into a cookie, never into the body. */
  "gateway.login": { params: AccountsContract["accounts.login"]["params"]; result: { success: true; user: AccountsContract["accounts.login"]["result"]["user"] } };
  "gateway.logout": { params: Record<string, never>; result: { success: true } };
  /** The partner session token goes into the svc_partner_session cookie, never into the body. */
  "gateway.partnerSignIn": { params: AccountsContract["accounts.signInPartner"]["params"]; result: { success: true; partnerId: number } };
  "gateway.partnerSignOut": { params: Record<string, never>; result: { success: true } };
  /**
   * The raw body (`body`, a Buffer from the raw body parser) and, on a program's own endpoint, the path's `programId`
   * (text, as routed); the signature comes from `ctx.meta`.
   */
  "gateway.processorWebhook": { params: { body?: Buffer; params?: { programId?: string } }; result: ProcessorContract["processor.handleWebhook"]["result"] };
  "gateway.paddleWebhook": { params: { body?: Buffer; params?: { programId?: string } }; result: ProcessorContract["processor.handlePaddleWebhook"]["result"] };
  "gateway.live": { params: Record<string, never>; result: { status: "ok"; nodeID: string; uptimeSeconds: number } };
  "gateway.health": {
    params: Record<string, never>;
    result: { status: "ok" | "unavailable" | "stopping"; transporter: string; services: Partial<Record<StorageServiceName, "ok" | "unavailable">> };
  };
}
