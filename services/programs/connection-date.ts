import type { ProcessorConnection } from "./repository";

/** An update of a program's processor connection; `connectedAt` is when it connected, if this update connects it. */
export type ProcessorConnectionUpdate = Partial<Omit<ProcessorConnection, "connectedAt">> & { connectedAt?: Date };

/**
 * The connection date after an update (spec 2.4 `connectionDate`), for every
 * writer alike (admin API, `cli set-processor`, the processor's
 * `account.updated`):
 * - the first update that leaves the connection `connected` sets it, to the
 *   update's `connectedAt` when given (the processor event's time), else `now`;
 * - every later update keeps that first date, even across a disconnect and a
 *   reconnect of the same account;
 * - linking a different account is a new connection: its date starts over.
 */
export function connectedAtAfter(current: ProcessorConnection, update: ProcessorConnectionUpdate, now: Date): Date | null {
  const otherAccount = update.accountId != null && current.accountId !== null && update.accountId !== current.accountId;
  const kept = otherAccount ? null : current.connectedAt;
  if (kept) return kept;
  const status = update.connectionStatus ?? current.connectionStatus;
  return status === "connected" ? (update.connectedAt ?? now) : null;
}
