/**
 * The dashboard's Stripe screen (docs/processor-webhooks.md, "Set-up for a merchant"): what to configure at Stripe,
 * the program's connection (owned by programs), its secrets' state and its newest event.
 */
import { PADDLE_WEBHOOK_EVENTS, PROCESSOR_WEBHOOK_EVENTS, PROCESSOR_WEBHOOK_PATH, paddleWebhookPath, programWebhookPath } from "../../shared/processor-webhook-events";
import type { ProgramsContract } from "../programs/contract";
import { apiKeyState, keyHint } from "./api-key";
import type { LastProcessorEvent, PaddleConnectionView, ProcessorConnectionView, WebhookSecretState } from "./contract";
import type { PaddleConnection, ProcessorApiKey, ProcessorEvent, ProcessorWebhookSecret } from "./repository";

type Program = ProgramsContract["programs.get"]["result"];

export function webhookSecretState(programId: number, secret: ProcessorWebhookSecret | null): WebhookSecretState {
  return { programId, configured: secret !== null, hint: secret ? keyHint(secret.signingSecret) : null, setAt: secret ? secret.setAt.toISOString() : null };
}

export function lastEventView(event: ProcessorEvent | null): LastProcessorEvent | null {
  if (!event) return null;
  return {
    id: event.eventId,
    type: event.type,
    status: event.status,
    receivedAt: event.receivedAt.toISOString(),
    processedAt: event.processedAt?.toISOString() ?? null,
    attempts: event.attempts,
    outcome: event.outcome,
    lastError: event.lastError,
  };
}

export function connectionView(
  program: Program,
  state: { secret: ProcessorWebhookSecret | null; connectSecret: ProcessorWebhookSecret | null; platformWebhooks: boolean; apiKey: ProcessorApiKey | null; lastEvent: ProcessorEvent | null },
): ProcessorConnectionView {
  const p = program.processor;
  return {
    programId: program.id,
    webhookPath: programWebhookPath(program.id),
    platformWebhookPath: state.platformWebhooks ? PROCESSOR_WEBHOOK_PATH : null,
    requiredEvents: [...PROCESSOR_WEBHOOK_EVENTS.required],
    optionalEvents: [...PROCESSOR_WEBHOOK_EVENTS.optional],
    payoutEvents: [...PROCESSOR_WEBHOOK_EVENTS.payouts],
    connection: {
      status: p.connectionStatus,
      accountId: p.accountId,
      chargesEnabled: p.chargesEnabled,
      payoutsEnabled: p.payoutsEnabled,
      detailsSubmitted: p.detailsSubmitted,
      connectedAt: p.connectedAt,
    },
    signingSecret: webhookSecretState(program.id, state.secret),
    connectSigningSecret: webhookSecretState(program.id, state.connectSecret),
    restrictedKey: apiKeyState(program.id, state.apiKey),
    lastEvent: lastEventView(state.lastEvent),
  };
}

/** The dashboard's Paddle screen (docs/processor-webhooks.md, "Paddle Billing"): hints of the keys, never the keys. */
export function paddleConnectionView(programId: number, c: PaddleConnection | null, lastEvent: ProcessorEvent | null): PaddleConnectionView {
  const secret = c?.secretKey && c.secretSetAt ? { programId, signingSecret: c.secretKey, setAt: c.secretSetAt } : null;
  const apiKey = c?.apiKey && c.apiKeySetAt ? { programId, apiKey: c.apiKey, setAt: c.apiKeySetAt, failedAt: c.apiKeyFailedAt, failure: c.apiKeyFailure } : null;
  return {
    programId,
    webhookPath: paddleWebhookPath(programId),
    requiredEvents: [...PADDLE_WEBHOOK_EVENTS.required],
    environment: c?.environment ?? "live",
    secretKey: webhookSecretState(programId, secret),
    apiKey: apiKeyState(programId, apiKey),
    lastEvent: lastEventView(lastEvent),
  };
}
