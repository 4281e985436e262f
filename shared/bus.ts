import type { CallingOptions } from "moleculer";
import type { AccountsBroadcasts, AccountsContract } from "../services/accounts/contract";
import type { AttributionBroadcasts, AttributionContract } from "../services/attribution/contract";
import type { CommissionsContract } from "../services/commissions/contract";
import type { GatewayContract } from "../services/gateway/contract";
import type { NotificationsBroadcasts, NotificationsContract } from "../services/notifications/contract";
import type { ProcessorContract } from "../services/processor/contract";
import type { PortalContract } from "../services/portal/contract";
import type { ProgramsBroadcasts, ProgramsContract } from "../services/programs/contract";
import type { SalesContract } from "../services/sales/contract";
import type { StatusContract } from "../services/status/contract";

/**
 * The typed bus: every action one service (or a background job, the CLI, the
 * REPL) calls on another goes through `call` below, so its name, params and
 * result are checked against the owner's contract (services/<name>/contract.ts).
 *
 * Rule (docs/architecture.md, "Seams"): a service never imports another
 * service's folder; it names the action here and gets its types from this map.
 * Only this file imports the contracts, and only as types, so no runtime
 * dependency between services appears.
 */

/** The services with storage: each has the `health` action of shared/service-storage.ts (it pings the database). */
export const STORAGE_SERVICES = ["programs", "attribution", "sales", "commissions", "notifications", "accounts", "processor"] as const;
export type StorageServiceName = (typeof STORAGE_SERVICES)[number];
type HealthContract = { [S in StorageServiceName as `${S}.health`]: { params: Record<string, never>; result: { ok: true } } };

/** Every action callable over the bus, by its full name: `{ params, result }`. */
export type BusContracts = AccountsContract &
  AttributionContract &
  CommissionsContract &
  GatewayContract &
  NotificationsContract &
  ProcessorContract &
  PortalContract &
  ProgramsContract &
  SalesContract &
  StatusContract &
  HealthContract;

export type ActionName = keyof BusContracts;
/** What the action's input schema accepts (`z.input`). */
export type ParamsOf<A extends ActionName> = BusContracts[A]["params"];
/** The action's answer as it arrives: JSON, so dates are ISO strings (`Jsonified`). Convert where a Date is needed. */
export type ResultOf<A extends ActionName> = BusContracts[A]["result"];

/** The events services broadcast for other processes' caches (docs/architecture.md, "Bus broadcasts"), by name: their payload. */
export type BusBroadcasts = AccountsBroadcasts & AttributionBroadcasts & NotificationsBroadcasts & ProgramsBroadcasts;
export type BroadcastOf<E extends keyof BusBroadcasts> = BusBroadcasts[E];

/** Anything that can call an action: a moleculer Context, or the ServiceBroker (background jobs, CLI, REPL). */
export interface BusCaller {
  call(actionName: string, params?: unknown, opts?: CallingOptions): Promise<unknown>;
}

/** Calls `action` with `params`, typed from its owner's contract. */
export function call<A extends ActionName>(caller: BusCaller, action: A, params: ParamsOf<A>, opts?: CallingOptions): Promise<ResultOf<A>> {
  return caller.call(action, params, opts) as Promise<ResultOf<A>>;
}

/** The `health` action of a storage service, for names found at run time (the health endpoints). */
export const healthAction = (service: StorageServiceName) => `${service}.health` as const;
