import type { ServiceBroker } from "moleculer";
import type { StorageServiceName } from "../shared/service-storage";
import { typedCall } from "../shared/typed-call";
import type { AccountsBroadcasts, AccountsContract } from "./accounts/contract";
import type { AttributionBroadcasts, AttributionContract } from "./attribution/contract";
import type { CommissionsContract } from "./commissions/contract";
import type { GatewayContract } from "./gateway/contract";
import type { NotificationsBroadcasts, NotificationsContract } from "./notifications/contract";
import type { ProcessorContract } from "./processor/contract";
import type { PortalContract } from "./portal/contract";
import type { ProgramsBroadcasts, ProgramsContract } from "./programs/contract";
import type { RewardsBroadcasts, RewardsContract } from "./rewards/contract";
import type { SalesContract } from "./sales/contract";
import type { StatusContract } from "./status/contract";

/**
 * The bus map: every service's contract (services/<name>/contract.ts) joined,
 * above the services' folders. The services (services/<name>.service.ts), the
 * REPL, the CLI and the health server call any action through `call` below,
 * its name, params and result checked against the owner's contract. A module
 * inside a service's folder that calls other services types its own `call`
 * with just the contracts it uses (shared/typed-call.ts), so nothing below
 * this file imports it and the import graph has no cycle.
 *
 * Rule (docs/architecture.md, "Seams"): a service never imports another
 * service's code; it names the action and gets its types from the owner's
 * contract, imported only as types, so no runtime dependency between services
 * appears.
 */

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
  RewardsContract &
  SalesContract &
  StatusContract &
  HealthContract;

export type ActionName = keyof BusContracts;
/** What the action's input schema accepts (`z.input`). */
export type ParamsOf<A extends ActionName> = BusContracts[A]["params"];
/** The action's answer as it arrives: JSON, so dates are ISO strings (`Jsonified`). Convert where a Date is needed. */
export type ResultOf<A extends ActionName> = BusContracts[A]["result"];

/** Calls `action` with `params`, typed from its owner's contract. */
export const call = typedCall<BusContracts>();

/** The `health` action of a storage service, for names found at run time (the health endpoints). */
export const healthAction = (service: StorageServiceName) => `${service}.health` as const;

/** The events services broadcast for other processes' caches (docs/architecture.md, "Bus broadcasts"), by name: their payload. */
export type BusBroadcasts = AccountsBroadcasts & AttributionBroadcasts & NotificationsBroadcasts & ProgramsBroadcasts & RewardsBroadcasts;
export type BroadcastOf<E extends keyof BusBroadcasts> = BusBroadcasts[E];

/** How long a sign-out or a decision waits for the other processes' acknowledgement before answering anyway. */
const CONFIRM_TIMEOUT_MS = 1000;

/**
 * Broadcasts an event that other processes' caches act on (a signed-out
 * session, a changed role, an approved partner), and returns once every
 * process listening to it has handled it, so the change is seen by every
 * gateway on the caller's very next request, wherever it lands.
 *
 * A broadcast alone only says the event was handed to the transporter: the
 * answer could reach the client, and the client's next request reach another
 * gateway, before that gateway read the event. So each remote listener is
 * then pinged: over one transporter connection a node receives our event
 * before our ping and handles it first (the cache handlers are synchronous),
 * so its pong means the entry is gone. A node that does not answer within
 * CONFIRM_TIMEOUT_MS (cut off, dying) is left to its cache's TTL.
 */
export async function broadcastConfirmed<E extends keyof BusBroadcasts>(broker: ServiceBroker, event: E, payload: BroadcastOf<E>): Promise<void> {
  await broker.broadcast(event, payload);
  if (!broker.transit) return;
  const listeners = (broker.getEventListeners(event) as Array<{ id: string; local: boolean }>).filter((e) => !e.local).map((e) => e.id);
  if (listeners.length) await broker.ping([...new Set(listeners)], CONFIRM_TIMEOUT_MS);
}
