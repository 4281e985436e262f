import type { ServiceBroker } from "moleculer";
import type { BroadcastOf, BusBroadcasts } from "./bus";

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
