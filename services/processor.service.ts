import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import Stripe from "stripe";
import { z } from "zod";
import type { Jsonified } from "../shared/dto";
import { AppError, ConflictError, ServiceUnavailableError } from "../shared/errors";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { parseInput } from "../shared/validation";
import { RetryLaterError, type EventHandler } from "./processor/handler";
import { handleAccountDeauthorized, handleAccountUpdated } from "./processor/handlers/account";
import { handleCheckoutSessionCompleted } from "./processor/handlers/checkout-session-completed";
import { handleDisputeClosed, handleDisputeCreated } from "./processor/handlers/disputes";
import { handleInvoicePaymentSucceeded } from "./processor/handlers/invoice-payment-succeeded";
import { handleChargeRefunded, handleRefundObject } from "./processor/handlers/refunds";
import { createProcessorRepository, type ProcessorRepository } from "./processor/repository";
import type { Program } from "./programs/repository";

/** The event types we act on; every other type is acknowledged and ignored. */
export const HANDLERS: Record<string, EventHandler> = {
  "checkout.session.completed": handleCheckoutSessionCompleted,
  "invoice.payment_succeeded": handleInvoicePaymentSucceeded,
  "charge.refunded": handleChargeRefunded,
  "refund.created": handleRefundObject,
  "refund.updated": handleRefundObject,
  "charge.dispute.created": handleDisputeCreated,
  "charge.dispute.closed": handleDisputeClosed,
  "account.updated": handleAccountUpdated,
  "account.application.deauthorized": handleAccountDeauthorized,
};

const WebhookInput = z.object({ payload: z.string().max(1_048_576), signature: z.string().max(4096).optional() });

type Vars = StorageVars<ProcessorRepository> & { webhookSecret?: string; liveMode: boolean; toleranceSeconds: number; leaseMs: number };

/**
 * Owns the processor's (Stripe Connect) webhooks: signature check, mapping of
 * the connected account to its program, a claim per event id (released when
 * processing fails, so the processor's retry is processed), and the handlers,
 * which act only through the owners' actions.
 */
const ProcessorService: ServiceSchema<ServiceSettingSchema, {}, Vars> = {
  name: "processor",
  mixins: [storageMixin(createProcessorRepository)],

  created() {
    this.webhookSecret = process.env.PROCESSOR_WEBHOOK_SECRET || undefined;
    this.liveMode = process.env.PROCESSOR_LIVEMODE !== "false";
    this.toleranceSeconds = Number(process.env.PROCESSOR_WEBHOOK_TOLERANCE_SECONDS ?? 300);
    this.leaseMs = Number(process.env.PROCESSOR_EVENT_LEASE_MS ?? 60_000);
  },

  actions: {
    /** `POST /api/v1/webhooks/processor`, with the raw body and the `Stripe-Signature` header. */
    handleWebhook: {
      visibility: "public",
      async handler(ctx: Context) {
        const { payload, signature } = parseInput(WebhookInput, ctx.params);
        if (!this.webhookSecret) throw new ServiceUnavailableError("Processor webhooks are not configured: set PROCESSOR_WEBHOOK_SECRET.");
        let event: Stripe.Event;
        try {
          event = Stripe.webhooks.constructEvent(payload, signature ?? "", this.webhookSecret, this.toleranceSeconds);
          // The library refuses only old timestamps; one further ahead than the tolerance is refused too, so a
          // captured delivery can never be replayed for longer than the tolerance.
          const t = Number(/(?:^|,)\s*t=(\d+)/.exec(signature ?? "")?.[1]);
          if (t > Date.now() / 1000 + this.toleranceSeconds) throw new Error("Timestamp is in the future, outside the tolerance zone");
        } catch (err) {
          throw new AppError("invalid_signature", `The Stripe-Signature header does not verify: ${(err as Error).message.split(".")[0]}.`);
        }

        const handler = HANDLERS[event.type];
        if (!handler) return { received: true, handled: false, reason: `event type '${event.type}' is not used` };
        if (!event.account) return { received: true, handled: false, reason: "not an event of a connected account" };
        const program = await ctx.call<Jsonified<Program> | null, unknown>("programs.findByProcessorAccount", { accountId: event.account });
        if (!program) return { received: true, handled: false, reason: `no program is connected to account '${event.account}'` };
        if (!event.livemode && this.liveMode && !program.testMode) {
          return { received: true, handled: false, reason: "test-mode event for a live program" };
        }

        const now = new Date();
        const { claimed, event: stored } = await this.repo.claimEvent({ eventId: event.id, type: event.type, programId: program.id }, this.leaseMs, now);
        if (!claimed) {
          if (stored.status === "processed" || stored.status === "ignored") return { received: true, duplicate: true, status: stored.status };
          throw new ConflictError(`Event '${event.id}' is being processed by another instance; retry later.`);
        }
        try {
          const result = await handler({ ctx, repo: this.repo, program, event });
          await this.repo.finishEvent(event.id, result.status, result.outcome, new Date());
          return { received: true, handled: result.status === "processed", ...result.outcome };
        } catch (err) {
          await this.repo.releaseEvent(event.id, String((err as Error).message ?? err));
          if (!(err instanceof RetryLaterError)) this.logger.warn(`Processor event ${event.id} (${event.type}) failed; released for retry.`, err);
          throw new ServiceUnavailableError(`Event '${event.id}' could not be processed yet (${(err as Error).message}); the processor will retry it.`);
        }
      },
    },

    getEvent: {
      async handler(ctx: Context) {
        const { eventId } = parseInput(z.object({ eventId: z.string().min(1).max(255) }), ctx.params);
        return this.repo.getEvent(eventId);
      },
    },
  },
};

export default ProcessorService;
