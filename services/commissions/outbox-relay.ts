// The relay is shared by every outbox (shared/outbox/relay.ts); commissions keeps this name for its callers.
export { OutboxRelay, type OutboxRelayOptions } from "../../shared/outbox/relay";
